import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePodCidr } from '../../../core/network/cidr.ts';
import { IpAllocator } from '../../../core/network/ip-allocator.ts';
import { isNodeletError } from '../../../core/errors/index.ts';
import { fileWriter, helperShell, mountSyscalls, type FileWriter } from '../../../core/exec/index.ts';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'ipam-'));
  dirs.push(d);
  return join(d, 'allocations');
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const v4 = parsePodCidr('10.244.1.0/24');

describe('IpAllocator', () => {
  it('hands out the lowest free address, the same one again for the same pod, and re-uses a released one', async () => {
    const a = new IpAllocator(tmp());
    expect(await a.allocate('pod-a', [v4])).toEqual(['10.244.1.2']);
    expect(await a.allocate('pod-b', [v4])).toEqual(['10.244.1.3']);
    expect(await a.allocate('pod-a', [v4])).toEqual(['10.244.1.2']);
    expect(await a.release('pod-a')).toBe(true);
    expect(await a.release('pod-a')).toBe(false);
    expect(await a.allocate('pod-c', [v4])).toEqual(['10.244.1.2']);
  });

  it('keeps allocations across a restart (a new allocator on the same directory) and frees those of pods gone meanwhile', async () => {
    const dir = tmp();
    const first = new IpAllocator(dir);
    await first.allocate('pod-a', [v4]);
    await first.allocate('pod-b', [v4]);
    const again = new IpAllocator(dir);
    expect(again.get('pod-b')).toEqual(['10.244.1.3']);
    expect(await again.allocate('pod-b', [v4])).toEqual(['10.244.1.3']);
    expect(await again.releaseExcept(new Set(['pod-b']))).toEqual([{ uid: 'pod-a', ips: ['10.244.1.2'] }]);
    expect(readdirSync(dir)).toEqual(['pod-b.json']);
    expect(new IpAllocator(dir).uids()).toEqual(['pod-b']);
  });

  it('ignores a file that is not an allocation', async () => {
    const dir = tmp();
    await new IpAllocator(dir).allocate('pod-a', [v4]);
    writeFileSync(join(dir, 'pod-x.json'), 'not json');
    writeFileSync(join(dir, 'pod-y.json'), JSON.stringify({ uid: 'pod-z', ips: ['10.244.1.9'] }));
    expect(new IpAllocator(dir).uids()).toEqual(['pod-a']);
  });

  it('fails with NDL_NETWORK_EXHAUSTED when the CIDR is full (a /30 holds one pod) and records nothing', async () => {
    const dir = tmp();
    const small = parsePodCidr('10.9.0.0/30');
    const a = new IpAllocator(dir);
    expect(await a.allocate('pod-a', [small])).toEqual(['10.9.0.2']);
    const err: unknown = await a.allocate('pod-b', [small]).catch((e: unknown) => e);
    expect(isNodeletError(err) && err.code).toBe('NDL_NETWORK_EXHAUSTED');
    expect(a.get('pod-b')).toBeUndefined();
    expect(readdirSync(dir)).toEqual(['pod-a.json']);
    await a.release('pod-a');
    expect(await a.allocate('pod-b', [small])).toEqual(['10.9.0.2']);
  });

  it('fills a /28 with 13 pods (network, gateway and broadcast stay free)', async () => {
    const c = parsePodCidr('10.9.0.16/28');
    const a = new IpAllocator(tmp());
    const got = (await Promise.all(Array.from({ length: 13 }, (_, i) => a.allocate(`pod-${i}`, [c])))).map((ips) => ips[0]);
    expect(new Set(got).size).toBe(13);
    expect(got[0]).toBe('10.9.0.18');
    expect(got[12]).toBe('10.9.0.30');
    await expect(a.allocate('pod-13', [c])).rejects.toThrow(/no free IP/);
  });

  it('gives a dual-stack pod one IPv4 and one IPv6 address, and new ones when the CIDR changed', async () => {
    const dir = tmp();
    const v6 = parsePodCidr('fd00:10:244:1::/64');
    const a = new IpAllocator(dir);
    expect(await a.allocate('pod-a', [v4, v6])).toEqual(['10.244.1.2', 'fd00:10:244:1::2']);
    expect(await a.allocate('pod-a', [parsePodCidr('10.244.7.0/24')])).toEqual(['10.244.7.2']);
    expect(new IpAllocator(dir).get('pod-a')).toEqual(['10.244.7.2']);
  });
});

/** The records written through the Perl helper (`write-file`, as the composition root does) and through libuv's pool. */
const writers: [string, () => FileWriter][] = [
  [
    'written through the Perl helper',
    () => {
      const program = mountSyscalls();
      expect(program, 'this machine has /usr/bin/perl on x64 or arm64').toBeDefined();
      const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', program });
      closes.push(sh.close);
      return fileWriter(sh, 'NDL_NETWORK_STATE');
    },
  ],
  ['written through libuv\u2019s pool', () => fileWriter(undefined, 'NDL_NETWORK_STATE')],
];
const closes: (() => void)[] = [];
afterEach(() => closes.splice(0).forEach((c) => c()));

describe.each(writers)('IpAllocator, records %s', (_name, writer) => {
  it('gives pods allocated at once distinct addresses, each recorded on disk when its allocation resolves', async () => {
    const dir = tmp();
    const a = new IpAllocator(dir, writer());
    const uids = Array.from({ length: 50 }, (_, i) => `pod-${i}`);
    const got = await Promise.all(uids.map(async (uid) => ({ uid, ips: await a.allocate(uid, [v4]) })));
    expect(new Set(got.map((g) => g.ips[0])).size).toBe(50);
    expect(readdirSync(dir).sort()).toEqual(uids.map((u) => `${u}.json`).sort());
    const again = new IpAllocator(dir);
    for (const g of got) expect(again.get(g.uid)).toEqual(g.ips);
    // Release and re-allocate at once: the file of the new holder stays, the released one goes.
    await Promise.all([a.release('pod-0'), a.allocate('pod-new', [v4])]);
    expect(readdirSync(dir)).toContain('pod-new.json');
    expect(readdirSync(dir)).not.toContain('pod-0.json');
  });

  it('frees the reserved address when its record cannot be written', async () => {
    const dir = tmp();
    const a = new IpAllocator(dir, writer());
    rmSync(dir, { recursive: true, force: true }); // the directory is gone: the write fails
    const err: unknown = await a.allocate('pod-a', [v4]).catch((e: unknown) => e);
    expect(isNodeletError(err) && err.code).toBe('NDL_NETWORK_STATE');
    expect((err as Error).message).toMatch(/cannot record the allocation of pod pod-a: .*ENOENT/);
    expect(a.get('pod-a')).toBeUndefined();
    mkdirSync(dir, { recursive: true });
    expect(await a.allocate('pod-b', [v4])).toEqual(['10.244.1.2']);
  });
});
