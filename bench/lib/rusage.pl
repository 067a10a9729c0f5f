# Runs one command and prints what it cost, as wait4(2) reports it for that child alone: one JSON
# line {"status","signal","wallUs","userUs","sysUs","maxRssKiB"} on stdout. The command's stdout
# and stderr go to the files named (each may be /dev/null). Used by bench/lib/cli-run.ts:
#   perl rusage.pl <wait4(2) number> <stdout file> <stderr file> <command> [args...]
# Perl's `syscall` makes the call (no CPAN module); rusage's two timevals and ru_maxrss are read
# from the struct as 64-bit fields (Linux x86_64 and arm64).
use strict;
use warnings;
use POSIX qw(_exit);
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
my ($sys_wait4, $out, $err, @cmd) = @ARGV;
die "usage: rusage.pl <wait4 number> <stdout> <stderr> <command> [args...]\n" if !@cmd;
my $t0 = clock_gettime(CLOCK_MONOTONIC);
my $pid = fork() // die "fork: $!\n";
if ($pid == 0) {
  open(STDOUT, '>', $out) or _exit(126);
  open(STDERR, '>', $err) or _exit(126);
  exec { $cmd[0] } @cmd or _exit(127);
}
my $status = pack('i', 0);
my $ru = "\0" x 144;
my $r;
do { $r = syscall($sys_wait4 + 0, $pid, $status, 0, $ru) } while ($r < 0 && $!{EINTR});
die "wait4: $!\n" if $r < 0;
my $wall = clock_gettime(CLOCK_MONOTONIC) - $t0;
my ($st) = unpack('i', $status);
my @f = unpack('q18', $ru);
printf("{\"status\":%s,\"signal\":%s,\"wallUs\":%d,\"userUs\":%d,\"sysUs\":%d,\"maxRssKiB\":%d}\n",
  ($st & 0x7f) == 0 ? ($st >> 8) & 0xff : 'null', ($st & 0x7f) == 0 ? 'null' : $st & 0x7f,
  $wall * 1e6, $f[0] * 1e6 + $f[1], $f[2] * 1e6 + $f[3], $f[4]);
