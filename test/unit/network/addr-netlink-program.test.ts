/** core/network/addr-netlink.pl on its own: spawned with perl and spoken to in its line protocol. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { hex, lineProgram } from '../exec/line-protocol.ts';

const PROGRAM = fileURLToPath(new URL('../../../core/network/addr-netlink.pl', import.meta.url));
const root = process.getuid?.() === 0;

/** A request line: `ip`'s arguments, each `x<hex>`. */
const line = (...args: string[]) => `${args.map((a) => `x${hex(a)}`).join(' ')}\n`;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** An interface of the test's own, removed after it: a dummy one, or a bridge where the kernel has no dummy driver. */
function testInterface(): string {
  const name = `ndlpl${process.pid % 100000}`;
  try {
    execFileSync('ip', ['link', 'add', 'name', name, 'type', 'dummy'], { stdio: 'pipe' });
  } catch {
    execFileSync('ip', ['link', 'add', 'name', name, 'type', 'bridge']);
  }
  cleanups.push(() => execFileSync('ip', ['link', 'del', name]));
  execFileSync('ip', ['link', 'set', 'dev', name, 'up']);
  return name;
}

const addresses = (dev: string): string[] =>
  (
    JSON.parse(execFileSync('ip', ['-j', 'addr', 'show', 'dev', dev], { encoding: 'utf8' })) as {
      addr_info: { local: string; prefixlen: number; scope: string }[];
    }[]
  )[0]!.addr_info
    .filter((a) => a.scope !== 'link')
    .map((a) => `${a.local}/${a.prefixlen}`)
    .sort();

describe('addr-netlink.pl', () => {
  it('answers malformed and unsupported requests with an error, without the kernel, and goes on', async () => {
    const p = lineProgram(PROGRAM);
    const { answers } = await p.ask([
      '\n',
      'not-hex words\n',
      line('link', 'show'),
      line('addr', 'replace', '10.0.0.5/32', 'dev', 'lo', 'noprefixroute'),
      line('addr', 'replace', '10.0.0.5', 'dev', 'lo'),
      line('addr', 'del', 'fd00::1/129', 'dev', 'lo'),
      line('addr', 'replace', '10.0.0.5/32', 'dev', '../lo'),
      line('addr', 'replace', '10.0.0.5/32', 'dev', 'ndl-none0'),
    ]);
    expect(answers.slice(0, 4).map((a) => a.status)).toEqual([2, 2, 2, 2]);
    expect(answers[0]!.output).toBe('unsupported: ip ');
    expect(answers[1]!.output).toMatch(/^unsupported: ip /);
    expect(answers[2]!.output).toBe('unsupported: ip link show');
    expect(answers[3]!.output).toBe('unsupported: ip addr replace 10.0.0.5/32 dev lo noprefixroute');
    expect(answers.slice(4)).toEqual([
      { status: 1, output: 'Error: inet prefix is expected rather than "10.0.0.5".' },
      { status: 1, output: 'Error: inet prefix is expected rather than "fd00::1/129".' },
      { status: 1, output: 'Cannot find device "../lo"' },
      { status: 1, output: 'Cannot find device "ndl-none0"' },
    ]);
    expect(p.stderr()).toBe('');
  });

  it('answers bad route requests as ip does, without the kernel', async () => {
    const p = lineProgram(PROGRAM);
    const { answers } = await p.ask([
      line('route', 'add', '10.9.0.0/24', 'via', '192.0.2.1'),
      line('route', 'add', '10.9.0.0/33', 'via', '192.0.2.1', 'proto', '213'),
      line('route', 'add', '10.9.0.0/24', 'via', 'fd00::1', 'proto', '213'),
      line('route', 'replace', 'fd00:9::/64', 'via', 'gateway', 'proto', '213'),
      line('route', 'del', '10.9.0.0/24', 'proto', '0'),
      line('route', 'del', '10.9.0.0/24', 'proto', 'static'),
    ]);
    expect(answers).toEqual([
      { status: 2, output: 'unsupported: ip route add 10.9.0.0/24 via 192.0.2.1' },
      { status: 1, output: 'Error: inet prefix is expected rather than "10.9.0.0/33".' },
      { status: 1, output: 'Error: inet address is expected rather than "fd00::1".' },
      { status: 1, output: 'Error: inet address is expected rather than "gateway".' },
      { status: 1, output: 'Error: "0" is not a route protocol number.' },
      { status: 1, output: 'Error: "static" is not a route protocol number.' },
    ]);
    expect(p.stderr()).toBe('');
  });

  it.skipIf(!root)('as root: adds and removes addresses on an interface of its own (skipped when not root: needs CAP_NET_ADMIN)', async () => {
    const dev = testInterface();
    const p = lineProgram(PROGRAM);
    const added = await p.ask([line('addr', 'replace', '10.78.0.5/32', 'dev', dev), line('addr', 'replace', 'fd78::5/128', 'dev', dev, 'nodad')]);
    expect(added.answers).toEqual([
      { status: 0, output: '' },
      { status: 0, output: '' },
    ]);
    expect(addresses(dev)).toEqual(['10.78.0.5/32', 'fd78::5/128']);
    const removed = await p.ask([
      line('addr', 'del', '10.78.0.5/32', 'dev', dev),
      line('addr', 'del', 'fd78::5/128', 'dev', dev),
      line('addr', 'del', '10.78.0.5/32', 'dev', dev),
    ]);
    expect(removed.answers).toEqual([
      { status: 0, output: '' },
      { status: 0, output: '' },
      { status: 2, output: 'RTNETLINK answers: Cannot assign requested address' },
    ]);
    expect(addresses(dev)).toEqual([]);
    expect(p.stderr()).toBe('');
  });
});
