/**
 * The failure answer of a `mount-syscalls.ts` command of nodelet's own (`mkdirs`, `write-file`):
 * `<command>: <path>: <errno number> <strerror>`, read back as Node's fs errors name it.
 */
import { constants } from 'node:os';

/** Errno names by number (`os.constants.errno`). */
const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));

/** A failed helper command's path, errno name (`ENOTDIR`, …; `EIO` when unknown) and strerror text. */
export interface HelperErrno {
  readonly path: string;
  readonly errnoCode: string;
  readonly strerror: string;
}

/** The errno answer of `command` carried by a helper call's rejection `e`, or undefined for any other failure. */
export function helperErrno(e: unknown, command: string): HelperErrno | undefined {
  const text = String((e as { stderr?: string }).stderr ?? '').trim();
  if (!text.startsWith(`${command}: `)) return undefined;
  const m = /^(.*): (\d+) (.*)$/s.exec(text.slice(command.length + 2));
  if (!m) return undefined;
  return { path: m[1]!, errnoCode: ERRNO_NAMES.get(Number(m[2])) ?? 'EIO', strerror: m[3]! };
}
