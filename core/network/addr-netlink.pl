# The pod network's helper program (core/network/addr-netlink.ts): `ip addr replace|del` and
# `ip route add|replace|del` as rtnetlink messages on one socket of one long-lived process,
# instead of a fork and exec of iproute2's `ip` per call. The line protocol and the answers are
# described in addr-netlink.ts, which starts this program as `perl addr-netlink.pl`.
use strict;
use warnings;
use Socket qw(inet_pton AF_INET AF_INET6 SOCK_DGRAM);
$| = 1;
my ($AF_NETLINK, $SOCK_RAW, $NETLINK_ROUTE) = (16, 3, 0);
my ($nl, $seq) = (undef, 0);
sub rta {
  my ($type, $data) = @_;
  my $len = 4 + length($data);
  return pack('SS', $len, $type) . $data . ("\0" x ((4 - $len % 4) % 4));
}
# An address with a prefix: (family, address bytes, prefix length), or () when it is none.
sub prefix {
  my ($cidr) = @_;
  my ($addr, $plen) = $cidr =~ m{^([0-9A-Fa-f.:]+)/([0-9]{1,3})$} or return ();
  my ($family, $bin, $max) = (AF_INET, inet_pton(AF_INET, $addr), 32);
  ($family, $bin, $max) = (AF_INET6, inet_pton(AF_INET6, $addr), 128) unless defined $bin;
  return () unless defined $bin && $plen <= $max;
  return ($family, $bin, $plen);
}
# The index of interface $dev in this process's network namespace (SIOCGIFINDEX on a datagram
# socket, as if_nametoindex(3) does; /sys/class/net shows the namespace /sys was mounted in), or 0.
sub ifindex {
  my ($dev) = @_;
  socket(my $s, AF_INET, SOCK_DGRAM, 0) or return 0;
  my $ifr = pack('a16 x24', $dev);
  my $ok = ioctl($s, 0x8933, $ifr);
  close($s);
  return $ok ? unpack('x16 i', $ifr) : 0;
}
# Sends one request and waits for its acknowledgement: (0, '') or (2, 'RTNETLINK answers: <strerror>').
sub request {
  my ($type, $flags, $body) = @_;
  unless ($nl) {
    socket($nl, $AF_NETLINK, $SOCK_RAW, $NETLINK_ROUTE) or do { my $e = "$!"; undef $nl; return (2, "Cannot open netlink socket: $e") };
  }
  $seq++;
  my $msg = pack('LSSLL', 16 + length($body), $type, 0x1 | 0x4 | $flags, $seq, 0) . $body;
  defined(send($nl, $msg, 0, pack('SSLL', $AF_NETLINK, 0, 0, 0))) or return (2, "Cannot talk to rtnetlink: $!");
  for (;;) {
    my $buf = '';
    defined(recv($nl, $buf, 65536, 0)) or return (2, "Cannot talk to rtnetlink: $!");
    while (length($buf) >= 16) {
      my ($len, $mtype, $mflags, $s) = unpack('LSSL', $buf);
      last if $len < 16 || $len > length($buf);
      my $m = substr($buf, 0, $len);
      my $next = ($len + 3) & ~3;
      $buf = $next < length($buf) ? substr($buf, $next) : '';
      next unless $s == $seq && $mtype == 2 && $len >= 20;
      my $err = unpack('l', substr($m, 16, 4));
      return (0, '') if $err == 0;
      $! = -$err;
      return (2, "RTNETLINK answers: $!");
    }
  }
}
# addr replace|del <cidr> dev <if> [nodad]
sub addr {
  my @w = @_;
  my ($op, $cidr, $dev) = @w[1, 2, 4];
  my ($family, $bin, $plen) = prefix($cidr) or return (1, qq{Error: inet prefix is expected rather than "$cidr".});
  my $nodev = qq{Cannot find device "$dev"};
  return (1, $nodev) unless $dev =~ m{^[^/\s]{1,15}$} && $dev ne '.' && $dev ne '..';
  my $index = ifindex($dev) or return (1, $nodev);
  my $new = $op eq 'replace';
  my $body = pack('CCCCL', $family, $plen, (@w == 6 ? 0x02 : 0), 0, $index) . rta(2, $bin) . rta(1, $bin);
  return request($new ? 20 : 21, $new ? 0x400 | 0x100 : 0, $body);
}
# route add|replace <cidr> via <gateway> proto <n>, route del <cidr> proto <n>: the main table.
sub route {
  my @w = @_;
  my ($op, $cidr) = @w[1, 2];
  my ($family, $bin, $plen) = prefix($cidr) or return (1, qq{Error: inet prefix is expected rather than "$cidr".});
  my $proto = $w[-1];
  return (1, qq{Error: "$proto" is not a route protocol number.}) unless $proto =~ /^[0-9]{1,3}$/ && $proto >= 1 && $proto <= 255;
  # rtmsg: family, dst_len, src_len, tos, table (main), protocol, scope, type, flags.
  if ($op eq 'del') {
    # As iproute2 deletes: scope "nowhere" and type unspecified match any; the protocol must be ours.
    return request(25, 0, pack('CCCCCCCCL', $family, $plen, 0, 0, 254, $proto, 255, 0, 0) . rta(1, $bin));
  }
  my $gw = $w[4];
  my $gbin = inet_pton($family, $gw);
  return (1, qq{Error: inet address is expected rather than "$gw".}) unless defined $gbin;
  # add: NLM_F_CREATE|NLM_F_EXCL (a route to the prefix already there fails: File exists); replace: NLM_F_CREATE|NLM_F_REPLACE.
  my $flags = $op eq 'add' ? 0x400 | 0x200 : 0x400 | 0x100;
  my $body = pack('CCCCCCCCL', $family, $plen, 0, 0, 254, $proto, 0, 1, 0) . rta(1, $bin) . rta(5, $gbin);
  return request(24, $flags, $body);
}
sub call {
  my @w = @_;
  my $n = @w;
  return addr(@w) if ($n == 5 || ($n == 6 && $w[5] eq 'nodad')) && $w[0] eq 'addr' && ($w[1] eq 'replace' || $w[1] eq 'del') && $w[3] eq 'dev';
  return route(@w) if $n == 7 && $w[0] eq 'route' && ($w[1] eq 'add' || $w[1] eq 'replace') && $w[3] eq 'via' && $w[5] eq 'proto';
  return route(@w) if $n == 5 && $w[0] eq 'route' && $w[1] eq 'del' && $w[3] eq 'proto';
  return (2, 'unsupported: ip ' . join(' ', @w));
}
while (defined(my $line = <STDIN>)) {
  chomp $line;
  my ($st, $out) = call(map { pack('H*', substr($_, 1)) } split(/ /, $line));
  printf("%d %d\n%s\n", $st, length($out), $out);
}
