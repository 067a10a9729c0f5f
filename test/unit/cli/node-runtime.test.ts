/** bin/node-runtime.mjs: a Node older than 24 re-runs the command on the bundled Node 24. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const RUNTIME = pathToFileURL(resolve(import.meta.dirname, '..', '..', '..', 'bin', 'node-runtime.mjs')).href;
const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet.mjs');
const dir = mkdtempSync(join(tmpdir(), 'node-runtime-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The machine's own node (Debian's, v20 here), whatever npm put first on PATH. */
const SYSTEM_NODE = '/usr/bin/node';
const systemMajor = Number(spawnSync(SYSTEM_NODE, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout?.trim() ?? 0);

describe.skipIf(!(systemMajor > 0 && systemMajor < 24))('relaunch from an older node (skipped: the machine has no node older than 24 at /usr/bin/node)', () => {
  it('runs the script on Node 24 with the same arguments and returns its exit code', () => {
    const script = join(dir, 'child.mjs');
    writeFileSync(script, 'console.log(JSON.stringify({ v: process.version, args: process.argv.slice(2) })); process.exit(3);\n');
    const launcher = join(dir, 'launch.mjs');
    writeFileSync(
      launcher,
      `import { relaunchOnSupportedNode } from ${JSON.stringify(RUNTIME)};\n` +
        `process.exitCode = await relaunchOnSupportedNode(${JSON.stringify(script)}, process.argv.slice(2));\n`,
    );
    const r = spawnSync(SYSTEM_NODE, [launcher, 'a', '--b=c'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(3);
    const out = JSON.parse(r.stdout.trim()) as { v: string; args: string[] };
    expect(out.v).toMatch(/^v24\./);
    expect(out.args).toEqual(['a', '--b=c']);
  });

  it('the nodelet command started by an old node answers and keeps its exit status', () => {
    expect(spawnSync(SYSTEM_NODE, [BIN, '--version'], { encoding: 'utf8', timeout: 20_000 }).status).toBe(0);
    const bad = spawnSync(SYSTEM_NODE, [BIN, '--no-such-flag'], { encoding: 'utf8', timeout: 20_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--no-such-flag');
  });
});

describe('on Node 24', () => {
  it('does nothing (the caller goes on)', async () => {
    const { relaunchOnSupportedNode } = (await import(RUNTIME)) as { relaunchOnSupportedNode: (s: string, a: string[]) => Promise<number | undefined> };
    if (Number(process.versions.node.split('.')[0]) < 24) return expect.fail(`tests must run on Node 24, not ${process.version}`);
    expect(await relaunchOnSupportedNode('/nonexistent.mjs', [])).toBeUndefined();
  });
});

describe('V8 flags (re-executed in place on Node 24)', () => {
  // A script that re-executes itself like bin/nodelet.mjs and prints what it ran with.
  const script = join(dir, 'v8-flags.mjs');
  writeFileSync(
    script,
    `import { reexecWithV8Flags } from ${JSON.stringify(RUNTIME)};\n` +
      `reexecWithV8Flags(import.meta.filename, process.argv.slice(2));\n` +
      `const v8 = await import('node:v8');\n` +
      `const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');\n` +
      // A small function called 2,000 times: V8's default tiering optimizes it, nodelet's does not yet.
      `v8.setFlagsFromString('--allow-natives-syntax');\n` +
      `const status = new Function('f', 'return %GetOptimizationStatus(f)');\n` +
      `function hot(a, b) { return a.length + b; }\n` +
      `for (let i = 0; i < 2000; i++) hot('xy', i);\n` +
      `await new Promise((r) => setTimeout(r, 100));\n` +
      `const optimized = (status(hot) & 16) !== 0;\n` +
      `console.log(JSON.stringify({ pid: process.pid, execArgv: process.execArgv, args: process.argv.slice(2), maxNewSpace: young.space_size, optimized }));\n`,
  );
  const run = (args: string[], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []) => {
    const r = spawnSync(process.execPath, ['--no-warnings', ...nodeArgs, script, ...args], {
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, NODE_OPTIONS: '', ...env },
    });
    expect(r.status, r.stderr).toBe(0);
    return { pid: r.pid, out: JSON.parse(r.stdout.trim()) as { pid: number; execArgv: string[]; args: string[]; maxNewSpace: number; optimized: boolean } };
  };

  const TIERING = ['--invocation-count-for-maglev=12000', '--invocation-count-for-turbofan=90000'];

  it('adds its V8 flags in the same process (same pid), keeping node arguments and the command line', () => {
    const { pid, out } = run(['--port=1', 'x']);
    expect(out.pid).toBe(pid);
    expect(out.execArgv).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=50', ...TIERING, '--no-warnings']);
    expect(out.args).toEqual(['--port=1', 'x']);
    expect(out.maxNewSpace).toBeLessThanOrEqual(8 << 20);
  });

  it("keeps the operator's value, from NODE_OPTIONS or node arguments (either spelling)", async () => {
    // (V8 takes --heap-growing-percent on the command line only, not from NODE_OPTIONS)
    expect(run([], { NODE_OPTIONS: '--max-semi-space-size=8' }).out.execArgv).toEqual(['--heap-growing-percent=50', ...TIERING, '--no-warnings']);
    const { missingV8Flags } = (await import(RUNTIME)) as { missingV8Flags: (a: string[], o: string) => string[] };
    expect(missingV8Flags(['--max_semi_space_size=16', '--heap_growing_percent=20'], '')).toEqual(TIERING);
    expect(
      missingV8Flags(
        ['--max_semi_space_size=16', '--heap_growing_percent=20', '--invocation_count_for_maglev=400', '--invocation-count-for-turbofan=3000'],
        '',
      ),
    ).toEqual([]);
    expect(missingV8Flags([], '--max-old-space-size=100')).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=50', ...TIERING]);
  });

  it('optimizes later than V8 by default: a function called 2,000 times stays unoptimized', () => {
    expect(run([]).out.optimized).toBe(false);
    // The same script with V8's own thresholds (given, so not re-executed): optimized.
    expect(run([], {}, ['--invocation-count-for-maglev=400', '--invocation-count-for-turbofan=3000']).out.optimized).toBe(true);
  });

  it('does not start twice for --help or --version', () => {
    expect(run(['--help']).out.execArgv).toEqual(['--no-warnings']);
    expect(run(['--version']).out.execArgv).toEqual(['--no-warnings']);
  });
});

describe("V8's optimizing tiers held during start-up (holdOptimizingTiers)", () => {
  // Calls a small function 20,000 times (V8's own thresholds optimize it) while held and again once released.
  const script = join(dir, 'tiers.mjs');
  writeFileSync(
    script,
    `import { holdOptimizingTiers } from ${JSON.stringify(RUNTIME)};\n` +
      `const v8 = await import('node:v8');\n` +
      `v8.setFlagsFromString('--allow-natives-syntax');\n` +
      `const status = new Function('f', 'return %GetOptimizationStatus(f)');\n` +
      `const release = holdOptimizingTiers(undefined, undefined, Number(process.env.HOLD_MS ?? 60000));\n` +
      `function hot(a, b) { return a.length + b; }\n` +
      `const optimized = async () => { for (let i = 0; i < 20000; i++) hot('xy', i); await new Promise((r) => setTimeout(r, 100)); return (status(hot) & 16) !== 0; };\n` +
      `const held = await optimized();\n` +
      `if (process.env.HOLD_MS) await new Promise((r) => setTimeout(r, 2 * Number(process.env.HOLD_MS))); else release();\n` +
      `console.log(JSON.stringify({ held, released: await optimized() }));\n`,
  );
  const run = (nodeArgs: string[], env: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync(process.execPath, ['--no-warnings', ...nodeArgs, script], {
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, NODE_OPTIONS: '', ...env },
    });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout.trim()) as { held: boolean; released: boolean };
  };

  it('nothing is optimized while held; the same function is once released', () => {
    expect(run([])).toEqual({ held: false, released: true });
  });

  it('ends by itself after its longest hold, released or not', () => {
    expect(run([], { HOLD_MS: '1000' })).toEqual({ held: false, released: true });
  });

  it('holds nothing when the operator chooses a tier, in node arguments or NODE_OPTIONS', () => {
    expect(run(['--maglev'])).toEqual({ held: true, released: true });
    expect(run(['--max-opt=1'])).toEqual({ held: false, released: false });
    // (NODE_OPTIONS takes few V8 flags; --jitless is one, and the release must not undo it)
    expect(run([], { NODE_OPTIONS: '--jitless' })).toEqual({ held: false, released: false });
  });
});
