/**
 * `mount -t <type> -o <options> <source> <dir>`, `umount <dir>` and `umount -l <dir>` as
 * mount(2) and umount2(2) calls made by one long-lived Perl process, for the helper
 * shell of the tmpfs mounter (`core/volumes/tmpfs.ts`). Every pod's service-account
 * token volume is a tmpfs: through `/bin/sh`, each mount and unmount is a fork and exec
 * of util-linux's `mount` (~2.6 ms of CPU each, measured: 100 mounts in 259 ms, and
 * 100 more unmounts), run one after another, so a 100-pod burst queued ~0.5 s behind
 * its mounts on two cores. As system calls, 100 mounts take 6 ms (bench/README.md,
 * "Mounts without a fork").
 *
 * Why Perl: Node.js has no binding for mount(2); a native addon needs a compiler where
 * nodelet is installed; Perl's `syscall` builtin makes the call and `perl-base` is an
 * essential package of Debian and Ubuntu (no npm package mounts without one of those).
 * Where there is no `perl`, or the CPU is neither x64 nor arm64 (the system call numbers
 * below), the tmpfs mounter keeps `/bin/sh` and util-linux's `mount`.
 *
 * What the kernel gets is what `mount` gives it for these arguments: source, target,
 * type, no flags, and the `-o` options as the filesystem's data (tmpfs's `mode=` and
 * `size=` are not mount flags). Any other argument list is refused (status 2), never
 * approximated. A failed call answers status 32 (`mount`'s "mount failure") with
 * `<command>: <dir>: <strerror>`.
 *
 * One command is nodelet's own, for `dir-maker.ts`: `mkdirs <mode> <dir>…` makes every
 * missing level of each dir with mkdir(2) and `mode` (octal; the umask applies), as
 * Node's `mkdir(dir, { recursive: true, mode })` does, and answers, per dir, the hex of
 * the first level it made or `-` (nothing made). A failure answers status 1 with
 * `mkdirs: <dir>: <errno number> <strerror>`; the dirs before it were made. Another,
 * `mount-new <mode> -t <type> -o <options> <source> <dir>`, is `mkdirs <mode> <dir>` and then,
 * only when the dir itself was made now, the `mount` above, in one round trip: it answers
 * what `mkdirs` answers (`-`: the dir was there, nothing was mounted; the caller checks the
 * mount table), or what a failed `mkdirs` or `mount` answers. A third, for `file-writer.ts`:
 * `write-file <mode> <file> <data>` writes `data` to `<file>.tmp` (created with `mode`, the
 * umask applies; truncated if it was there) and renames it over `file`, so a crash leaves the
 * old file or the new one; it answers nothing, or status 1 with
 * `write-file: <path>: <errno number> <strerror>` (the temporary file is removed then).
 * A fourth, for the tmpfs mounter's tear-down: `umount-mounted <dir>` is the `umount <dir>`
 * above that answers `-` (status 0) where umount2(2) says the dir is no mount point
 * (EINVAL) or is not there (ENOENT), and `+` when it unmounted: the caller needs no read of
 * the mount table, which has a line per mounted volume of the node (one read per volume
 * torn down was O(pods) each, O(pods²) for a node's pods). A busy mount (or any other
 * failure) answers as `umount` does.
 *
 *   line in:  hex(command) hex(arg1) … hex(argN)\n      (hex: any byte in a path is safe)
 *   answer:   <status> <bytes>\n<output>\n                (as the helper shell answers)
 */
import { fileURLToPath } from 'node:url';
import type { HelperProgram } from './helper-shell.ts';
import { findPerl } from './perl.ts';

/** mount(2) and umount2(2) by CPU (Linux's unistd tables: x86_64 165/166, the generic one of arm64 40/39). */
const SYSCALLS: Partial<Record<NodeJS.Architecture, { mount: number; umount2: number }>> = {
  x64: { mount: 165, umount2: 166 },
  arm64: { mount: 40, umount2: 39 },
};

/** umount2's MNT_DETACH (`umount -l`). */
const MNT_DETACH = 2;

/** The Perl program, next to this module (`npm run build` copies it into dist/). */
const PROGRAM = fileURLToPath(new URL('./mount-syscalls.pl', import.meta.url));

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** Options of {@link mountSyscalls} (tests). */
export interface MountSyscallsOptions {
  /** Default `/usr/bin/perl`. */
  readonly perl?: string;
  /** Default `process.arch`. */
  readonly arch?: NodeJS.Architecture;
}

/**
 * The helper program that mounts and unmounts with system calls, or undefined when this
 * host cannot (no `perl`, or another CPU): the caller then runs `mount` through `/bin/sh`.
 */
export function mountSyscalls(o: MountSyscallsOptions = {}): HelperProgram | undefined {
  const nr = SYSCALLS[o.arch ?? process.arch];
  const perl = nr && findPerl(o.perl);
  if (!nr || !perl) return undefined;
  return {
    argv: [perl, PROGRAM, String(nr.mount), String(nr.umount2), String(MNT_DETACH)],
    line: (command, args) => `${[command, ...args].map(hex).join(' ')}\n`,
  };
}
