import { readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound } from '@nodelet/plugin-api/v1';
import { WasiProvider } from '../src/index.ts';
import { threadCpuNs } from '../src/thread-stats.ts';
import { FakeImages, logText, podContext, providerContext, pulledFixture, scratch, spec } from './helpers.ts';
import { until } from '../../../test/harness/until.ts';

const MiB = 1 << 20;
const tmp = scratch();
let provider: WasiProvider;
beforeAll(async () => {
  provider = new WasiProvider({ workerPool: 0 });
  await provider.init(providerContext(new FakeImages()));
});
afterAll(async () => {
  await provider.shutdown();
  tmp.cleanup();
});

describe('wasi container stats', () => {
  it("reads a thread's CPU time from /proc (this thread has used some)", () => {
    const tid = Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
    expect(threadCpuNs(tid)).toBeGreaterThan(0);
    expect(threadCpuNs(2 ** 30)).toBeUndefined();
  });

  it('a busy loop uses more CPU than a sleeping module; memory is the linear memory size', async () => {
    const loop = await provider.startContainer(spec(await pulledFixture('loop'), tmp.dir), podContext());
    const sleepSpec = spec(await pulledFixture('sleep'), tmp.dir, ['3600']);
    const sleeper = await provider.startContainer(sleepSpec, podContext());
    try {
      await until('the sleeper ticks', () => logText(sleepSpec.logPath).includes('tick 1'));
      const busy = await provider.stats(loop.id);
      const idle = await provider.stats(sleeper.id);
      expect(busy.cpu!.usageCoreNanoSeconds).toBeGreaterThan(200e6); // ≥ 0.2 s of a core in ~1 s
      expect(idle.cpu!.usageCoreNanoSeconds).toBeLessThan(busy.cpu!.usageCoreNanoSeconds / 4);
      expect(idle.memory!.workingSetBytes % 65536).toBe(0); // whole Wasm pages
      expect(idle.memory!.workingSetBytes).toBeGreaterThan(0);
      const later = await provider.stats(loop.id);
      expect(later.cpu!.usageCoreNanoSeconds).toBeGreaterThanOrEqual(busy.cpu!.usageCoreNanoSeconds);
    } finally {
      await Promise.all([loop.stop(0), sleeper.stop(0)]);
    }
  });

  it('reports a module that grows its memory', async () => {
    const s = spec(await pulledFixture('grow'), tmp.dir, ['24']);
    const c = await provider.startContainer(s, podContext());
    try {
      await until('the module has grown', () => logText(s.logPath).includes('grown 24 MiB'));
      await until('the size is published at its next WASI call', async () => (await provider.stats(c.id)).memory!.workingSetBytes >= 24 * MiB);
      expect((await provider.stats(c.id)).memory!.workingSetBytes).toBeLessThan(64 * MiB);
    } finally {
      await c.stop(0);
    }
    await expect(provider.stats(c.id)).rejects.toSatisfy(isNotFound);
  });
});
