import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { PodNetworkManager, type PodNetworkOptions } from '../../../core/network/index.ts';
import type { IpCommand } from '../../../core/network/pod-interface.ts';
import { memoryLogger } from '../pods/fakes.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const pod = (uid: string): V1Pod => ({ metadata: { uid, name: uid, namespace: 'default' }, spec: { containers: [] } });

/** A fake `ip`: records each call; `fail` makes matching calls fail like iproute2 does (stderr). */
function fakeIp(fail?: (args: readonly string[]) => string | undefined) {
  const calls: string[] = [];
  const ip: IpCommand = async (args) => {
    calls.push(args.join(' '));
    const stderr = fail?.(args);
    if (stderr) throw Object.assign(new Error('Command failed'), { stderr });
    return '';
  };
  return { ip, calls };
}

function manager(over: Partial<PodNetworkOptions> & { ip: IpCommand }, rootDir?: string) {
  const root = rootDir ?? mkdtempSync(join(tmpdir(), 'podnet-'));
  if (!rootDir) dirs.push(root);
  const events: string[] = [];
  const logs: string[] = [];
  const m = new PodNetworkManager({
    rootDir: root,
    interfaceName: 'ndltest',
    podCIDRs: [],
    log: memoryLogger(logs),
    nodeEvent: (type, reason, note) => events.push(`${type} ${reason} ${note}`),
    ...over,
  });
  return { m, events, logs, root };
}

describe('PodNetworkManager', () => {
  it('creates the bridge with the gateway, puts each pod IP on it as /32 and removes it on release', async () => {
    const { ip, calls } = fakeIp((a) => (a[0] === 'link' && a[1] === 'add' ? 'RTNETLINK answers: File exists' : undefined));
    const { m } = manager({ ip, podCIDRs: ['10.244.3.0/24'] });
    expect(await m.setUp(pod('a'))).toEqual(['10.244.3.2']);
    expect(await m.setUp(pod('b'))).toEqual(['10.244.3.3']);
    await m.release(pod('a'));
    expect(calls).toEqual([
      'link add name ndltest type bridge',
      'link set dev ndltest up',
      'addr replace 10.244.3.1/24 dev ndltest',
      'addr replace 10.244.3.2/32 dev ndltest',
      'addr replace 10.244.3.3/32 dev ndltest',
      'addr del 10.244.3.2/32 dev ndltest',
    ]);
    expect(await m.setUp(pod('c'))).toEqual(['10.244.3.2']);
  });

  it("prefers the node's spec.podCIDRs over --pod-cidr, and gives no IP while there is no CIDR at all", async () => {
    const { ip } = fakeIp();
    let node: string[] | undefined;
    const { m, logs } = manager({ ip, podCIDRs: [], nodePodCIDRs: async () => node, cidrWaitMs: 0 });
    expect(await m.setUp(pod('a'))).toEqual([]);
    expect(logs.some((l) => l.includes('the node has no pod CIDR'))).toBe(true);
    node = ['10.77.0.0/24'];
    expect(await m.setUp(pod('a'))).toEqual(['10.77.0.2']);
    const withFlag = manager({ ip, podCIDRs: ['10.1.0.0/24'], nodePodCIDRs: async () => ['10.78.0.0/24'] }).m;
    expect(await withFlag.setUp(pod('x'))).toEqual(['10.78.0.2']);
  });

  it('the first set-up waits for kube-controller-manager to give the node its CIDR', async () => {
    const { ip } = fakeIp();
    const answers: (string[] | undefined)[] = [undefined, undefined, ['10.79.0.0/24']];
    let reads = 0;
    const nodePodCIDRs = async () => answers[Math.min(reads++, answers.length - 1)];
    const { m } = manager({ ip, podCIDRs: [], nodePodCIDRs, cidrWaitMs: 60_000, cidrPollMs: 1 });
    expect(await m.setUp(pod('a'))).toEqual(['10.79.0.2']);
    expect(reads).toBe(3);
  });

  it('without CAP_NET_ADMIN: one log line and one node event, and pods get no IP rather than failing', async () => {
    const { ip } = fakeIp(() => 'RTNETLINK answers: Operation not permitted');
    const { m, events, logs } = manager({ ip, podCIDRs: ['10.244.3.0/24'] });
    expect(await m.setUp(pod('a'))).toEqual([]);
    expect(await m.setUp(pod('b'))).toEqual([]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(
      /^Warning PodNetworkUnavailable pods on this node get no IP: .*create bridge ndltest: RTNETLINK answers: Operation not permitted$/,
    );
    expect(logs.filter((l) => l.includes('pod network unavailable'))).toHaveLength(1);
  });

  it('keeps IPs across a restart and frees those of pods deleted while it was down', async () => {
    const { ip, calls } = fakeIp();
    const first = manager({ ip, podCIDRs: ['10.244.3.0/24'] });
    await first.m.setUp(pod('a'));
    await first.m.setUp(pod('b'));
    const again = manager({ ip, podCIDRs: ['10.244.3.0/24'] }, first.root).m;
    await again.releaseExcept([pod('b')]);
    expect(calls.at(-1)).toBe('addr del 10.244.3.2/32 dev ndltest');
    expect(await again.setUp(pod('b'))).toEqual(['10.244.3.3']);
    expect(await again.setUp(pod('c'))).toEqual(['10.244.3.2']);
  });

  it('an exhausted CIDR fails setUp with NDL_NETWORK_EXHAUSTED (the pod waits)', async () => {
    const { ip } = fakeIp();
    const { m } = manager({ ip, podCIDRs: ['10.9.0.0/30'] });
    await m.setUp(pod('a'));
    await expect(m.setUp(pod('b'))).rejects.toThrow(/no free IP in the pod CIDR: all 1 pod addresses of 10.9.0.0\/30 are in use/);
  });
});

describe('PodNetworkManager recovery', () => {
  it('makes the bridge again when it was removed under nodelet', async () => {
    let gone = false;
    const { ip, calls } = fakeIp((a) => {
      if (a[0] === 'link' && a[1] === 'add') gone = false;
      return gone && a[0] === 'addr' ? 'Cannot find device "ndltest"' : undefined;
    });
    const { m } = manager({ ip, podCIDRs: ['10.244.3.0/24'] });
    await m.setUp(pod('a'));
    gone = true;
    const before = calls.length;
    expect(await m.setUp(pod('b'))).toEqual(['10.244.3.3']);
    expect(calls.slice(before)).toEqual([
      'addr replace 10.244.3.3/32 dev ndltest',
      'link add name ndltest type bridge',
      'link set dev ndltest up',
      'addr replace 10.244.3.1/24 dev ndltest',
      'addr replace 10.244.3.3/32 dev ndltest',
    ]);
  });

  it('a bridge it cannot make again fails setUp (the pod retries) and frees the address it took', async () => {
    const { ip } = fakeIp((a) => (a[0] === 'addr' && a[2] === '10.244.3.3/32' ? 'RTNETLINK answers: Operation not permitted' : undefined));
    const { m, root } = manager({ ip, podCIDRs: ['10.244.3.0/24'] });
    await m.setUp(pod('a'));
    await expect(m.setUp(pod('b'))).rejects.toThrow(/pod interface operation failed: add 10.244.3.3 to ndltest: RTNETLINK answers: Operation not permitted/);
    expect(readdirSync(join(root, 'network', 'allocations'))).toEqual(['a.json']);
  });

  it('never rejects: a record that cannot be removed is logged and stays', async () => {
    const { ip } = fakeIp();
    const { m, logs, root } = manager({ ip, podCIDRs: ['10.244.3.0/24'] });
    await m.setUp(pod('a'));
    const dir = join(root, 'network', 'allocations');
    // A record that became a directory: rmSync(force) cannot remove it (permissions would not stop root).
    rmSync(join(dir, 'a.json'));
    mkdirSync(join(dir, 'a.json', 'x'), { recursive: true });
    await expect(m.release(pod('a'))).resolves.toBeUndefined();
    expect(logs.some((l) => l.startsWith('error cannot release pod IPs'))).toBe(true);
    expect(await m.setUp(pod('b'))).toEqual(['10.244.3.3']);
  });
});
