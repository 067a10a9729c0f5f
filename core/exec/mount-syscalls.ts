/**
 * `mount -t <type> -o <options> <source> <dir>`, `umount <dir>` and `umount -l <dir>` as
 * mount(2) and umount2(2) calls made by one long-lived Perl process, for the helper
 * shell of the tmpfs mounter (`core/volumes/tmpfs.ts`). Every pod's service-account
 * token volume is a tmpfs: through `/bin/sh`, each mount and unmount is a fork and exec
 * of util-linux's `mount` (~2.6 ms of CPU each, measured: 100 mounts in 259 ms, and
 * 100 more unmounts), run one after another, so a 100-pod burst queued ~0.5 s behind
 * its mounts on two cores. As system calls, 100 mounts take 6 ms (bench/README.md,
 * issue 17, "Mounts without a fork").
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
import type { HelperProgram } from './helper-shell.ts';
import { findPerl } from './perl.ts';

/** mount(2) and umount2(2) by CPU (Linux's unistd tables: x86_64 165/166, the generic one of arm64 40/39). */
const SYSCALLS: Partial<Record<NodeJS.Architecture, { mount: number; umount2: number }>> = {
  x64: { mount: 165, umount2: 166 },
  arm64: { mount: 40, umount2: 39 },
};

/** umount2's MNT_DETACH (`umount -l`). */
const MNT_DETACH = 2;

const PERL = `
use strict;
use Fcntl qw(O_WRONLY O_CREAT O_TRUNC);
my ($sys_mount, $sys_umount2, $detach) = @ARGV;
# The lines nodelet wrote at once are read at once and answered in one write, when no whole
# line is left: one wake-up of nodelet per batch, not one per answer.
my ($in, $answers) = ('', '');
for (;;) {
  my $nl = index($in, "\\n");
  if ($nl < 0) {
    answer();
    my $n = sysread(STDIN, $in, 65536, length($in));
    last if !$n;
    next;
  }
  my ($st, $out) = run(substr($in, 0, $nl));
  $in = substr($in, $nl + 1);
  $answers .= sprintf("%d %d\\n%s\\n", $st, length($out), $out);
}
answer();
sub answer {
  while (length($answers) > 0) {
    my $n = syswrite(STDOUT, $answers);
    exit(1) if !defined($n);
    substr($answers, 0, $n) = '';
  }
}
# One line: (status, output).
sub run {
  my @w = map { pack('H*', $_) } split(/ /, $_[0]);
  my $cmd = shift(@w) // '';
  if ($cmd eq 'mkdirs' && @w >= 2 && $w[0] =~ /^[0-7]{1,4}$/) {
    return mkdirs(oct($w[0]), @w[1 .. $#w]);
  }
  if ($cmd eq 'mount-new' && @w == 7 && $w[0] =~ /^[0-7]{1,4}$/ && $w[1] eq '-t' && $w[3] eq '-o') {
    my ($type, $data, $src, $d) = ($w[2], $w[4], $w[5], $w[6]);
    my ($st, $out) = mkdirs(oct($w[0]), $d);
    if ($st == 0 && $out ne '-' && syscall($sys_mount, $src, $d, $type, 0, $data) < 0) {
      ($st, $out) = (32, "mount: $d: $!");
    }
    return ($st, $out);
  }
  if ($cmd eq 'umount-mounted' && @w == 1) {
    return (0, '+') if syscall($sys_umount2, $w[0], 0) >= 0;
    return (0, '-') if $!{EINVAL} || $!{ENOENT};
    return (32, "umount: $w[0]: $!");
  }
  if ($cmd eq 'write-file' && @w == 3 && $w[0] =~ /^[0-7]{1,4}$/) {
    return write_file(oct($w[0]), $w[1], $w[2]);
  }
  my ($r, $dir) = (undef, '');
  if ($cmd eq 'mount' && @w == 6 && $w[0] eq '-t' && $w[2] eq '-o') {
    my ($type, $data, $src) = ($w[1], $w[3], $w[4]);
    $dir = $w[5];
    $r = syscall($sys_mount, $src, $dir, $type, 0, $data);
  } elsif ($cmd eq 'umount' && @w == 1) {
    $dir = $w[0];
    $r = syscall($sys_umount2, $dir, 0);
  } elsif ($cmd eq 'umount' && @w == 2 && $w[0] eq '-l') {
    $dir = $w[1];
    $r = syscall($sys_umount2, $dir, $detach + 0);
  }
  return !defined($r) ? (2, "unsupported: $cmd " . join(' ', @w)) : $r < 0 ? (32, "$cmd: $dir: $!") : (0, '');
}
# Every missing level of each dir, top down; per dir the hex of the first level made, or '-'.
sub mkdirs {
  my ($mode, @dirs) = @_;
  my @made;
  for my $d (@dirs) {
    my ($first, $p) = ('-', '');
    my @parts = split(m{/}, $d, -1);
    for my $i (0 .. $#parts) {
      my $part = $parts[$i];
      $p = ($p eq '' && $part eq '') ? '/' : $p eq '/' ? "/$part" : $p eq '' ? $part : "$p/$part";
      next if $part eq '' || -d $p;
      if (mkdir($p, $mode)) {
        $first = unpack('H*', $p) if $first eq '-';
      } elsif (!($!{EEXIST} && (-d $p || $i < $#parts))) {
        # A file in the way of a deeper level fails there, as ENOTDIR (what Node's mkdir -p answers).
        return (1, sprintf('mkdirs: %s: %d %s', $p, $! + 0, $!));
      }
    }
    push(@made, $first);
  }
  return (0, join(' ', @made));
}
# data to <file>.tmp, then renamed over file; the temporary file is removed after a failure.
sub write_file {
  my ($mode, $f, $data) = @_;
  my ($tmp, $fh, $at) = ("$f.tmp", undef, 0);
  sysopen($fh, $tmp, O_WRONLY | O_CREAT | O_TRUNC, $mode) or return (1, sprintf('write-file: %s: %d %s', $tmp, $! + 0, $!));
  while ($at < length($data)) {
    my $n = syswrite($fh, $data, length($data) - $at, $at);
    if (!defined($n)) {
      my ($no, $text) = ($! + 0, "$!");
      close($fh);
      unlink($tmp);
      return (1, sprintf('write-file: %s: %d %s', $tmp, $no, $text));
    }
    $at += $n;
  }
  if (!close($fh) || !rename($tmp, $f)) {
    my ($no, $text) = ($! + 0, "$!");
    unlink($tmp);
    return (1, sprintf('write-file: %s: %d %s', $f, $no, $text));
  }
  return (0, '');
}
`;

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
    argv: [perl, '-e', PERL, String(nr.mount), String(nr.umount2), String(MNT_DETACH)],
    line: (command, args) => `${[command, ...args].map(hex).join(' ')}\n`,
  };
}
