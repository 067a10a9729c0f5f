// run-once.ts: a preview1 module run to its end on the calling thread (what `nodelet run`
// uses), with the provider's checks and outcomes; its output written to the descriptors given.
import { closeSync, mkdirSync, openSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mount } from '@nodelet/plugin-api/v1';
import { DEFAULT_START_TIMEOUT_MS, WasiProvider } from '../src/index.ts';
import { loadCommandModule, ModuleRefused, RUN_START_TIMEOUT_MS, runCommandModule, type RunRequest } from '../src/run-once.ts';
import { buildWasmModule, START_LOOP_MODULE } from '../../../test/harness/wasm-modules.ts';
import { copyRoot, loadWasiTestsuite, outcomeOf } from '../../../test/harness/wasi-testsuite.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, pulledFixture, scratch, spec } from './helpers.ts';

const tmp = scratch();
let provider: WasiProvider;
beforeAll(async () => {
  provider = new WasiProvider();
  await provider.init(providerContext(new FakeImages()));
});
afterAll(async () => {
  await provider.shutdown();
  tmp.cleanup();
});

/** Runs `name` (a test fixture) with its output in two files; returns the outcome and the output. */
async function runFixture(name: string, req: Partial<RunRequest> = {}) {
  return runFile(await buildWasmModule(name), name, req);
}

/** Runs the module at `path` with its output in two files; returns the outcome and the output. */
async function runFile(path: string, name: string, req: Partial<RunRequest> = {}) {
  const bytes = readFileSync(path);
  const out = join(tmp.dir, `${name}-${Math.random().toString(36).slice(2)}`);
  const stdoutFd = openSync(`${out}.out`, 'w');
  const stderrFd = openSync(`${out}.err`, 'w');
  try {
    const loaded = await loadCommandModule(bytes, `${name}.wasm`);
    const outcome = runCommandModule(loaded, { image: `${name}.wasm`, name: 'run', argv: [name], env: {}, mounts: [], stdoutFd, stderrFd, ...req });
    return { outcome, stdout: readFileSync(`${out}.out`, 'utf8'), stderr: readFileSync(`${out}.err`, 'utf8') };
  } finally {
    closeSync(stdoutFd);
    closeSync(stderrFd);
  }
}

describe('runCommandModule', () => {
  it("bounds a start section by the provider's start timeout", () => {
    expect(RUN_START_TIMEOUT_MS).toBe(DEFAULT_START_TIMEOUT_MS);
  });

  it("writes the module's stdout and stderr to the descriptors given and ends with its exit code", async () => {
    const r = await runFixture('hello', { argv: ['hello', 'one'], env: { GREETING: 'hi' } });
    expect(r.outcome.exit).toEqual({ exitCode: 0, reason: 'Completed' });
    expect(r.outcome.instance).toBeInstanceOf(WebAssembly.Instance);
    expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['arg 0 hello', 'arg 1 one', 'env GREETING=hi']));
    expect(r.stderr).toBe('to stderr\n');
    const exit = await runFixture('exit-code', { argv: ['exit-code', '42'] });
    expect(exit.outcome.exit).toEqual({ exitCode: 42, reason: 'Error' });
  });

  it('a trap ends the run with 134 and its report, written to stderr as the worker writes it to the log', async () => {
    const r = await runFixture('trap');
    expect(r.outcome.exit).toMatchObject({ exitCode: 134, reason: 'Error', message: expect.stringMatching(/^RuntimeError: unreachable\nwasm backtrace:/) });
    expect(r.stdout).toBe('about to trap\n');
    expect(r.stderr).toBe(`nodelet: the module trapped: ${r.outcome.exit.message}\n`);
  });

  it("refuses what the provider refuses, with the provider's messages", async () => {
    const err = (p: Promise<unknown>) =>
      p.then(
        () => expect.fail('not refused'),
        (e: unknown) => e,
      );
    const dup = await err(runFixture('hello', { mounts: [0, 1].map((i) => ({ name: `dir-${i}`, hostPath: tmp.dir, containerPath: '/a', readOnly: false })) }));
    expect(dup).toBeInstanceOf(ModuleRefused);
    expect(dup).toMatchObject({ code: 'InvalidArgument', message: 'container run: mountPath /a is used twice' });
    const notWasm = await err(loadCommandModule(Buffer.from('\0asm\x01\0\0\0garbage'), 'bad.wasm'));
    expect(notWasm).toMatchObject({ code: 'InvalidImage', message: expect.stringMatching(/^image bad\.wasm is not a valid WebAssembly module: /) });
    // (module (memory (export "memory") 1)): no _start.
    const reactor = Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 3, 1, 0, 1, 7, 10, 1, 6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 2, 0]);
    expect(await err(loadCommandModule(reactor, 'reactor.wasm'))).toMatchObject({
      code: 'InvalidImage',
      message: 'image reactor.wasm is not a WASI preview1 command module: it exports no _start function (a reactor or library module?)',
    });
  });

  it('stops a start section that does not return within NODELET_WASI_START_TIMEOUT_MS', async () => {
    const path = join(tmp.dir, 'start-loop.wasm');
    writeFileSync(path, START_LOOP_MODULE);
    const loaded = await loadCommandModule(readFileSync(path), 'start-loop.wasm');
    expect(loaded.startFunction).toBe(true);
    expect(() =>
      runCommandModule(loaded, {
        image: 'start-loop.wasm',
        name: 'run',
        argv: ['m'],
        env: {},
        mounts: [],
        processEnv: { NODELET_WASI_START_TIMEOUT_MS: '200' },
      }),
    ).toThrow(/^the module of image start-loop\.wasm did not finish instantiating within 0\.2s: its start function \(run before _start\) does not return/);
  });
});

// The in-thread run and a container's worker apply the same WASI layer: the same module with the
// same mounts gives the same output and exit code both ways (trap offsets aside: the provider
// rewrites memory.grow of a module whose limit may change, which moves the code).
describe('the same as a container', () => {
  /** A read-only and a read-write volume, fresh for each run. */
  const volumes = (): Mount[] => {
    const base = join(tmp.dir, `vols-${Math.random().toString(36).slice(2)}`);
    mkdirSync(join(base, 'ro', 'sub'), { recursive: true });
    mkdirSync(join(base, 'rw'), { recursive: true });
    writeFileSync(join(base, 'ro', 'existing'), 'original');
    return [
      { name: 'config', hostPath: join(base, 'ro'), containerPath: '/ro', readOnly: true },
      { name: 'data', hostPath: join(base, 'rw'), containerPath: '/rw', readOnly: false },
    ];
  };
  const offsets = (s: string) => s.replace(/:0x[0-9a-f]+/g, ':0x…');

  it.each([
    ['hello', ['one', '--ls=/ro', '--ls=/rw']],
    ['read-file', ['/ro/existing', '/ro/absent']],
    ['write-file', ['/rw/new.txt', 'text']],
    ['fs-ops', ['open-write', '/ro/existing']],
    ['fs-ops', ['mkdir', '/ro/made']],
    ['fs-ops', ['rename', '/ro/existing', '/rw/moved']],
    ['escape', ['/rw/out/hostname', '/etc', '/rw/out']],
    ['stdin-echo', []],
    ['exit-code', ['7']],
    ['trap', []],
  ])('%s %j', async (fixture, args) => {
    const s = spec(await pulledFixture(fixture), tmp.dir, args, { mounts: volumes(), env: { GREETING: 'hi' } });
    const container = await provider.startContainer(s, podContext());
    const exit = await container.exit;
    const asContainer = { exitCode: exit.exitCode, stdout: logText(s.logPath), stderr: offsets(logText(s.logPath, 'stderr')) };
    const here = await runFixture(fixture, { argv: s.argv, env: s.env, mounts: volumes() });
    expect({ exitCode: here.outcome.exit.exitCode, stdout: here.stdout, stderr: offsets(here.stderr) }).toEqual(asContainer);
  });
});

// Where node:wasi departs from wasmtime (worker/wasi-semantics.mjs), the in-thread run answers as a
// container's worker does: tests of WebAssembly/wasi-testsuite that plain node:wasi fails pass both
// ways, with the same output and exit code (its directory a fresh copy preopened as "/", as the
// suite's runner does).
describe('wasmtime semantics, as in a container', () => {
  const suite = loadWasiTestsuite();
  // Rust's HashMap iterates in an order chosen at random each run (poll_oneoff_stdio prints one).
  const unordered = (s: string) => s.replace(/\{([^{}]*)\}/g, (_, items: string) => `{${items.split(', ').sort().join(', ')}}`);
  it.each([
    'assemblyscript/fd_write-to-invalid-fd',
    'c/sock_shutdown-invalid_fd',
    'c/sock_shutdown-not_sock',
    'rust/fd_readdir',
    'rust/nofollow_errors',
    'rust/readlink',
    'rust/fd_filestat_set',
    'rust/truncation_rights',
    'rust/poll_oneoff_stdio',
    'rust/dangling_symlink',
  ])('%s', async (id) => {
    const t = suite.find((x) => x.id === id)!;
    const mounts = (dir: string | undefined): Mount[] =>
      dir === undefined ? [] : [{ name: 'root', hostPath: realpathSync(dir), containerPath: '/', readOnly: false }];
    const forContainer = copyRoot(t);
    const forRun = copyRoot(t);
    try {
      const s = spec(pulledFile(t.wasm, `${t.name}.wasm`), tmp.dir, [...t.args], { mounts: mounts(forContainer.dir), env: { ...t.env } });
      const exit = await (await provider.startContainer(s, podContext())).exit;
      const asContainer = outcomeOf(t, exit.exitCode, logText(s.logPath), logText(s.logPath, 'stderr'));
      const r = await runFile(t.wasm, t.name, { argv: s.argv, env: s.env, mounts: mounts(forRun.dir) });
      const here = outcomeOf(t, r.outcome.exit.exitCode, r.stdout, r.stderr);
      expect(asContainer.failures).toEqual([]);
      expect(here.failures).toEqual([]);
      expect({ stdout: unordered(here.stdout), stderr: here.stderr }).toEqual({ stdout: unordered(asContainer.stdout), stderr: asContainer.stderr });
    } finally {
      forContainer.dispose();
      forRun.dispose();
    }
  });
});
