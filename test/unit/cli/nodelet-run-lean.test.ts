// The lean `nodelet run` through the real command (bin/nodelet.mjs on the built dist/): a
// module run in nodelet's own thread stops on SIGINT as a stopped container (137) and on a
// closed stdout as on SIGPIPE (141), a start section is bounded, a WASI 0.2 component still
// runs through the provider, and modules of 512 KiB and more keep their compiled code in
// $XDG_CACHE_HOME/nodelet/wasm-code: used by the next run, replaced when damaged, not kept
// with NODE_DISABLE_COMPILE_CACHE.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBinary } from '../../harness/node-binary.ts';
import { buildWasmModule, START_LOOP_MODULE } from '../../harness/wasm-modules.ts';
import { buildComponent } from '../../harness/wasm-components.ts';
import { withPadding } from './wasm-padding.ts';

const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet.mjs');
let dir: string;
const mod: Record<string, string> = {};
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ndl-run-lean-'));
  for (const m of ['hello', 'loop', 'spew']) mod[m] = await buildWasmModule(m);
  // hello.wasm is below the cache's 512 KiB: a custom section makes a module the cache keeps.
  mod.big = join(dir, 'hello-big.wasm');
  writeFileSync(mod.big, withPadding(readFileSync(mod.hello!), 600 * 1024));
  mod['start-loop'] = join(dir, 'start-loop.wasm');
  writeFileSync(mod['start-loop'], START_LOOP_MODULE);
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `nodelet run args` with its caches under `cacheHome`. */
function run(cacheHome: string, args: string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(nodeBinary(), [BIN, 'run', ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, XDG_CACHE_HOME: cacheHome, ...env } });
}

describe('nodelet run in its own thread', { timeout: 120_000 }, () => {
  it('SIGINT stops a busy module: exit 137, as a stopped container, with nothing more on stderr', async () => {
    const child = spawn(nodeBinary(), [BIN, 'run', mod.loop!], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, XDG_CACHE_HOME: dir } });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await new Promise<void>((ok) =>
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes('looping\n')) ok();
      }),
    );
    child.kill('SIGINT');
    const [code, signal] = await new Promise<[number | null, string | null]>((ok) => child.on('exit', (c, s) => ok([c, s])));
    expect({ code, signal, stderr }).toEqual({ code: 137, signal: null, stderr: '' });
  });

  it('a closed stdout stops the module as SIGPIPE would: exit 141', async () => {
    const child = spawn(nodeBinary(), [BIN, 'run', mod.spew!, '--', '50'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, XDG_CACHE_HOME: dir } });
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((ok) => child.on('exit', (c) => ok(c)));
    expect(code).toBe(141);
  });

  it('a start section that does not return is stopped after NODELET_WASI_START_TIMEOUT_MS: exit 1 and the reason', () => {
    const r = run(dir, [mod['start-loop']!], { NODELET_WASI_START_TIMEOUT_MS: '300' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^nodelet run: the module of image .*start-loop\.wasm did not finish instantiating within 0\.3s: its start function/m);
  });

  it('two --dir at one guest path are refused as the provider refuses them', () => {
    const r = run(dir, ['--dir', `${dir}:/a`, '--dir', `${dir}:/a`, mod.hello!]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('nodelet run: container run: mountPath /a is used twice\n');
  });

  it('a WASI 0.2 component still runs, through the provider', async () => {
    const component = await buildComponent('cli-read');
    writeFileSync(join(dir, 'note.txt'), 'from the host\n');
    const r = run(dir, ['--env', 'GREETING=hi', '--dir', `${dir}:/data`, component, '--', '/data/note.txt']);
    expect(r.stdout).toContain('greeting: hi\nfile /data/note.txt: from the host\n');
    expect(r.stderr).toContain('exiting with 3');
    expect(r.status).toBe(3);
  }, 600_000);
});

describe('the compile cache of nodelet run', { timeout: 120_000 }, () => {
  const expectHello = (r: SpawnSyncReturns<string>) => {
    expect(r.stderr).toBe('to stderr\n');
    expect(r.stdout).toContain('arg 1 one\n');
    expect(r.status).toBe(0);
  };

  it("keeps a large module's code after its first run and uses it in the next; a damaged entry is compiled past and replaced", () => {
    const home = mkdtempSync(join(dir, 'cache-'));
    const cacheDir = join(home, 'nodelet', 'wasm-code');
    expectHello(run(home, [mod.big!, 'one']));
    const [entry] = readdirSync(cacheDir);
    expect(entry).toMatch(/^[0-9a-f]{8}-\d+\.wasm-code$/);
    const path = join(cacheDir, entry!);
    const stored = statSync(path);

    // Used, not rewritten: the same file (inode), its time touched (least recently used goes first).
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(path, old, old);
    expectHello(run(home, [mod.big!, 'one']));
    const used = statSync(path);
    expect(used.ino).toBe(stored.ino);
    expect(used.mtimeMs).toBeGreaterThan(old.getTime());

    // Damaged in its code: the run compiles the module and stores a sound entry (a new file).
    const damaged = readFileSync(path);
    damaged[damaged.length - 64]! ^= 0xff;
    writeFileSync(path, damaged);
    expectHello(run(home, [mod.big!, 'one']));
    expect(statSync(path).ino).not.toBe(used.ino);
    expect(readFileSync(path).equals(damaged)).toBe(false);
    expectHello(run(home, [mod.big!, 'one']));
  });

  it('keeps nothing for a small module, with NODE_DISABLE_COMPILE_CACHE, or in a directory others can write', () => {
    const home = mkdtempSync(join(dir, 'cache-'));
    const cacheDir = join(home, 'nodelet', 'wasm-code');
    const entries = () => {
      try {
        return readdirSync(cacheDir);
      } catch {
        return [];
      }
    };
    expectHello(run(home, [mod.hello!, 'one']));
    expect(entries()).toEqual([]);
    expectHello(run(home, [mod.big!, 'one'], { NODE_DISABLE_COMPILE_CACHE: '1' }));
    expect(entries()).toEqual([]);
    mkdirSync(cacheDir, { recursive: true });
    chmodSync(cacheDir, 0o777);
    expectHello(run(home, [mod.big!, 'one']));
    expect(entries()).toEqual([]);
  });
});
