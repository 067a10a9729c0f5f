# The pod network's helper program (core/network/addr-netlink.ts): `ip addr replace|del` as
# rtnetlink messages on one socket of one long-lived process, instead of a fork and exec of
# iproute2's `ip` per pod IP. The line protocol and the answers are described in
# addr-netlink.ts, which starts this program as `perl addr-netlink.pl`.
use strict;
use warnings;
use Socket qw(inet_pton AF_INET AF_INET6);
$| = 1;
my ($AF_NETLINK, $SOCK_RAW, $NETLINK_ROUTE) = (16, 3, 0);
my ($nl, $seq) = (undef, 0);
sub rta {
  my ($type, $data) = @_;
  my $len = 4 + length($data);
  return pack('SS', $len, $type) . $data . ("\0" x ((4 - $len % 4) % 4));
}
sub call {
  my @w = @_;
  my $n = @w;
  return (2, 'unsupported: ip ' . join(' ', @w))
    unless ($n == 5 || ($n == 6 && $w[5] eq 'nodad')) && $w[0] eq 'addr' && ($w[1] eq 'replace' || $w[1] eq 'del') && $w[3] eq 'dev';
  my ($op, $cidr, $dev) = @w[1, 2, 4];
  my $bad = qq{Error: inet prefix is expected rather than "$cidr".};
  my ($addr, $plen) = $cidr =~ m{^([0-9A-Fa-f.:]+)/([0-9]{1,3})$} or return (1, $bad);
  my ($family, $bin, $max) = (AF_INET, inet_pton(AF_INET, $addr), 32);
  ($family, $bin, $max) = (AF_INET6, inet_pton(AF_INET6, $addr), 128) unless defined $bin;
  return (1, $bad) unless defined $bin && $plen <= $max;
  my $nodev = qq{Cannot find device "$dev"};
  return (1, $nodev) unless $dev =~ m{^[^/\s]{1,15}$} && $dev ne '.' && $dev ne '..';
  open(my $f, '<', "/sys/class/net/$dev/ifindex") or return (1, $nodev);
  my $index = <$f>;
  close($f);
  return (1, $nodev) unless defined $index && $index =~ /^(\d+)\s*$/;
  $index = $1;
  unless ($nl) {
    socket($nl, $AF_NETLINK, $SOCK_RAW, $NETLINK_ROUTE) or do { my $e = "$!"; undef $nl; return (2, "Cannot open netlink socket: $e") };
  }
  $seq++;
  my $new = $op eq 'replace';
  my $body = pack('CCCCL', $family, $plen, ($n == 6 ? 0x02 : 0), 0, $index) . rta(2, $bin) . rta(1, $bin);
  my $msg = pack('LSSLL', 16 + length($body), $new ? 20 : 21, 0x1 | 0x4 | ($new ? 0x400 | 0x100 : 0), $seq, 0) . $body;
  defined(send($nl, $msg, 0, pack('SSLL', $AF_NETLINK, 0, 0, 0))) or return (2, "Cannot talk to rtnetlink: $!");
  for (;;) {
    my $buf = '';
    defined(recv($nl, $buf, 65536, 0)) or return (2, "Cannot talk to rtnetlink: $!");
    while (length($buf) >= 16) {
      my ($len, $type, $flags, $s) = unpack('LSSL', $buf);
      last if $len < 16 || $len > length($buf);
      my $m = substr($buf, 0, $len);
      my $next = ($len + 3) & ~3;
      $buf = $next < length($buf) ? substr($buf, $next) : '';
      next unless $s == $seq && $type == 2 && $len >= 20;
      my $err = unpack('l', substr($m, 16, 4));
      return (0, '') if $err == 0;
      $! = -$err;
      return (2, "RTNETLINK answers: $!");
    }
  }
}
while (defined(my $line = <STDIN>)) {
  chomp $line;
  my ($st, $out) = call(map { pack('H*', substr($_, 1)) } split(/ /, $line));
  printf("%d %d\n%s\n", $st, length($out), $out);
}
