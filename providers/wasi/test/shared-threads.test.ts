import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { ContainerSpec, RunningContainer } from '@nodelet/plugin-api/v1';
import { CONTAINER_START_CHANNEL, KILLED_EXIT_CODE, WasiProvider, placement, type ContainerStartEvent } from '../src/index.ts';
import { BEAT_MS, SharedThreads } from '../src/shared-threads.ts';
import { until } from '../../../test/harness/until.ts';
import { FakeImages, memoryLogger, podContext, providerContext, pulledFixture, readLog, scratch, spec } from './helpers.ts';

const tmp = scratch();
afterAll(() => tmp.cleanup());
const sleep = await pulledFixture('sleep');
const loop = await pulledFixture('loop');
const exitCode = await pulledFixture('exit-code');
const spew = await pulledFixture('spew');
const grow = await pulledFixture('grow');

async function provider(sharedThreads = 1, sharedPreemption = true): Promise<WasiProvider> {
  const p = new WasiProvider({ sharedThreads, workerPool: 0, sharedPreemption });
  await p.init(providerContext(new FakeImages()));
  return p;
}

const bestEffort = (s: ContainerSpec): ContainerSpec => ({ ...s, qosClass: 'BestEffort' });

/** Starts `specs` in order, recording the thread each one's module started on. */
async function startAll(p: WasiProvider, specs: ContainerSpec[]): Promise<{ running: RunningContainer[]; thread: Map<string, number> }> {
  const thread = new Map<string, number>();
  const onStart = (m: unknown) => {
    const e = m as ContainerStartEvent;
    thread.set(e.containerId, e.threadId);
  };
  subscribe(CONTAINER_START_CHANNEL, onStart);
  try {
    const running: RunningContainer[] = [];
    for (const s of specs) running.push(await p.startContainer(s, podContext()));
    return { running, thread };
  } finally {
    unsubscribe(CONTAINER_START_CHANNEL, onStart);
  }
}

/** Resolves once the log at `path` has a stdout line `line`. */
async function logged(path: string, line: string): Promise<void> {
  await until(`${path} to log ${JSON.stringify(line)}`, () => existsSync(path) && readLog(path).some((r) => r.content === line));
}

/** When `line` was logged (the CRI record's timestamp). */
function loggedAt(path: string, line: string): number {
  const rec = readLog(path).find((r) => r.content === line);
  if (!rec) throw new Error(`no ${line} in ${path}`);
  return rec.timestamp.getTime();
}

describe('placement by QoS class', () => {
  const base = spec(sleep, tmp.dir);
  const module = { acceptsSockets: false, experimentalHttp: false };
  it('puts BestEffort modules on shared threads and the others on threads of their own', () => {
    expect(placement({ ...base, qosClass: 'BestEffort' }, module)).toBe('shared');
    expect(placement({ ...base, qosClass: 'Burstable' }, module)).toBe('dedicated');
    expect(placement({ ...base, qosClass: 'Guaranteed' }, module)).toBe('dedicated');
    expect(placement(base, module)).toBe('dedicated'); // unknown class: not BestEffort
  });
  it('keeps a thread of its own for a BestEffort module that listens or calls out over HTTP', () => {
    const ports = { ...base, qosClass: 'BestEffort' as const, ports: [{ containerPort: 8080, protocol: 'TCP' as const }] };
    expect(placement(ports, { acceptsSockets: true, experimentalHttp: false })).toBe('dedicated');
    expect(placement(ports, { acceptsSockets: false, experimentalHttp: false })).toBe('shared'); // it cannot accept: no listener
    expect(placement({ ...base, qosClass: 'BestEffort' }, { acceptsSockets: false, experimentalHttp: true })).toBe('dedicated');
  });
  it('keeps a thread of its own for a module with a start section (it runs where nothing can suspend)', () => {
    expect(placement({ ...base, qosClass: 'BestEffort' }, { acceptsSockets: false, experimentalHttp: false, startFunction: true })).toBe('dedicated');
  });
});

describe('modules sharing a thread', () => {
  it('runs two sleeping modules on one thread, both progressing while the other sleeps', async () => {
    const p = await provider(1);
    try {
      const a = bestEffort(spec(sleep, tmp.dir, ['2']));
      const b = bestEffort(spec(sleep, tmp.dir, ['2']));
      const { running, thread } = await startAll(p, [a, b]);
      expect(thread.get(a.id)).toBe(thread.get(b.id));
      const exits = await Promise.all(running.map((r) => r.exit));
      expect(exits.map((e) => e.exitCode)).toEqual([0, 0]);
      // Interleaved: each one's first tick came before the other's second.
      expect(loggedAt(a.logPath, 'tick 1')).toBeLessThanOrEqual(loggedAt(b.logPath, 'tick 2'));
      expect(loggedAt(b.logPath, 'tick 1')).toBeLessThanOrEqual(loggedAt(a.logPath, 'tick 2'));
      expect(readLog(a.logPath).map((r) => r.content)).toEqual(['sleeping 2', 'tick 1', 'tick 2']);
    } finally {
      await p.shutdown();
    }
  });

  it('a module writing without pause yields the thread at its WASI calls: its neighbour ticks on time', async () => {
    const p = await provider(1);
    try {
      const ticker = bestEffort(spec(sleep, tmp.dir, ['3']));
      const writer = bestEffort(spec(spew, tmp.dir, ['400'])); // 400 MB in 64 KiB writes: seconds of fd_write
      const { running, thread } = await startAll(p, [ticker, writer]);
      expect(thread.get(ticker.id)).toBe(thread.get(writer.id));
      const exits = await Promise.all(running.map((r) => r.exit));
      expect(exits.map((e) => e.exitCode)).toEqual([0, 0]);
      const ticks = ['sleeping 3', 'tick 1', 'tick 2', 'tick 3'].map((l) => loggedAt(ticker.logPath, l));
      const writerEnd = readLog(writer.logPath).at(-1)!.timestamp.getTime();
      // The writer ran past the ticker's ticks (else the test shows nothing), and no tick was late.
      expect(writerEnd).toBeGreaterThan(ticks[1]!);
      for (let i = 1; i < ticks.length; i++) expect(ticks[i]! - ticks[i - 1]!).toBeLessThan(1500);
    } finally {
      await p.shutdown();
    }
  });

  it('a module busy in a loop without WASI calls is preempted: its neighbour ticks on time, and it stops alone', async () => {
    const p = await provider(1);
    try {
      const ticker = bestEffort(spec(sleep, tmp.dir, ['4']));
      const busy = bestEffort(spec(loop, tmp.dir));
      const { running, thread } = await startAll(p, [ticker, busy]);
      expect(thread.get(ticker.id)).toBe(thread.get(busy.id));
      await logged(busy.logPath, 'looping');
      expect((await running[0]!.exit).exitCode).toBe(0);
      const ticks = ['sleeping 4', 'tick 1', 'tick 2', 'tick 3', 'tick 4'].map((l) => loggedAt(ticker.logPath, l));
      for (let i = 1; i < ticks.length; i++) expect(ticks[i]! - ticks[i - 1]!).toBeLessThan(1500);
      // The busy module is stopped at its next preemption point: only it ends, the thread stays.
      const neighbour = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const other = await startAll(p, [neighbour]);
      expect(other.thread.get(neighbour.id)).toBe(thread.get(busy.id));
      await running[1]!.stop(0);
      expect((await running[1]!.exit).exitCode).toBe(KILLED_EXIT_CODE);
      const ended = await Promise.race([other.running[0]!.exit.then(() => 'ended'), new Promise((r) => setTimeout(() => r('running'), 500))]);
      expect(ended).toBe('running');
      await other.running[0]!.stop(0);
    } finally {
      await p.shutdown();
    }
  });

  it("gives a big module's memory back when it was the last on its shared thread (the thread ends; the next start gets a new one)", async () => {
    const p = await provider(1);
    try {
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
      const big = bestEffort(spec(grow, tmp.dir, ['384']));
      const { running, thread } = await startAll(p, [big]);
      await logged(big.logPath, 'grown 384 MiB');
      const held = rss();
      await running[0]!.stop(0);
      // Stopped means given back: whoever waits on the stop (an eviction) observes the memory free.
      expect(rss()).toBeLessThan(held - 300 * 2 ** 20);
      expect((await running[0]!.exit).exitCode).toBe(KILLED_EXIT_CODE);
      const next = await startAll(p, [bestEffort(spec(exitCode, tmp.dir, ['0']))]);
      expect((await next.running[0]!.exit).exitCode).toBe(0);
      expect([...next.thread.values()][0]).not.toBe([...thread.values()][0]);
    } finally {
      await p.shutdown();
    }
  });

  it('gives a Guaranteed pod a thread of its own beside the shared one', async () => {
    const p = await provider(1);
    try {
      const shared = bestEffort(spec(sleep, tmp.dir, ['60']));
      const own = { ...spec(sleep, tmp.dir, ['60']), qosClass: 'Guaranteed' as const };
      const { running, thread } = await startAll(p, [shared, own]);
      expect(thread.get(own.id)).not.toBe(thread.get(shared.id));
      expect(p.threads()).toHaveLength(1);
      expect(p.threads()[0]).toMatchObject({ threadId: thread.get(shared.id), containers: 1 });
      await Promise.all(running.map((r) => r.stop(0)));
    } finally {
      await p.shutdown();
    }
  });

  it('stops one module without disturbing the other', async () => {
    const p = await provider(1);
    try {
      const a = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const b = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const { running } = await startAll(p, [a, b]);
      await logged(a.logPath, 'tick 1');
      await running[0]!.stop(0);
      expect((await running[0]!.exit).exitCode).toBe(KILLED_EXIT_CODE);
      const ticks = readLog(b.logPath).length;
      await logged(b.logPath, `tick ${ticks}`); // b ticks on after a stopped
      expect(p.runningCount).toBe(1);
      expect(p.threads()[0]!.containers).toBe(1);
      await running[1]!.stop(0);
      expect((await running[1]!.exit).exitCode).toBe(KILLED_EXIT_CODE);
      expect(p.threads()[0]!.containers).toBe(0);
    } finally {
      await p.shutdown();
    }
  });

  it('ends only the module that calls proc_exit', async () => {
    const p = await provider(1);
    try {
      const sleeper = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const exiting = bestEffort(spec(exitCode, tmp.dir, ['7']));
      const { running, thread } = await startAll(p, [sleeper, exiting]);
      expect(thread.get(sleeper.id)).toBe(thread.get(exiting.id));
      expect(await running[1]!.exit).toMatchObject({ exitCode: 7, reason: 'Error' });
      const ticks = readLog(sleeper.logPath).length;
      await logged(sleeper.logPath, `tick ${ticks}`);
      await running[0]!.stop(0);
    } finally {
      await p.shutdown();
    }
  });

  it("sends each module's messages to its own container: three exit codes from one thread", async () => {
    const p = await provider(1);
    try {
      const specs = [3, 5, 9].map((code) => bestEffort(spec(exitCode, tmp.dir, [String(code)])));
      const { running, thread } = await startAll(p, specs);
      expect(new Set(specs.map((s) => thread.get(s.id))).size).toBe(1);
      expect(await Promise.all(running.map((r) => r.exit.then((e) => e.exitCode)))).toEqual([3, 5, 9]);
    } finally {
      await p.shutdown();
    }
  });

  it("the thread's warm-up run (a tiny module, its log to /dev/null) leaves no trace: no warning, no module counted, /dev/null intact", async () => {
    const lines: string[] = [];
    const p = new WasiProvider({ sharedThreads: 1, workerPool: 0 });
    await p.init({ ...providerContext(new FakeImages()), log: memoryLogger(lines) });
    try {
      const exiting = bestEffort(spec(exitCode, tmp.dir, ['3']));
      const { running } = await startAll(p, [exiting]);
      expect(await running[0]!.exit).toMatchObject({ exitCode: 3, reason: 'Error' });
      // The warm-up ran on the same thread as the thread booted; give any stray message of it time to arrive.
      await new Promise((r) => setTimeout(r, 100)); // a fixed wait: no warning may arrive meanwhile
      expect(lines.filter((l) => l.startsWith('warn') || l.startsWith('error'))).toEqual([]);
      expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
    } finally {
      await p.shutdown();
    }
  });

  it('without preemption points, a start the busy thread does not get to within the start timeout is given up alone: the thread and its modules go on', async () => {
    const p = new WasiProvider({ sharedThreads: 1, workerPool: 0, startTimeoutMs: 800, sharedPreemption: false });
    await p.init(providerContext(new FakeImages()));
    try {
      const sleeper = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const busy = bestEffort(spec(loop, tmp.dir));
      const { running } = await startAll(p, [sleeper, busy]);
      await logged(busy.logPath, 'looping');
      const late = bestEffort(spec(sleep, tmp.dir, ['1']));
      const err = await p.startContainer(late, podContext()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ reason: 'StartTimeout', message: expect.stringContaining('did not get to start container main') });
      // The thread was not terminated: its modules are still running.
      const ended = await Promise.race([...running.map((r) => r.exit.then(() => 'ended')), new Promise((r) => setTimeout(() => r('running'), 300))]);
      expect(ended).toBe('running');
      expect(existsSync(late.logPath)).toBe(false); // never started: not even its log was opened
    } finally {
      await p.shutdown();
    }
  });

  it('without preemption points, terminates the thread of a busy module that does not stop, ending its neighbours with a reason', async () => {
    const p = await provider(1, false);
    try {
      const sleeper = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const busy = bestEffort(spec(loop, tmp.dir));
      const { running } = await startAll(p, [sleeper, busy]);
      await logged(busy.logPath, 'looping');
      // Its CPU counts the slice it is still in, though it makes no WASI call.
      const cpu = async () => (await p.stats(busy.id)).cpu!.usageCoreNanoSeconds;
      const first = await cpu();
      await expect.poll(cpu, { timeout: 5000 }).toBeGreaterThan(first);
      await running[1]!.stop(0);
      expect((await running[1]!.exit).exitCode).toBe(KILLED_EXIT_CODE);
      const neighbour = await running[0]!.exit;
      expect(neighbour.exitCode).toBe(KILLED_EXIT_CODE);
      expect(neighbour.message).toMatch(/did not stop .* the thread was terminated/);
      // The next BestEffort module gets a new shared thread.
      const next = bestEffort(spec(exitCode, tmp.dir, ['0']));
      const again = await p.startContainer(next, podContext());
      expect((await again.exit).exitCode).toBe(0);
    } finally {
      await p.shutdown();
    }
  });

  it('without preemption points, places a new module away from a thread that a busy module holds', async () => {
    const p = await provider(2, false);
    try {
      const busy = bestEffort(spec(loop, tmp.dir));
      const { running, thread } = await startAll(p, [busy]);
      await logged(busy.logPath, 'looping');
      // Its thread's event loop falls behind (the node metric shows it) ...
      await until('the busy thread falling behind', () => p.threads().find((l) => l.threadId === thread.get(busy.id))!.eventLoopDelaySeconds > 0.1);
      // ... so the next module boots the second thread, and the one after goes there too.
      const sleeper = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const next = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const more = await startAll(p, [sleeper, next]);
      expect(more.thread.get(sleeper.id)).not.toBe(thread.get(busy.id));
      expect(more.thread.get(next.id)).toBe(more.thread.get(sleeper.id));
      expect(p.threads()).toHaveLength(2);
      await Promise.all([...running, ...more.running].map((r) => r.stop(0)));
    } finally {
      await p.shutdown();
    }
  });

  it('boots threads as they are needed (sleeping modules share the first, a busy one that yields fills it, the next module boots the second, which ends once idle) and reports each with its modules and event-loop delay', async () => {
    const p = new WasiProvider({ sharedThreads: 2, workerPool: 0, sharedIdleEndMs: 500 });
    await p.init(providerContext(new FakeImages()));
    try {
      const specs = [0, 1, 2, 3].map(() => bestEffort(spec(sleep, tmp.dir, ['3600'])));
      const { running, thread } = await startAll(p, specs);
      expect(new Set(thread.values()).size).toBe(1);
      expect(p.threads().map((l) => l.containers)).toEqual([4]);
      for (const l of p.threads()) expect(l.eventLoopDelaySeconds).toBeGreaterThanOrEqual(0);
      expect((await p.stats(specs[0]!.id)).memory?.workingSetBytes).toBeGreaterThan(0);
      // With preemption points a busy module keeps its thread on time, but uses it.
      const busy = bestEffort(spec(loop, tmp.dir));
      const more = await startAll(p, [busy]);
      expect(more.thread.get(busy.id)).toBe(thread.get(specs[0]!.id));
      await logged(busy.logPath, 'looping');
      await new Promise((r) => setTimeout(r, 1500)); // a full second of its use in the thread's reading
      const next = bestEffort(spec(sleep, tmp.dir, ['3600']));
      const last = await startAll(p, [next]);
      expect(last.thread.get(next.id)).not.toBe(thread.get(specs[0]!.id));
      expect(p.threads().map((l) => l.containers)).toEqual([5, 1]);
      // The second thread, without modules, ends after its idle time; the first, with its modules, stays.
      await last.running[0]!.stop(0);
      await until('the extra thread gone', () => p.threads().length === 1);
      expect(p.threads().map((l) => l.containers)).toEqual([5]);
      await Promise.all([...running, ...more.running].map((r) => r.stop(0)));
    } finally {
      await p.shutdown();
    }
  });
});

describe('the heartbeat of a shared thread', () => {
  it('does not run while the thread holds no module: an empty thread wakes no one and reads as on time and idle', async () => {
    const threads = new SharedThreads({ size: 1 });
    try {
      threads.warm();
      const t = await threads.take(); // placed (booted, ready), but no module sent to it
      await new Promise((r) => setTimeout(r, 3 * BEAT_MS));
      expect(t.beating()).toBe(false);
      expect(t.lateMs()).toBe(0);
      expect(t.utilization()).toBe(0);
    } finally {
      await threads.close();
    }
  });
});
