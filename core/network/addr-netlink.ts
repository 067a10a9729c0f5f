/**
 * `ip addr replace <addr>/<prefix> dev <if> [nodad]` and `ip addr del <addr>/<prefix> dev <if>`
 * as rtnetlink messages (RTM_NEWADDR with NLM_F_CREATE|NLM_F_REPLACE, RTM_DELADDR) sent by one
 * long-lived Perl process, for the pod network's helper (`ip-shell.ts`); likewise the pod routes'
 * (`pod-routes.ts`) `ip route add|replace <cidr> via <gateway> proto <n>` (RTM_NEWROUTE in the main
 * table, NLM_F_CREATE with NLM_F_EXCL or NLM_F_REPLACE) and `ip route del <cidr> proto <n>`
 * (RTM_DELROUTE, which the kernel applies only to a route of that protocol). Each pod start puts
 * its IP on the pod bridge and each deletion takes it off: through `/bin/sh`, that is a fork and
 * exec of iproute2's `ip` per pod (100 in 229 ms on an idle machine, ~2.3 ms each), on the two
 * cores a burst shares with the control plane. As messages on one netlink socket, 100 take
 * ~25 ms including Perl's start (bench/README.md, "Pod IPs without a fork").
 *
 * Why Perl: Node.js has no netlink socket, the npm netlink packages are native addons or
 * unmaintained (`pod-interface.ts`), and `perl-base` (with its `Socket` module) is an essential
 * package of Debian and Ubuntu. Where there is no `perl`, every `ip` call goes through `/bin/sh`.
 *
 * The message is what iproute2 sends for these arguments: the ifaddrmsg (family, prefix, flags
 * `IFA_F_NODAD` for `nodad`, scope universe, the interface's index from
 * `SIOCGIFINDEX`, as if_nametoindex(3): that of nodelet's own network namespace, whichever one
 * `/sys` shows) with `IFA_LOCAL` and `IFA_ADDRESS` both the address, and an
 * acknowledgement asked for. Answers as `ip` answers (exit status, text): 0 and nothing;
 * 1 `Cannot find device "<if>"`; 1 `Error: inet prefix is expected rather than "<arg>".`;
 * 2 `RTNETLINK answers: <strerror>` for the kernel's error (e.g. `Cannot assign requested
 * address` when deleting an address that is not there, `File exists` when adding a route to a
 * prefix that has one, `No such process` when deleting a route that is not there); 1 `Error: …`
 * for a gateway or protocol number that does not parse. Any other argument list is refused
 * (status 2, `unsupported: ip …`); the caller sends those to `/bin/sh`.
 *
 *   line in:  x<hex(arg1)> … x<hex(argN)>\n             (`ip`'s arguments; hex: any byte is safe; x: an empty one too)
 *   answer:   <status> <bytes>\n<output>\n                (as the helper shell answers)
 */
import { fileURLToPath } from 'node:url';
import { findPerl, type HelperProgram } from '../exec/index.ts';

/** The Perl program, next to this module (`npm run build` copies it into dist/). */
const PROGRAM = fileURLToPath(new URL('./addr-netlink.pl', import.meta.url));

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/**
 * True for the argument lists the netlink helper runs: `addr replace|del <cidr> dev <if> [nodad]`,
 * `route add|replace <cidr> via <gateway> proto <n>` and `route del <cidr> proto <n>`.
 */
export function isNetlinkCall(args: readonly string[]): boolean {
  const [object, op] = args;
  if (object === 'addr') return (args.length === 5 || (args.length === 6 && args[5] === 'nodad')) && (op === 'replace' || op === 'del') && args[3] === 'dev';
  if (object === 'route' && (op === 'add' || op === 'replace')) return args.length === 7 && args[3] === 'via' && args[5] === 'proto';
  return object === 'route' && op === 'del' && args.length === 5 && args[3] === 'proto';
}

/**
 * The helper program that puts addresses on an interface and takes them off, and adds, replaces
 * and deletes routes, with rtnetlink,
 * or undefined where there is no `perl` (default `/usr/bin/perl`): the caller then runs `ip`.
 */
export function addrNetlink(o: { perl?: string } = {}): HelperProgram | undefined {
  const perl = findPerl(o.perl);
  if (!perl) return undefined;
  return { argv: [perl, PROGRAM], line: (_command, args) => `${args.map((a) => `x${hex(a)}`).join(' ')}\n` };
}
