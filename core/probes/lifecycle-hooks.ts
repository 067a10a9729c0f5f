/**
 * Lifecycle hooks (upstream pkg/kubelet/lifecycle/handlers.go): runs a
 * `postStart` or `preStop` handler against its container and returns
 * `undefined` on success or upstream's failure message (the text of the
 * `FailedPostStartHook` event).
 *
 * - `httpGet`: a GET through the shared keep-alive agent; as upstream, any
 *   HTTP response is a success — only a transport error (refused, timeout)
 *   fails the hook.
 * - `sleep`: waits `seconds` (cut short by the deadline).
 * - `tcpSocket`: deprecated; upstream fails it at run time ("Cannot run
 *   handler"), nodelet accepts it as a TCP connect check (docs/probes.md).
 * - `exec`: through the provider's `exec`; on a provider without it the hook
 *   fails with `exec probes are not supported by provider "<name>"`.
 *
 * The deadline is the caller's: preStop runs within the termination grace
 * period, postStart within the pod's termination grace period too (upstream
 * blocks without a limit; nodelet bounds it so a hung hook cannot hold the
 * pod worker).
 */
import type { V1Container, V1LifecycleHandler, V1Pod } from '@kubernetes/client-node';
import { request, type Agent } from '../kube/index.ts';
import type { ProbeTarget } from './probe-types.ts';
import { dialError, PROBE_USER_AGENT } from './http-check.ts';
import { tcpCheck } from './tcp-check.ts';
import { execUnsupported, httpUrl, resolvePort, runAction } from './run-action.ts';

/** `name_namespace(uid)`, upstream's `format.Pod`. */
const podName = (p: V1Pod) => `${p.metadata?.name}_${p.metadata?.namespace}(${p.metadata?.uid})`;

/** Runs `handler` within `timeoutMs`; resolves with undefined on success or the failure message. Never rejects. */
export async function runHook(
  handler: V1LifecycleHandler,
  pod: V1Pod,
  container: V1Container,
  target: ProbeTarget,
  timeoutMs: number,
  agent: Agent,
): Promise<string | undefined> {
  const who = `for Container "${container.name}" in Pod "${podName(pod)}"`;
  if (handler.sleep) {
    await new Promise((r) => setTimeout(r, Math.min(Math.max(0, handler.sleep!.seconds) * 1000, timeoutMs)));
    return undefined;
  }
  if (handler.exec) {
    const cmd = handler.exec.command ?? [];
    if (!target.exec) return `Exec lifecycle hook (${JSON.stringify(cmd)}) ${who} failed - error: ${execUnsupported(target.providerName)}, message: ""`;
    const out = await runAction({ exec: handler.exec }, target, timeoutMs, agent);
    return out.result === 'success'
      ? undefined
      : `Exec lifecycle hook (${JSON.stringify(cmd)}) ${who} failed - error: ${out.output}, message: ${JSON.stringify(out.output)}`;
  }
  if (handler.httpGet) {
    const a = handler.httpGet;
    const port = resolvePort(a.port, target);
    if (typeof port === 'string') return `HTTP lifecycle hook (${a.path ?? ''}) ${who} failed - error: ${port}`;
    const url = httpUrl(a, a.host || target.host, port);
    const headers: Record<string, string> = { 'user-agent': PROBE_USER_AGENT, accept: '*/*' };
    for (const h of a.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value;
    const signal = AbortSignal.timeout(Math.max(1, timeoutMs));
    try {
      const res = await request(url, { method: 'GET', headers, dispatcher: agent, signal });
      await res.body.dump();
      return undefined;
    } catch (e) {
      return `HTTP lifecycle hook (${a.path ?? ''}) ${who} failed - error: Get "${url.href}": ${dialError(signal.aborted ? { name: 'TimeoutError' } : e, url.host)}`;
    }
  }
  if (handler.tcpSocket) {
    const port = resolvePort(handler.tcpSocket.port, target);
    if (typeof port === 'string') return `TCP lifecycle hook (${String(handler.tcpSocket.port)}) ${who} failed - error: ${port}`;
    const out = await tcpCheck(handler.tcpSocket.host || target.host, port, Math.max(1, timeoutMs));
    return out.result === 'success' ? undefined : `TCP lifecycle hook (${port}) ${who} failed - error: ${out.output}`;
  }
  return `Cannot run handler: invalid handler: ${JSON.stringify(handler)}`;
}
