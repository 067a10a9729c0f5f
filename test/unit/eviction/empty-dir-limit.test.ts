import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { checkEmptyDirLimits, diskUsage, overLimit } from '../../../core/eviction/empty-dir-limit.ts';
import type { AbnormalTermination } from '../../../core/pods/index.ts';
import { FakeEvents, memoryLogger } from '../pods/fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'nodelet-evict-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A pod dir whose emptyDir `cache` holds `kib` KiB of data (incompressible bytes, so blocks are allocated). */
function podWith(name: string, sizeLimit: string | undefined, kib: number, priority?: number): { pod: V1Pod; dir: string } {
  const dir = join(root, name);
  const vol = join(dir, 'volumes', 'kubernetes.io~empty-dir', 'cache');
  mkdirSync(join(vol, 'sub'), { recursive: true });
  writeFileSync(join(vol, 'sub', 'data'), Buffer.alloc(kib * 1024, 7));
  const pod: V1Pod = {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      containers: [],
      priority,
      volumes: [
        { name: 'other', emptyDir: {} },
        { name: 'cache', emptyDir: { sizeLimit } },
      ],
    },
  };
  return { pod, dir };
}

describe('emptyDir sizeLimit eviction', () => {
  it('measures allocated bytes recursively, 0 for a missing dir', async () => {
    const { dir } = podWith('du', undefined, 256);
    expect(await diskUsage(join(dir, 'volumes'))).toBeGreaterThanOrEqual(256 * 1024);
    expect(await diskUsage(join(dir, 'nope'))).toBe(0);
  });

  it("names the volume and the limit with upstream's message", async () => {
    const { pod, dir } = podWith('over', '1Mi', 2048);
    expect(await overLimit(pod, dir)).toEqual({ volume: 'cache', message: 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ' });
    const under = podWith('under', '4Mi', 1024);
    expect(await overLimit(under.pod, under.dir)).toBeUndefined();
    const none = podWith('nolimit', undefined, 2048);
    expect(await overLimit(none.pod, none.dir)).toBeUndefined();
  });

  it('evicts only pods over a limit, never a critical pod, with grace 0, Evicted, DisruptionTarget and a Warning event', async () => {
    const pods = [podWith('e-over', '1Mi', 2048), podWith('e-under', '8Mi', 1024), podWith('e-critical', '1Mi', 2048, 2_000_001_000)];
    const dirs = new Map(pods.map((p) => [p.pod.metadata!.name!, p.dir]));
    const terminated: { name: string; t: AbnormalTermination }[] = [];
    const events = new FakeEvents();
    const evicted = await checkEmptyDirLimits({
      log: memoryLogger(),
      events,
      activePods: () => pods.map((p) => p.pod),
      podDir: (p) => dirs.get(p.metadata!.name!)!,
      terminate: async (p, t) => {
        terminated.push({ name: p.metadata!.name!, t });
      },
    });
    const message = 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ';
    expect(evicted).toEqual(['default/e-over']);
    expect(terminated).toEqual([
      {
        name: 'e-over',
        t: { graceMs: 0, reason: 'Evicted', message, conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message }] },
      },
    ]);
    expect(events.list).toEqual([
      { regarding: { kind: 'Pod', namespace: 'default', name: 'e-over', uid: 'uid-e-over' }, type: 'Warning', reason: 'Evicted', note: message },
    ]);
  });
});
