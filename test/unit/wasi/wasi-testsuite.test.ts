// WebAssembly/wasi-testsuite's 72 preview1 tests (test/fixtures/wasi-testsuite/) through
// `nodelet run`, its public command line (bin/nodelet.mjs on the built dist/), each run as the
// suite's own runner runs it (test/harness/wasi-testsuite.ts): a copy of the test's directory
// preopened as "/", its args and env, its exit code and stdout compared. The outcomes are compared
// with the checked-in expectations (wasi-testsuite-expectations.json): a test expected to pass
// that fails is a regression, one expected to fail that passes a stale expectation.
// The same expectations hold for Wasm pods (test/e2e/wasi-testsuite.test.ts).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeBinary } from '../../harness/node-binary.ts';
import {
  compareWithExpectations,
  loadWasiTestsuite,
  mapLimit,
  outcomeOf,
  readExpectations,
  runWasiTest,
  type WasiSuiteTest,
} from '../../harness/wasi-testsuite.ts';

const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet.mjs');
const EXPECTATIONS = resolve(import.meta.dirname, 'wasi-testsuite-expectations.json');

/** `nodelet run --env K=V... [--dir <root copy>:/] <module> -- <args>`: what wasmtime's adapter passes, in nodelet run's flags. */
const nodeletRun = (t: WasiSuiteTest, root: string | undefined) => ({
  file: nodeBinary(),
  args: [
    BIN,
    'run',
    ...Object.entries(t.env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    ...(root === undefined ? [] : ['--dir', `${root}:/`]),
    t.wasm,
    '--',
    ...t.args,
  ],
});

describe('wasi-testsuite preview1 through nodelet run', () => {
  it('loads the 72 preview1 tests, every one named in the expectations', () => {
    const tests = loadWasiTestsuite();
    expect(tests).toHaveLength(72);
    expect(Object.keys(readExpectations(EXPECTATIONS)).sort()).toEqual(tests.map((t) => t.id));
    const args = tests.find((t) => t.id === 'assemblyscript/args_get-multiple-arguments');
    expect(args?.args).toEqual(['first', 'the "second" arg', '3']);
    expect(tests.find((t) => t.id === 'assemblyscript/proc_exit-failure')?.exitCode).toBe(33);
    expect(tests.find((t) => t.id === 'rust/fd_readdir')?.root).toMatch(/rust\/fs-tests\.dir$/);
  });

  it('reports a regression and a stale expectation', () => {
    const [t] = loadWasiTestsuite().filter((x) => x.id === 'assemblyscript/fd_write-to-stdout');
    const good = outcomeOf(t!, 0, 'hello', '');
    const bad = outcomeOf(t!, 0, 'hel', '');
    expect(good.passed).toBe(true);
    expect(bad.failures).toEqual(['read stdout: expected "hello", got "hel"']);
    expect(compareWithExpectations([good], { [t!.id]: 'pass' })).toEqual([]);
    expect(compareWithExpectations([bad], { [t!.id]: 'pass' })[0]).toMatch(/^assemblyscript\/fd_write-to-stdout: expected to pass, failed/);
    expect(compareWithExpectations([good], { [t!.id]: { fail: 'why' } })[0]).toMatch(/expected to fail \(why\), passed/);
  });

  // Each test spawns nodelet (~0.6 s); two at a time on the machine's two cores.
  it('every test passes or fails as the expectations say', { timeout: 600_000 }, async () => {
    const outcomes = await mapLimit(loadWasiTestsuite(), 2, (t) => runWasiTest(t, nodeletRun));
    expect(compareWithExpectations(outcomes, readExpectations(EXPECTATIONS))).toEqual([]);
  });
});
