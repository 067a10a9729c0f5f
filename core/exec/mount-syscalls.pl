# The tmpfs mounter's helper program (core/exec/mount-syscalls.ts): mount(2) and umount2(2)
# through Perl's `syscall`, and nodelet's mkdirs / mount-new / write-file / umount-mounted, for
# one long-lived process instead of a fork and exec of `mount` per call. The line protocol and
# each command's answers are described in mount-syscalls.ts, which starts this program as
# `perl mount-syscalls.pl <mount(2) number> <umount2(2) number> <MNT_DETACH>`.
use strict;
use warnings;
use Fcntl qw(O_WRONLY O_CREAT O_TRUNC);
my ($sys_mount, $sys_umount2, $detach) = @ARGV;
# The lines nodelet wrote at once are read at once and answered in one write, when no whole
# line is left: one wake-up of nodelet per batch, not one per answer.
my ($in, $answers) = ('', '');
for (;;) {
  my $nl = index($in, "\n");
  if ($nl < 0) {
    answer();
    my $n = sysread(STDIN, $in, 65536, length($in));
    last if !$n;
    next;
  }
  my ($st, $out) = run(substr($in, 0, $nl));
  $in = substr($in, $nl + 1);
  $answers .= sprintf("%d %d\n%s\n", $st, length($out), $out);
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
