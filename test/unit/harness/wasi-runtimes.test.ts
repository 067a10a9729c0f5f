/**
 * test/harness/wasi-runtimes.ts: a WASI runtime left by a test (nodelet's default runtime outlives
 * nodelet) is killed by root dir — at the test process's exit when the test never disposed its
 * nodelet, or by the e2e global teardown from the list file when the test process itself was killed.
 * A `sleep` in its own session stands in for the runtime (as the runtime, it leads its process group).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../harness/until.ts';
import { killListedWasiRuntimes, wasiRuntimePid } from '../../harness/wasi-runtimes.ts';

const HARNESS = resolve(import.meta.dirname, '..', '..', 'harness', 'wasi-runtimes.ts');
const base = mkdtempSync(join(tmpdir(), 'wasi-runtimes-test-'));
const spawned: number[] = [];
afterAll(() => {
  for (const pid of spawned) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone, as expected
    }
  }
  rmSync(base, { recursive: true, force: true });
});

/** A root dir with a pid file naming a fresh session leader. */
function fakeRuntime(name: string): { rootDir: string; pid: number } {
  const rootDir = join(base, name);
  mkdirSync(join(rootDir, 'providers-data', 'wasi'), { recursive: true });
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  child.unref();
  spawned.push(child.pid!);
  writeFileSync(join(rootDir, 'providers-data', 'wasi', 'runtime.pid'), `${child.pid}\n`);
  return { rootDir, pid: child.pid! };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    // a zombie (killed, not yet reaped by this process) counts as gone
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

describe('WASI runtimes started by tests', () => {
  it('a tracked root dir whose nodelet was never disposed has its runtime killed when the test process exits', async () => {
    const { rootDir, pid } = fakeRuntime('exit');
    expect(wasiRuntimePid(rootDir)).toBe(pid);
    const code = `import { trackWasiRuntime } from ${JSON.stringify(HARNESS)}; trackWasiRuntime(${JSON.stringify(rootDir)}); process.exitCode = 3;`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(3);
    await until('the runtime killed at the test process exit', () => !alive(pid), 5000);
    expect(alive(pid)).toBe(false);
  });

  it('the global teardown kills the runtimes listed by a test process that was itself killed; others are left alone', async () => {
    const listed = fakeRuntime('listed');
    const other = fakeRuntime('other');
    const list = join(base, 'root-dirs');
    const code = `import { trackWasiRuntime } from ${JSON.stringify(HARNESS)}; trackWasiRuntime(${JSON.stringify(listed.rootDir)}, ${JSON.stringify(list)}); process.kill(process.pid, 'SIGKILL');`;
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 });
    expect(alive(listed.pid)).toBe(true); // no exit hook ran
    await killListedWasiRuntimes(list);
    expect(alive(listed.pid)).toBe(false);
    expect(alive(other.pid)).toBe(true);
  });
});
