/**
 * WebAssembly/wasi-testsuite's preview1 tests (vendored in test/fixtures/wasi-testsuite/), run the
 * way the suite's own runner does (its test-runner/wasi_test_runner: test_case.py's legacy
 * configuration and test_suite_runner.py's TestCaseRunner):
 *
 *   <name>.json  { args?, env?, root?, exit_code? (0), stdout?, stderr? }   (absent: all defaults)
 *   run    the runtime's command (built by the caller) with stdin, stdout and stderr as pipes;
 *          `root` is preopened as "/" (wasmtime's adapter: --dir <root>::/) — here a fresh copy
 *          of it in a temporary directory, so that tests may run in parallel and nothing
 *          they leave behind (upstream deletes `*.cleanup` between runs) reaches the next
 *   read   stdout, then stderr, when the spec names them: the first len(expected) characters
 *          must equal the expected text (upstream reads exactly that many)
 *   wait   stdin closed; the exit code must equal exit_code
 *
 * A test passes when every step does. The runtime is whatever `command` spawns: `nodelet run`,
 * wasmtime, or a Wasm pod through a caller's own runner (`outcomeOf` judges an exit code and output
 * obtained elsewhere).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

/** Where the vendored suite lives. */
export const WASI_TESTSUITE_DIR = resolve(import.meta.dirname, '..', 'fixtures', 'wasi-testsuite');

/** The languages the suite's preview1 tests are written in (one directory each). */
const SUITES = ['assemblyscript', 'c', 'rust'] as const;

/** One test of the suite, with its spec's defaults filled in. */
export interface WasiSuiteTest {
  /** `<suite>/<name>`, e.g. `rust/fd_readdir`: the key of the expectations file. */
  readonly id: string;
  readonly suite: (typeof SUITES)[number];
  readonly name: string;
  /** Absolute path of the module. */
  readonly wasm: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Absolute path of the directory to preopen as "/" (copied first), if any. */
  readonly root: string | undefined;
  readonly exitCode: number;
  readonly stdout: string | undefined;
  readonly stderr: string | undefined;
}

interface Spec {
  args?: string[];
  env?: Record<string, string>;
  root?: string;
  exit_code?: number;
  stdout?: string;
  stderr?: string;
}

/** Every preview1 test of the vendored suite, sorted by id. */
export function loadWasiTestsuite(dir = WASI_TESTSUITE_DIR): WasiSuiteTest[] {
  const tests: WasiSuiteTest[] = [];
  for (const suite of SUITES) {
    const sdir = join(dir, suite);
    for (const f of readdirSync(sdir).filter((n) => n.endsWith('.wasm'))) {
      const name = basename(f, '.wasm');
      const specPath = join(sdir, `${name}.json`);
      const spec = (existsSync(specPath) ? JSON.parse(readFileSync(specPath, 'utf8')) : {}) as Spec;
      tests.push({
        id: `${suite}/${name}`,
        suite,
        name,
        wasm: join(sdir, f),
        args: spec.args ?? [],
        env: spec.env ?? {},
        root: spec.root === undefined ? undefined : join(sdir, spec.root),
        exitCode: spec.exit_code ?? 0,
        stdout: spec.stdout,
        stderr: spec.stderr,
      });
    }
  }
  return tests.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** What one run of a test gave and what the suite's runner would say about it. */
export interface WasiTestOutcome {
  readonly id: string;
  readonly passed: boolean;
  /** Why it failed, as upstream's runner words it (empty when it passed). */
  readonly failures: string[];
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Judges a finished run against the test's expectations (upstream's read and wait steps). */
export function outcomeOf(t: WasiSuiteTest, exitCode: number | null, stdout: string, stderr: string): WasiTestOutcome {
  const failures: string[] = [];
  for (const [stream, expected, got] of [
    ['stdout', t.stdout, stdout],
    ['stderr', t.stderr, stderr],
  ] as const) {
    if (expected === undefined) continue;
    const head = got.slice(0, expected.length);
    if (head !== expected) failures.push(`read ${stream}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(head)}`);
  }
  if (exitCode !== t.exitCode) failures.push(`wait: expected exit code ${t.exitCode}, got ${exitCode}`);
  return { id: t.id, passed: failures.length === 0, failures, exitCode, stdout, stderr };
}

/** A fresh copy of the test's `root` directory (named as upstream's) in a new temporary directory. */
export function copyRoot(t: WasiSuiteTest): { dir: string | undefined; dispose(): void } {
  if (t.root === undefined) return { dir: undefined, dispose: () => {} };
  const tmp = mkdtempSync(join(tmpdir(), 'wasi-testsuite-'));
  const dir = join(tmp, basename(t.root));
  cpSync(t.root, dir, { recursive: true, verbatimSymlinks: true });
  return { dir, dispose: () => rmSync(tmp, { recursive: true, force: true }) };
}

/** The command that runs test `t` with its root copy preopened as "/" at `root`. */
export type WasiTestCommand = (t: WasiSuiteTest, root: string | undefined) => { file: string; args: string[] };

/**
 * Runs one test: `command` spawned with stdio pipes, stdin closed once the expected output was
 * read (or at once when none is expected), killed after `timeoutMs` (then it fails).
 */
export async function runWasiTest(t: WasiSuiteTest, command: WasiTestCommand, timeoutMs = 60_000): Promise<WasiTestOutcome> {
  const root = copyRoot(t);
  try {
    const { file, args } = command(t, root.dir);
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const expectOut = t.stdout?.length ?? 0;
    const expectErr = t.stderr?.length ?? 0;
    const closeStdinWhenRead = () => {
      if (stdout.length >= expectOut && stderr.length >= expectErr) child.stdin.end();
    };
    child.stdin.on('error', () => {}); // the module may end without reading it
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      closeStdinWhenRead();
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
      closeStdinWhenRead();
    });
    closeStdinWhenRead();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const exitCode = await new Promise<number | null>((done, fail) => {
      child.once('error', fail);
      child.once('close', (code) => done(code));
    }).finally(() => clearTimeout(timer));
    const outcome = outcomeOf(t, exitCode, stdout, stderr);
    return timedOut ? { ...outcome, passed: false, failures: [`wait: timed out after ${timeoutMs} ms`, ...outcome.failures] } : outcome;
  } finally {
    root.dispose();
  }
}

/** Runs `fn` over `items`, at most `limit` at a time, keeping the order of the results. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * The checked-in expectations: for each test id, "pass", or the reason it is known to fail.
 * A test the file does not name must pass.
 */
export type WasiExpectations = Readonly<Record<string, 'pass' | { fail: string }>>;

/** Reads an expectations file (JSON: `{ "<id>": "pass" | { "fail": "<why>" } }`). */
export function readExpectations(path: string): WasiExpectations {
  return JSON.parse(readFileSync(path, 'utf8')) as WasiExpectations;
}

/**
 * Compares outcomes with expectations, as upstream's runner does with its expectation files: a
 * test expected to pass that fails is a regression, a test expected to fail that passes a stale
 * expectation; both are returned as lines to report (empty: all as expected).
 */
export function compareWithExpectations(outcomes: readonly WasiTestOutcome[], expected: WasiExpectations): string[] {
  const problems: string[] = [];
  for (const o of outcomes) {
    const e = expected[o.id] ?? 'pass';
    if (e === 'pass' && !o.passed) problems.push(`${o.id}: expected to pass, failed: ${o.failures.join('; ')}\n${indent(tail(o.stderr || o.stdout))}`);
    if (e !== 'pass' && o.passed) problems.push(`${o.id}: expected to fail (${e.fail}), passed: mark it "pass" in the expectations`);
  }
  for (const id of Object.keys(expected)) if (!outcomes.some((o) => o.id === id)) problems.push(`${id}: in the expectations but not in the suite`);
  return problems;
}

const tail = (s: string) => s.split('\n').slice(0, 12).join('\n');
const indent = (s: string) =>
  s
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
