/**
 * core/network/host-routes.ts: the `ip` arguments and answers with a fake, then (as root) the
 * real helper against the kernel, inside a network namespace of the test's own.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { helperShell } from '../../../core/exec/helper-shell.ts';
import { addrNetlink, isNetlinkCall } from '../../../core/network/addr-netlink.ts';
import { hostRouteTable, ROUTE_PROTOCOL } from '../../../core/network/host-routes.ts';
import type { IpCommand } from '../../../core/network/pod-interface.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** A fake `ip`: records the calls, answers from `answer` (a thrown error carries `stderr`, as the helpers' do). */
function fakeIp(answer: (args: readonly string[]) => string | { stderr: string }) {
  const calls: string[] = [];
  const ip: IpCommand = async (args) => {
    calls.push(args.join(' '));
    const a = answer(args);
    if (typeof a === 'string') return a;
    throw Object.assign(new Error('ip exited 2'), a);
  };
  return { ip, calls };
}

describe('hostRouteTable', () => {
  it("lists nodelet's IPv4 and IPv6 routes (protocol 213, main table) and canonicalises them", async () => {
    const { ip, calls } = fakeIp((args) =>
      args.includes('-4')
        ? '[{"dst":"10.244.2.0/24","gateway":"192.0.2.11","dev":"eth0","flags":[]},{"dst":"10.9.9.9","gateway":"192.0.2.12","flags":[]},{"dst":"10.8.0.0/16","dev":"eth0","flags":[]}]\n'
        : '[{"dst":"fd10:244:2::/64","gateway":"fd00::11","dev":"eth0","metric":1024,"flags":[]}]\n',
    );
    expect(await hostRouteTable(ip).list()).toEqual([
      { dst: '10.244.2.0/24', via: '192.0.2.11' },
      { dst: '10.9.9.9/32', via: '192.0.2.12' },
      { dst: 'fd10:244:2::/64', via: 'fd00::11' },
    ]);
    expect(calls).toEqual(['-j -4 route show table main proto 213', '-j -6 route show table main proto 213']);
    expect(ROUTE_PROTOCOL).toBe(213);
  });

  it("adds with 'exists' for someone else's route, replaces, deletes only its protocol's, takes 'not there' for done", async () => {
    const { ip, calls } = fakeIp((args) => {
      if (args[1] === 'add' && args[2] === '10.1.0.0/24') return { stderr: 'RTNETLINK answers: File exists' };
      if (args[1] === 'del' && args[2] === '10.3.0.0/24') return { stderr: 'RTNETLINK answers: No such process' };
      if (args[1] === 'add' && args[2] === '10.4.0.0/24') return { stderr: 'RTNETLINK answers: Network is unreachable' };
      return '';
    });
    const t = hostRouteTable(ip);
    expect(await t.add({ dst: '10.1.0.0/24', via: '192.0.2.11' })).toBe('exists');
    expect(await t.add({ dst: '10.2.0.0/24', via: '192.0.2.11' })).toBe('added');
    await t.replace({ dst: '10.2.0.0/24', via: '192.0.2.12' });
    await t.remove('10.2.0.0/24');
    await t.remove('10.3.0.0/24');
    await expect(t.add({ dst: '10.4.0.0/24', via: '198.51.100.1' })).rejects.toMatchObject({
      code: 'NDL_NETWORK_ROUTE',
      message: expect.stringContaining('add a route to 10.4.0.0/24 via 198.51.100.1: RTNETLINK answers: Network is unreachable'),
    });
    expect(calls).toEqual([
      'route add 10.1.0.0/24 via 192.0.2.11 proto 213',
      'route add 10.2.0.0/24 via 192.0.2.11 proto 213',
      'route replace 10.2.0.0/24 via 192.0.2.12 proto 213',
      'route del 10.2.0.0/24 proto 213',
      'route del 10.3.0.0/24 proto 213',
      'route add 10.4.0.0/24 via 198.51.100.1 proto 213',
    ]);
    // Each of them is one the netlink helper runs (no fork), listing is not.
    expect(calls.every((c) => isNetlinkCall(c.split(' ')))).toBe(true);
    expect(isNetlinkCall('-j -4 route show table main proto 213'.split(' '))).toBe(false);
  });

  // Needs CAP_NET_ADMIN to make a network namespace (the suite runs as root in CI).
  it.skipIf(process.getuid?.() !== 0)(
    "as root, in a network namespace of the test's own: the netlink helper adds, replaces and deletes IPv4 and IPv6 routes as ip does, and never another protocol's (skipped when not root: needs CAP_NET_ADMIN)",
    async () => {
      const ns = `ndlu-${process.pid}-routes`;
      const inNs = (...args: string[]) => execFileSync('ip', ['-n', ns, ...args], { encoding: 'utf8' });
      execFileSync('ip', ['netns', 'add', ns]);
      cleanups.push(() => execFileSync('ip', ['netns', 'del', ns]));
      inNs('link', 'set', 'lo', 'up');
      inNs('link', 'add', 'lan0', 'type', 'bridge');
      inNs('link', 'set', 'lan0', 'up');
      inNs('addr', 'add', '198.51.100.10/24', 'dev', 'lan0');
      inNs('addr', 'add', 'fd00:51::10/64', 'dev', 'lan0', 'nodad');
      // The operator's own route to a pod CIDR (protocol static).
      inNs('route', 'add', '10.9.7.0/24', 'via', '198.51.100.30', 'proto', 'static');
      const program = addrNetlink()!;
      const nl = helperShell({ errorCode: 'NDL_NETWORK_ROUTE', program: { ...program, argv: ['ip', 'netns', 'exec', ns, ...program.argv] }, size: 1 });
      cleanups.push(nl.close);
      const viaShell: string[] = [];
      const ip: IpCommand = async (args) => {
        if (isNetlinkCall(args)) return nl('ip', args);
        viaShell.push(args.join(' '));
        return inNs(...args);
      };
      const t = hostRouteTable(ip);
      expect(await t.add({ dst: '10.9.1.0/24', via: '198.51.100.11' })).toBe('added');
      expect(await t.add({ dst: 'fd10:9:1::/64', via: 'fd00:51::11' })).toBe('added');
      expect(await t.add({ dst: '10.9.7.0/24', via: '198.51.100.11' })).toBe('exists');
      // A gateway on no subnet of this host: the kernel's refusal.
      await expect(t.add({ dst: '10.9.2.0/24', via: '203.0.113.5' })).rejects.toMatchObject({ code: 'NDL_NETWORK_ROUTE' });
      expect(await t.list()).toEqual([
        { dst: '10.9.1.0/24', via: '198.51.100.11' },
        { dst: 'fd10:9:1::/64', via: 'fd00:51::11' },
      ]);
      expect(viaShell).toEqual(['-j -4 route show table main proto 213', '-j -6 route show table main proto 213']);
      // The kernel holds them as `ip route add … proto 213` makes them.
      expect(inNs('route', 'show', '10.9.1.0/24')).toBe('10.9.1.0/24 via 198.51.100.11 dev lan0 proto 213 \n');
      expect(inNs('-6', 'route', 'show', 'fd10:9:1::/64')).toMatch(/^fd10:9:1::\/64 via fd00:51::11 dev lan0 proto 213 metric 1024/);

      await t.replace({ dst: '10.9.1.0/24', via: '198.51.100.12' });
      await t.replace({ dst: 'fd10:9:1::/64', via: 'fd00:51::12' });
      expect(await t.list()).toEqual([
        { dst: '10.9.1.0/24', via: '198.51.100.12' },
        { dst: 'fd10:9:1::/64', via: 'fd00:51::12' },
      ]);
      // Deleting by protocol: the operator's route to 10.9.7.0/24 stays, a second delete is done already.
      await t.remove('10.9.7.0/24');
      await t.remove('10.9.1.0/24');
      await t.remove('10.9.1.0/24');
      await t.remove('fd10:9:1::/64');
      expect(await t.list()).toEqual([]);
      expect(inNs('route', 'show', '10.9.7.0/24')).toBe('10.9.7.0/24 via 198.51.100.30 dev lan0 proto static \n');
    },
  );
});
