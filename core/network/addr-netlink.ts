/**
 * `ip addr replace <addr>/<prefix> dev <if> [nodad]` and `ip addr del <addr>/<prefix> dev <if>`
 * as rtnetlink messages (RTM_NEWADDR with NLM_F_CREATE|NLM_F_REPLACE, RTM_DELADDR) sent by one
 * long-lived Perl process, for the pod network's helper (`ip-shell.ts`). Each pod start puts
 * its IP on the pod bridge and each deletion takes it off: through `/bin/sh`, that is a fork and
 * exec of iproute2's `ip` per pod (100 in 229 ms on an idle machine, ~2.3 ms each), on the two
 * cores a burst shares with the control plane. As messages on one netlink socket, 100 take
 * ~25 ms including Perl's start (bench/README.md, issue 17, "Pod IPs without a fork").
 *
 * Why Perl: Node.js has no netlink socket, the npm netlink packages are native addons or
 * unmaintained (`pod-interface.ts`), and `perl-base` (with its `Socket` module) is an essential
 * package of Debian and Ubuntu. Where there is no `perl`, every `ip` call goes through `/bin/sh`.
 *
 * The message is what iproute2 sends for these arguments: the ifaddrmsg (family, prefix, flags
 * `IFA_F_NODAD` for `nodad`, scope universe, the interface's index from
 * `/sys/class/net/<if>/ifindex`) with `IFA_LOCAL` and `IFA_ADDRESS` both the address, and an
 * acknowledgement asked for. Answers as `ip` answers (exit status, text): 0 and nothing;
 * 1 `Cannot find device "<if>"`; 1 `Error: inet prefix is expected rather than "<arg>".`;
 * 2 `RTNETLINK answers: <strerror>` for the kernel's error (e.g. `Cannot assign requested
 * address` when deleting an address that is not there). Any other argument list is refused
 * (status 2, `unsupported: ip …`); the caller sends those to `/bin/sh`.
 *
 *   line in:  x<hex(arg1)> … x<hex(argN)>\n             (`ip`'s arguments; hex: any byte is safe; x: an empty one too)
 *   answer:   <status> <bytes>\n<output>\n                (as the helper shell answers)
 */
import { findPerl, type HelperProgram } from '../exec/index.ts';

const PERL = `
use strict;
use Socket qw(inet_pton AF_INET AF_INET6);
$| = 1;
my ($AF_NETLINK, $SOCK_RAW, $NETLINK_ROUTE) = (16, 3, 0);
my ($nl, $seq) = (undef, 0);
sub rta {
  my ($type, $data) = @_;
  my $len = 4 + length($data);
  return pack('SS', $len, $type) . $data . ("\\0" x ((4 - $len % 4) % 4));
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
  return (1, $nodev) unless $dev =~ m{^[^/\\s]{1,15}$} && $dev ne '.' && $dev ne '..';
  open(my $f, '<', "/sys/class/net/$dev/ifindex") or return (1, $nodev);
  my $index = <$f>;
  close($f);
  return (1, $nodev) unless defined $index && $index =~ /^(\\d+)\\s*$/;
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
  printf("%d %d\\n%s\\n", $st, length($out), $out);
}
`;

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** True for the argument lists the netlink helper runs: `addr replace|del <cidr> dev <if> [nodad]`. */
export function isAddrChange(args: readonly string[]): boolean {
  return (
    (args.length === 5 || (args.length === 6 && args[5] === 'nodad')) && args[0] === 'addr' && (args[1] === 'replace' || args[1] === 'del') && args[3] === 'dev'
  );
}

/**
 * The helper program that puts addresses on an interface and takes them off with rtnetlink,
 * or undefined where there is no `perl` (default `/usr/bin/perl`): the caller then runs `ip`.
 */
export function addrNetlink(o: { perl?: string } = {}): HelperProgram | undefined {
  const perl = findPerl(o.perl);
  if (!perl) return undefined;
  return { argv: [perl, '-e', PERL], line: (_command, args) => `${args.map((a) => `x${hex(a)}`).join(' ')}\n` };
}
