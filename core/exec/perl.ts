/**
 * The `perl` that helper programs run on (`mount-syscalls.ts`, the pod network's
 * `addr-netlink.ts`): `perl-base` is an essential package of Debian and Ubuntu.
 */
import { accessSync, constants } from 'node:fs';

/** `path` (default `/usr/bin/perl`) when it is an executable, else undefined (the caller falls back to a shell). */
export function findPerl(path = '/usr/bin/perl'): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}
