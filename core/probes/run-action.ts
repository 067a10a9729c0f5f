/**
 * Runs one action of a probe or hook against its container: `httpGet`,
 * `tcpSocket`, `grpc` or `exec` (upstream prober.go `runProbe`). A named port
 * is looked up in the container's ports (`couldn't find port: …` when it is
 * not there: the result is `unknown`, as upstream). The host is the action's
 * `host` when set, else the target's (see target-host.ts).
 *
 * `exec` on a provider without the `exec` capability fails with
 * `exec probes are not supported by provider "<name>"` (documented in
 * docs/probes.md and providers/wasi/README.md).
 */
import type { IntOrString, V1ExecAction, V1GRPCAction, V1HTTPGetAction, V1TCPSocketAction } from '@kubernetes/client-node';
import type { Agent } from 'undici';
import type { CheckOutcome, ProbeTarget } from './probe-types.ts';
import { httpGetCheck } from './http-check.ts';
import { tcpCheck } from './tcp-check.ts';
import { grpcCheck } from './grpc-check.ts';

const MAX_OUTPUT = 10 * 1024;

/** The actions a probe or hook may carry (one of them is set). */
export interface Action {
  httpGet?: V1HTTPGetAction;
  tcpSocket?: V1TCPSocketAction;
  grpc?: V1GRPCAction;
  exec?: V1ExecAction;
}

/** Resolves a port by number or by the name of one of the container's ports. */
export function resolvePort(port: IntOrString | undefined, target: Pick<ProbeTarget, 'ports'>): number | string {
  if (typeof port === 'number') return port >= 1 && port <= 65535 ? port : `invalid port number: ${port}`;
  if (typeof port === 'string' && /^\d+$/.test(port)) return resolvePort(Number(port), target);
  const found = target.ports.find((p) => p.name === port);
  return found ? found.containerPort : `couldn't find port: ${String(port)} in ${JSON.stringify(target.ports.map((p) => p.name ?? p.containerPort))}`;
}

/** The URL of an `httpGet` action (upstream `formatURL`). */
export function httpUrl(a: V1HTTPGetAction, host: string, port: number): URL {
  const scheme = (a.scheme ?? 'HTTP').toLowerCase();
  const h = host.includes(':') ? `[${host}]` : host;
  const path = a.path ?? '';
  return new URL(`${scheme}://${h}:${port}${path === '' || path.startsWith('/') ? path : `/${path}`}`);
}

/** The message when the provider cannot exec. */
export function execUnsupported(providerName: string): string {
  return `exec probes are not supported by provider "${providerName}"`;
}

/** Runs `action` once within `timeoutMs`, through the shared `agent` for HTTP. */
export async function runAction(action: Action, target: ProbeTarget, timeoutMs: number, agent: Agent): Promise<CheckOutcome> {
  if (action.exec) return runExec(action.exec.command ?? [], target, timeoutMs);
  if (action.httpGet) {
    const port = resolvePort(action.httpGet.port, target);
    if (typeof port === 'string') return { result: 'unknown', output: port };
    const headers: Record<string, string> = {};
    for (const h of action.httpGet.httpHeaders ?? []) headers[h.name] = h.value;
    return httpGetCheck(agent, httpUrl(action.httpGet, action.httpGet.host || target.host, port), headers, timeoutMs);
  }
  if (action.tcpSocket) {
    const port = resolvePort(action.tcpSocket.port, target);
    if (typeof port === 'string') return { result: 'unknown', output: port };
    return tcpCheck(action.tcpSocket.host || target.host, port, timeoutMs);
  }
  if (action.grpc) return grpcCheck(target.host, action.grpc.port, action.grpc.service ?? '', timeoutMs);
  return { result: 'unknown', output: 'missing probe handler' };
}

async function runExec(command: string[], target: ProbeTarget, timeoutMs: number): Promise<CheckOutcome> {
  if (!target.exec) return { result: 'failure', output: execUnsupported(target.providerName) };
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const r = await Promise.race([
      target.exec(command, timeoutMs, abort.signal),
      new Promise<'timeout'>((resolve) => abort.signal.addEventListener('abort', () => resolve('timeout'), { once: true })),
    ]);
    if (r === 'timeout') return { result: 'failure', output: `command ${JSON.stringify(command.join(' '))} timed out` };
    const output = r.output.slice(0, MAX_OUTPUT);
    return r.exitCode === 0 ? { result: 'success', output } : { result: 'failure', output };
  } catch (e) {
    return { result: 'unknown', output: (e as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
