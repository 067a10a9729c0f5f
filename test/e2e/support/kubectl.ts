/** The real kubectl (built with the control plane) talking to the test apiserver as admin. */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { ClusterInfo } from '../../cluster/control-plane.ts';

/** Runs kubectl to completion (as admin, or with `kubeconfig`); returns its exit status and output. */
export function kubectl(info: ClusterInfo, args: string[], kubeconfig = info.adminKubeconfig): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(join(info.binDir, 'kubectl'), [`--kubeconfig=${kubeconfig}`, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Starts `kubectl args` (as admin, or with `kubeconfig`) and collects stdout lines as they arrive;
 * `write` sends to its stdin (a pipe only with `opts.stdin`), `stderr` is what it printed there.
 */
export function kubectlStream(
  info: ClusterInfo,
  args: string[],
  kubeconfig = info.adminKubeconfig,
  opts: { stdin?: boolean } = {},
): { lines: string[]; stderr(): string; done: Promise<number | null>; kill(): void; write(s: string): void } {
  const p = spawn(join(info.binDir, 'kubectl'), [`--kubeconfig=${kubeconfig}`, ...args], { stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  let err = '';
  p.stderr!.setEncoding('utf8');
  p.stderr!.on('data', (c: string) => (err += c));
  const lines: string[] = [];
  let buf = '';
  p.stdout!.setEncoding('utf8');
  p.stdout!.on('data', (c: string) => {
    buf += c;
    const parts = buf.split('\n');
    buf = parts.pop()!;
    lines.push(...parts);
  });
  const done = new Promise<number | null>((r) => p.on('exit', (code) => r(code)));
  return { lines, stderr: () => err, done, kill: () => p.kill('SIGTERM'), write: (s) => void p.stdin?.write(s) };
}
