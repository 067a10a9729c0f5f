// `nodelet run` through the real command (bin/nodelet.mjs on the built dist/):
// compiled fixture modules run once through the WASI provider, with their
// stdout/stderr on ours and their exit code as ours.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBinary } from '../../harness/node-binary.ts';
import { buildWasmModule } from '../../harness/wasm-modules.ts';

const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet.mjs');
const run = (...args: string[]) => spawnSync(nodeBinary(), [BIN, 'run', ...args], { encoding: 'utf8', timeout: 60_000 });

// Each case spawns nodelet (a second or more on a loaded machine): generous limits, not timing.
describe('nodelet run', { timeout: 120_000 }, () => {
  let dir: string;
  const mod: Record<string, string> = {};
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ndl-run-'));
    writeFileSync(join(dir, 'note.txt'), 'from the host');
    for (const m of ['hello', 'exit-code', 'trap']) mod[m] = await buildWasmModule(m);
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--help prints usage and exits 0', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: nodelet run /);
    expect(r.stdout).toContain('--dir HOST[:GUEST]');
  });

  it("passes argv, --env and --dir, and splits the module's stdout and stderr", () => {
    const r = run('--env', 'GREETING=hi', '--dir', `${dir}:/data`, mod.hello!, '--', 'one', '--ls=/data');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['arg 1 one', 'file /data/note.txt', 'env GREETING=hi']));
    expect(r.stdout).not.toContain('to stderr');
    expect(r.stderr).toContain('to stderr');
  });

  it("exits with the module's exit code", () => {
    const r = run(mod['exit-code']!, '--', '42');
    expect(r.stdout).toBe('exiting with 42\n');
    expect(r.status).toBe(42);
  });

  it('a trapping module fails with its trap message on stderr', () => {
    const r = run(mod.trap!);
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe('about to trap\n');
    expect(r.stderr).toMatch(/^nodelet run: .*unreachable/m);
  });

  it('a missing file, a file that is not WebAssembly, and a bad image reference are clear errors', () => {
    const missing = run(join(dir, 'absent.wasm'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`${join(dir, 'absent.wasm')}: no such file`);
    const notWasm = run(join(dir, 'note.txt'));
    expect(notWasm.status).toBe(1);
    expect(notWasm.stderr).toContain('not a WebAssembly module');
    const badRef = run('Not A Ref');
    expect(badRef.status).toBe(1);
    expect(badRef.stderr).toContain('invalid image reference');
  });
});
