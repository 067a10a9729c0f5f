import { spawnSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CONTAINER_END_CHANNEL,
  CONTAINER_START_CHANNEL,
  DEFAULT_RESOURCE_LIMITS,
  KILLED_EXIT_CODE,
  WasiProvider,
  WorkerPool,
  type ContainerEndEvent,
  type ContainerStartEvent,
} from '../src/index.ts';
import type { RunMessage } from '../src/worker-protocol.ts';
import { FakeImages, logText, podContext, providerContext, pulledFixture, scratch, spec } from './helpers.ts';
import { until } from '../../../test/harness/until.ts';

const tmp = scratch();
afterAll(() => tmp.cleanup());
const hello = await pulledFixture('hello');

async function provider(workerPool: number): Promise<WasiProvider> {
  const p = new WasiProvider({ workerPool });
  await p.init(providerContext(new FakeImages()));
  return p;
}

/** Events published on `name` while `fn` runs. */
async function published<T>(name: string, fn: () => Promise<void>): Promise<T[]> {
  const events: T[] = [];
  const onEvent = (m: unknown) => {
    events.push(m as T);
  };
  subscribe(name, onEvent);
  try {
    await fn();
  } finally {
    unsubscribe(name, onEvent);
  }
  return events;
}
const startEvents = (fn: () => Promise<void>) => published<ContainerStartEvent>(CONTAINER_START_CHANNEL, fn);

function runInput(module: WebAssembly.Module, logPath: string, argv: string[]): RunMessage {
  return {
    type: 'run',
    module,
    importedMemories: [],
    argv,
    env: {},
    mounts: [],
    logPath,
    logOptions: {},
    control: new SharedArrayBuffer(4),
  };
}

function messages(w: Worker): Array<{ type: string }> {
  const seen: Array<{ type: string }> = [];
  w.on('message', (m) => seen.push(m));
  return seen;
}

describe('pooled starts', () => {
  it('run each container in a pre-started worker of its own and keep the pool at its size', async () => {
    const p = await provider(1);
    const specs = Array.from({ length: 4 }, (_, i) => spec(hello, tmp.dir, [`run ${i}`]));
    const events = await startEvents(async () => {
      for (const s of specs) {
        const c = await p.startContainer(s, podContext());
        expect(await c.exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
        // The replacement boots once the start is handed over (a setImmediate, which a module this
        // quick can outrun): once it is up, the next start takes an idle worker.
        await until('the replacement worker', () => p.workerPool.idleCount === 1, 10_000);
      }
    });
    expect(events.map((e) => e.containerId)).toEqual(specs.map((s) => s.id));
    expect(new Set(events.map((e) => e.threadId)).size).toBe(4);
    specs.forEach((s, i) => expect(logText(s.logPath)).toContain(`arg 1 run ${i}\n`));
    await p.shutdown();
    expect(p.workerPool.idleCount).toBe(0); // shut down: no idle worker left behind
  });

  it('start every container of a burst larger than the pool in distinct workers', async () => {
    const p = await provider(2);
    const img = await pulledFixture('sleep');
    const specs = Array.from({ length: 6 }, () => spec(img, tmp.dir, ['3600']));
    let ends: ContainerEndEvent[] = [];
    const events = await startEvents(async () => {
      ends = await published<ContainerEndEvent>(CONTAINER_END_CHANNEL, async () => {
        const running = await Promise.all(specs.map((s) => p.startContainer(s, podContext())));
        expect(p.runningCount).toBe(6);
        await Promise.all(running.map((c) => c.stop(0)));
      });
    });
    expect(new Set(events.map((e) => e.threadId)).size).toBe(6);
    expect(ends.map((e) => e.containerId).sort()).toEqual(specs.map((s) => s.id).sort());
    for (const e of ends) expect(e).toMatchObject({ exit: { exitCode: KILLED_EXIT_CODE }, runMs: expect.any(Number) });
    await p.workerPool.settled();
    expect(p.workerPool.idleCount).toBe(2);
    await p.shutdown();
  });

  it('start a worker per container when the pool is disabled (workerPool: 0)', async () => {
    const p = await provider(0);
    const s = spec(await pulledFixture('exit-code'), tmp.dir, ['7']);
    const c = await p.startContainer(s, podContext());
    expect(await c.exit).toMatchObject({ exitCode: 7, reason: 'Error' });
    await p.workerPool.settled();
    expect(p.workerPool.idleCount).toBe(0);
    await p.shutdown();
  });
});

describe('WorkerPool', () => {
  it('never runs a second module in a worker, even when sent a second run message', async () => {
    const pool = new WorkerPool({ size: 0 });
    const module = await WebAssembly.compile(readFileSync(hello.path));
    const w = await pool.take();
    const seen = messages(w);
    const exited = new Promise((r) => w.once('exit', r));
    const first = join(tmp.dir, 'logs', 'first.log');
    const second = join(tmp.dir, 'logs', 'second.log');
    w.postMessage(runInput(module, first, ['hello', 'one']));
    w.postMessage(runInput(module, second, ['hello', 'two']));
    await exited;
    expect(seen.map((m) => m.type)).toEqual(['instantiating', 'started', 'exit']);
    expect(logText(first)).toContain('arg 1 one\n');
    expect(existsSync(second)).toBe(false);
    await pool.close();
  });

  it('hands out distinct workers, keeps `size` idle and boots no more than asked', async () => {
    const pool = new WorkerPool({ size: 1, maxBooting: 2 });
    pool.warm();
    expect(pool.bootingCount).toBe(1);
    const taken = await Promise.all([pool.take(), pool.take(), pool.take()]);
    expect(new Set(taken.map((w) => w.threadId)).size).toBe(3);
    await pool.settled();
    pool.warm();
    expect(pool.bootingCount).toBe(0);
    expect(pool.idleCount).toBe(1);
    await Promise.all(taken.map((w) => w.terminate()));
    await pool.close();
    expect(pool.idleCount).toBe(0);
    await expect(pool.take()).rejects.toThrow(/closed/);
  });

  it('rejects a take whose worker cannot start, and a start fails with a branded error', async () => {
    // 4 MB: too small for a worker to start on Node 24, large enough to fail the worker, not the process.
    const pool = new WorkerPool({ size: 1, resourceLimits: { maxOldGenerationSizeMb: 4 } });
    await expect(pool.take()).rejects.toThrow(/a worker thread failed to start: .*memory limit/);
    await pool.settled();
    expect(pool.idleCount).toBe(0);
    await pool.close();

    const p = new WasiProvider({ resourceLimits: { maxOldGenerationSizeMb: 4 } });
    await p.init(providerContext(new FakeImages()));
    await expect(p.startContainer(spec(hello, tmp.dir), podContext())).rejects.toMatchObject({
      code: 'Internal',
      message: expect.stringMatching(/no worker thread for container main/),
    });
    await p.shutdown();
  });

  it('boots a worker with the default heap limits without a full (mark-compact) collection', () => {
    // Node 24's worker bootstrap fills ~6 MiB of old generation: with an 8 MiB limit every boot
    // paid a mark-compact (~25 ms), 2.4x the CPU of a boot. Counted with --trace-gc in a child process.
    const pool = new URL('../src/worker-pool.ts', import.meta.url).href;
    const code =
      `const { WorkerPool } = await import(${JSON.stringify(pool)});\n` +
      `const p = new WorkerPool({ size: 0, resourceLimits: ${JSON.stringify(DEFAULT_RESOURCE_LIMITS)} });\n` +
      `const w = await p.take();\nawait w.terminate();\nawait p.close();\nconsole.log('booted');\n`;
    const r = spawnSync(process.execPath, ['--conditions=nodelet-source', '--no-warnings', '--trace-gc', '--input-type=module', '-e', code], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.stdout, r.stderr).toContain('booted');
    expect(r.stdout.split('\n').filter((l) => l.includes('Mark-Compact'))).toEqual([]);
  });

  it('refuses a heap limit so small that Node would abort the whole process', () => {
    expect(() => new WorkerPool({ size: 1, resourceLimits: { maxOldGenerationSizeMb: 2 } })).toThrow(/at least 4 \(got 2\)/);
  });

  it('rejects waiting takes when closed', async () => {
    const pool = new WorkerPool({ size: 0 });
    const waiting = expect(pool.take()).rejects.toThrow(/closed/);
    await pool.close();
    await waiting;
  });
});
