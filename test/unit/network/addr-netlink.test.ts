import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { helperShell } from '../../../core/exec/helper-shell.ts';
import { addrNetlink, isNetlinkCall } from '../../../core/network/addr-netlink.ts';
import { PodInterface } from '../../../core/network/pod-interface.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function helper() {
  const program = addrNetlink();
  expect(program, 'this machine has /usr/bin/perl').toBeDefined();
  const sh = helperShell({ errorCode: 'NDL_NETWORK_INTERFACE', program, size: 1 });
  cleanups.push(sh.close);
  return (args: readonly string[]) => sh('ip', args);
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error & { stderr?: string },
  );

/** A bridge of its own, removed after the test. */
function bridge(): string {
  const name = `ndlnl${process.pid % 100000}`;
  execFileSync('ip', ['link', 'add', 'name', name, 'type', 'bridge']);
  cleanups.push(() => execFileSync('ip', ['link', 'del', name]));
  execFileSync('ip', ['link', 'set', 'dev', name, 'up']);
  return name;
}

type AddrInfo = { family: string; local: string; prefixlen: number; [k: string]: unknown };
const addresses = (dev: string): AddrInfo[] =>
  (JSON.parse(execFileSync('ip', ['-j', 'addr', 'show', 'dev', dev], { encoding: 'utf8' })) as { addr_info: AddrInfo[] }[])[0].addr_info.filter(
    (a) => a.scope !== 'link',
  );

describe('addrNetlink', () => {
  it('is there only where perl is, and takes only a pod IP\'s "addr replace|del <cidr> dev <if> [nodad]" and a pod route\'s change', () => {
    expect(addrNetlink()?.argv[0]).toBe('/usr/bin/perl');
    expect(addrNetlink({ perl: '/nonexistent/perl' })).toBeUndefined();
    expect(isNetlinkCall(['addr', 'replace', '10.0.0.5/32', 'dev', 'ndl0'])).toBe(true);
    expect(isNetlinkCall(['addr', 'del', 'fd00::5/128', 'dev', 'ndl0'])).toBe(true);
    expect(isNetlinkCall(['addr', 'replace', 'fd00::5/128', 'dev', 'ndl0', 'nodad'])).toBe(true);
    expect(isNetlinkCall(['addr', 'replace', '10.0.0.5/32', 'dev', 'ndl0', 'noprefixroute'])).toBe(false);
    expect(isNetlinkCall(['addr', 'add', '10.0.0.5/32', 'dev', 'ndl0'])).toBe(false);
    expect(isNetlinkCall(['-j', 'addr', 'show', 'dev', 'ndl0'])).toBe(false);
    expect(isNetlinkCall(['link', 'add', 'name', 'ndl0', 'type', 'bridge'])).toBe(false);
    expect(isNetlinkCall(['route', 'add', '10.1.0.0/24', 'via', '192.0.2.3', 'proto', '213'])).toBe(true);
    expect(isNetlinkCall(['route', 'replace', 'fd00:1::/64', 'via', 'fd00::3', 'proto', '213'])).toBe(true);
    expect(isNetlinkCall(['route', 'del', '10.1.0.0/24', 'proto', '213'])).toBe(true);
    expect(isNetlinkCall(['route', 'add', '10.1.0.0/24', 'via', '192.0.2.3'])).toBe(false);
    expect(isNetlinkCall(['route', 'add', '10.1.0.0/24', 'dev', 'eth0', 'proto', '213'])).toBe(false);
    expect(isNetlinkCall(['route', 'del', '10.1.0.0/24'])).toBe(false);
    expect(isNetlinkCall(['-j', '-4', 'route', 'show', 'table', 'main', 'proto', '213'])).toBe(false);
  });

  it('answers as ip does for bad input, without touching the kernel: refusals, bad prefixes, unknown or path-like devices', async () => {
    const ip = helper();
    const unsupported = await failure(ip(['link', 'show']));
    expect(unsupported?.stderr).toBe('unsupported: ip link show');
    expect(unsupported?.message).toMatch(/exited 2/);
    for (const cidr of ['10.999.0.1/32', '10.0.0.1/33', 'fd00::1/129', '10.0.0.1', 'x/32', '10.0.0.1/32 ']) {
      expect((await failure(ip(['addr', 'replace', cidr, 'dev', 'lo'])))?.stderr).toBe(`Error: inet prefix is expected rather than "${cidr}".`);
    }
    for (const dev of ['ndl-none0', '../lo', '.', '..', 'a/b', 'sixteen-chars-xx', '']) {
      expect((await failure(ip(['addr', 'replace', '10.0.0.5/32', 'dev', dev])))?.stderr).toBe(`Cannot find device "${dev}"`);
    }
    expect(await failure(ip(['addr', 'replace', '10.0.0.5/32', 'dev', 'ndl-none0']))).toMatchObject({ code: 'NDL_NETWORK_INTERFACE' });
  });

  // Needs CAP_NET_ADMIN to make a bridge (the suite runs as root in CI).
  it.skipIf(process.getuid?.() !== 0)(
    'as root: puts IPv4 and IPv6 (nodad) addresses on a bridge exactly as ip does, idempotently, and takes them off (skipped when not root: needs CAP_NET_ADMIN)',
    async () => {
      const ip = helper();
      const dev = bridge();
      expect(await ip(['addr', 'replace', '10.77.0.5/32', 'dev', dev])).toBe('');
      expect(await ip(['addr', 'replace', '10.77.0.5/32', 'dev', dev])).toBe(''); // replace: idempotent
      expect(await ip(['addr', 'replace', 'fd77::5/128', 'dev', dev, 'nodad'])).toBe('');
      expect(await ip(['addr', 'replace', '10.77.0.1/24', 'dev', dev])).toBe('');
      // The same arguments through iproute2 itself: the kernel holds the same address records.
      execFileSync('ip', ['addr', 'replace', '10.77.0.6/32', 'dev', dev]);
      execFileSync('ip', ['addr', 'replace', 'fd77::6/128', 'dev', dev, 'nodad']);
      const got = addresses(dev);
      const like = (local: string) => {
        const a = got.find((x) => x.local === local);
        expect(a, local).toBeDefined();
        return { ...a, local: undefined };
      };
      expect(like('10.77.0.5')).toEqual(like('10.77.0.6'));
      expect(like('fd77::5')).toEqual(like('fd77::6'));
      expect(like('fd77::5')).toMatchObject({ family: 'inet6', prefixlen: 128, scope: 'global', nodad: true });
      expect(like('10.77.0.1')).toMatchObject({ family: 'inet', prefixlen: 24, scope: 'global' });
      // The gateway's prefix route is the kernel's, as with ip.
      expect(execFileSync('ip', ['route', 'show', 'dev', dev], { encoding: 'utf8' })).toMatch(/^10\.77\.0\.0\/24 .*src 10\.77\.0\.1/m);

      expect(await ip(['addr', 'del', '10.77.0.5/32', 'dev', dev])).toBe('');
      expect(await ip(['addr', 'del', 'fd77::5/128', 'dev', dev])).toBe('');
      expect(
        addresses(dev)
          .map((a) => a.local)
          .sort(),
      ).toEqual(['10.77.0.1', '10.77.0.6', 'fd77::6']);
      const gone = await failure(ip(['addr', 'del', '10.77.0.5/32', 'dev', dev]));
      expect(gone?.stderr).toBe('RTNETLINK answers: Cannot assign requested address');
      expect(gone?.message).toMatch(/exited 2/);
      // The pod interface takes "not there" for done, over either helper's wording.
      await new PodInterface(dev, ip).remove('10.77.0.5');
      await new PodInterface(dev, async (args) => execFileSync('ip', [...args], { encoding: 'utf8', stdio: 'pipe' }))
        .remove('10.77.0.5')
        .catch((e: unknown) => {
          throw new Error(`iproute2's own wording was not taken for "not there": ${String((e as Error).message)}`);
        });
    },
  );
});

describe('addrNetlink in a network namespace', () => {
  // Needs CAP_NET_ADMIN and CAP_SYS_ADMIN for a namespace (the suite runs as root in CI).
  it.skipIf(process.getuid?.() !== 0)(
    "as root: entered with nsenter --net (so /sys still shows the root namespace), it finds the namespace's own interface (skipped when not root: needs CAP_NET_ADMIN)",
    async () => {
      const ns = `ndlu-${process.pid}-addr`;
      const inNs = (...args: string[]) => execFileSync('ip', ['-n', ns, ...args], { encoding: 'utf8' });
      execFileSync('ip', ['netns', 'add', ns]);
      cleanups.push(() => execFileSync('ip', ['netns', 'del', ns]));
      inNs('link', 'add', 'podbr0', 'type', 'bridge');
      inNs('link', 'set', 'podbr0', 'up');
      const program = addrNetlink()!;
      const sh = helperShell({
        errorCode: 'NDL_NETWORK_INTERFACE',
        program: { ...program, argv: ['nsenter', `--net=/run/netns/${ns}`, ...program.argv] },
        size: 1,
      });
      cleanups.push(sh.close);
      expect(await sh('ip', ['addr', 'replace', '10.79.0.5/32', 'dev', 'podbr0'])).toBe('');
      expect(inNs('-o', '-4', 'addr', 'show', 'dev', 'podbr0')).toContain('inet 10.79.0.5/32');
      // The root namespace's interfaces are not this process's.
      expect((await failure(sh('ip', ['addr', 'replace', '10.79.0.6/32', 'dev', 'eth0'])))?.stderr).toBe('Cannot find device "eth0"');
    },
  );
});
