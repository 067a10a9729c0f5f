import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidArgument, isInvalidImage, type PodContext, type Provider } from '@nodelet/plugin-api/v1';
import createProvider, { KILLED_EXIT_CODE, TRAP_EXIT_CODE, WasiProvider } from '../src/index.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, pulledFixture, readLog, scratch, spec } from './helpers.ts';
import { until } from '../../../test/harness/until.ts';

let provider: WasiProvider;
let images: FakeImages;
const tmp = scratch();
beforeAll(async () => {
  provider = new WasiProvider(); // in-process: the modules run in this test process
  images = new FakeImages();
  await provider.init(providerContext(images));
});
afterAll(async () => {
  await provider.shutdown();
  tmp.cleanup();
});

async function run(fixture: string, args: string[] = [], over = {}) {
  const s = spec(await pulledFixture(fixture), tmp.dir, args, over);
  const c = await provider.startContainer(s, podContext());
  return { spec: s, container: c, exit: await c.exit };
}

describe('provider identity', () => {
  it('declares the wasi and spin handlers (in its manifest only), arch, os and runtime version', () => {
    const p: Provider = createProvider();
    expect(p).toMatchObject({ name: 'wasi', apiVersion: 'nodelet.dev/v1', architecture: 'wasm32-wasi', os: 'wasi' });
    expect(p.handlers).toBeUndefined();
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { nodelet: { handlers: string[] } };
    expect(manifest.nodelet.handlers).toEqual(['wasi', 'spin']);
    expect(p.runtimeVersion).toBe('nodelet-wasi://0.1.0');
  });
});

describe('pullImage', () => {
  it('delegates to the image service asking for a Spin application or else a Wasm layer', async () => {
    const events: string[] = [];
    const ctx = {
      ...podContext(),
      event: (_t: string, reason: string) => {
        events.push(reason);
      },
    };
    const img = await provider.pullImage('fixture:hello', { pullPolicy: 'Always', credentials: [{ registry: 'r', token: 't' }] }, ctx);
    expect(img.path).toMatch(/hello-[0-9a-f]{16}\.wasm$/);
    const { req } = images.requests.at(-1)!;
    expect(req.acceptLayerTypes).toEqual([
      'application/vnd.fermyon.spin.application.v1+config',
      'application/wasm',
      'application/vnd.wasm.content.layer.v1+wasm',
    ]);
    expect(req).toMatchObject({ pullPolicy: 'Always', credentials: [{ registry: 'r', token: 't' }], signal: ctx.signal });
    expect(events).toEqual([]);
  });
  it("boots during the pull the threads the pod's start will take: the first shared thread for BestEffort, pooled workers for the rest", async () => {
    const boots = async (qosClass: PodContext['qosClass']) => {
      const p = new WasiProvider({ workerPool: 2, sharedThreads: 2 });
      try {
        await p.init(providerContext(new FakeImages()));
        await p.pullImage('fixture:hello', { pullPolicy: 'IfNotPresent', credentials: [] }, { ...podContext(), qosClass });
        return { pooled: p.workerPool.idleCount + p.workerPool.bootingCount, shared: p.threads().length };
      } finally {
        await p.shutdown();
      }
    };
    expect(await boots('BestEffort')).toEqual({ pooled: 0, shared: 1 }); // the second boots when the first is full
    expect(await boots('Guaranteed')).toEqual({ pooled: 2, shared: 0 });
    expect(await boots('Burstable')).toEqual({ pooled: 2, shared: 0 });
    expect(await boots(undefined)).toEqual({ pooled: 2, shared: 1 }); // a core that does not say
  });
  it('fails with a branded error before init', async () => {
    await expect(createProvider().pullImage('x', { pullPolicy: 'Always', credentials: [] }, podContext())).rejects.toMatchObject({ code: 'Unavailable' });
  });
});

describe('running modules', () => {
  it('passes argv and env and logs stdout/stderr in CRI format', async () => {
    const { spec: s, exit } = await run('hello', ['first arg', 'x=$y'], { env: { GREETING: 'hi there', EMPTY: '' } });
    expect(exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(exit.finishedAt).toBeInstanceOf(Date);
    expect(logText(s.logPath)).toBe('arg 0 fixture:hello\narg 1 first arg\narg 2 x=$y\nenv GREETING=hi there\nenv EMPTY=\n');
    expect(logText(s.logPath, 'stderr')).toBe('to stderr\n');
    for (const r of readLog(s.logPath)) expect(r.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
  });

  it.each([
    [0, 'Completed'],
    [3, 'Error'],
    [255, 'Error'],
  ])('reports proc_exit(%i) as %s', async (code, reason) => {
    const { spec: s, exit } = await run('exit-code', [String(code)]);
    expect(exit).toMatchObject({ exitCode: code, reason });
    expect(exit.message).toBeUndefined();
    expect(logText(s.logPath)).toBe(`exiting with ${code}\n`);
  });

  it('reports a trap with its message', async () => {
    const { spec: s, exit } = await run('trap');
    expect(exit).toMatchObject({ exitCode: TRAP_EXIT_CODE, reason: 'Error' });
    // The trap, then the Wasm backtrace (this fixture has no name section: function indices and offsets).
    expect(exit.message).toMatch(/^RuntimeError: unreachable\nwasm backtrace:\n {4}at wasm-function\[\d+\]:0x[0-9a-f]+/);
    expect(logText(s.logPath)).toBe('about to trap\n');
    expect(logText(s.logPath, 'stderr')).toBe(`nodelet: the module trapped: ${exit.message}\n`);
  });

  it('stops a busy-looping module', async () => {
    const s = spec(await pulledFixture('loop'), tmp.dir);
    const c = await provider.startContainer(s, podContext());
    await until(() => logText(s.logPath) === 'looping\n');
    expect(provider.runningCount).toBeGreaterThan(0);
    await c.stop(30_000);
    const exit = await c.exit;
    expect(exit).toMatchObject({ exitCode: KILLED_EXIT_CODE, reason: 'Error' });
    await c.stop(0); // idempotent
  });

  it('stops a module sleeping in poll_oneoff and keeps its ticks', async () => {
    const s = spec(await pulledFixture('sleep'), tmp.dir, ['3600']);
    const c = await provider.startContainer(s, podContext());
    await until(() => logText(s.logPath).includes('tick 1\n'));
    await c.stop(0);
    expect(await c.exit).toMatchObject({ exitCode: KILLED_EXIT_CODE, reason: 'Error' });
    expect(logText(s.logPath)).toMatch(/^sleeping 3600\ntick 1\n/);
  });

  it('lets a short sleep finish on its own', async () => {
    const { spec: s, exit } = await run('sleep', ['1']);
    expect(exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(logText(s.logPath)).toBe('sleeping 1\ntick 1\n');
  });

  it('rejects a duplicate id and an empty argv', async () => {
    const img = await pulledFixture('sleep');
    const s = spec(img, tmp.dir, ['3600']);
    const c = await provider.startContainer(s, podContext());
    await expect(provider.startContainer(s, podContext())).rejects.toSatisfy(isInvalidArgument);
    await c.stop(0);
    await expect(provider.startContainer({ ...spec(img, tmp.dir), argv: [] }, podContext())).rejects.toThrow(/argv is empty/);
  });
});

describe('bad modules', () => {
  it('rejects a file that is not Wasm with InvalidImage', async () => {
    const path = join(tmp.dir, 'bad.wasm');
    writeFileSync(path, 'not wasm at all');
    const err = await provider.startContainer(spec(pulledFile(path, 'bad:1'), tmp.dir), podContext()).catch((e) => e);
    expect(isInvalidImage(err)).toBe(true);
    expect(err.message).toMatch(/bad:1 is not a valid WebAssembly module: not a WebAssembly module \(bad magic number\)/);
  });
  it('rejects a truncated module with InvalidImage', async () => {
    const path = join(tmp.dir, 'trunc.wasm');
    const good = await pulledFixture('hello');
    writeFileSync(path, (await import('node:fs')).readFileSync(good.path).subarray(0, 1000));
    await expect(provider.startContainer(spec(pulledFile(path, 'trunc:1'), tmp.dir), podContext())).rejects.toMatchObject({
      code: 'InvalidImage',
      message: expect.stringMatching(/trunc:1 is not a valid WebAssembly module/),
    });
  });
  it('rejects a module without _start and one with foreign imports', async () => {
    // (module (memory (export "memory") 1))
    const reactor = join(tmp.dir, 'reactor.wasm');
    writeFileSync(reactor, Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 3, 1, 0, 1, 7, 10, 1, 6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 2, 0]));
    await expect(provider.startContainer(spec(pulledFile(reactor, 'r:1'), tmp.dir), podContext())).rejects.toMatchObject({
      code: 'InvalidImage',
      message: expect.stringMatching(/exports no _start function/),
    });
    // (module (import "env" "f" (func)) (memory (export "memory") 1) (func (export "_start")))
    const foreign = join(tmp.dir, 'foreign.wasm');
    writeFileSync(
      foreign,
      Uint8Array.from([
        0,
        0x61,
        0x73,
        0x6d,
        1,
        0,
        0,
        0,
        1,
        4,
        1,
        0x60,
        0,
        0, // type: () -> ()
        2,
        9,
        1,
        3,
        0x65,
        0x6e,
        0x76,
        1,
        0x66,
        0,
        0, // import env.f func type 0
        3,
        2,
        1,
        0, // func section: 1 func of type 0
        5,
        3,
        1,
        0,
        1, // memory min 1
        7,
        19,
        2,
        6,
        0x6d,
        0x65,
        0x6d,
        0x6f,
        0x72,
        0x79,
        2,
        0,
        6,
        0x5f,
        0x73,
        0x74,
        0x61,
        0x72,
        0x74,
        0,
        1, // exports
        10,
        4,
        1,
        2,
        0,
        0x0b, // code
      ]),
    );
    await expect(provider.startContainer(spec(pulledFile(foreign, 'f:1'), tmp.dir), podContext())).rejects.toMatchObject({
      code: 'InvalidImage',
      message: expect.stringMatching(/imports function env\.f/),
    });
  });
});
