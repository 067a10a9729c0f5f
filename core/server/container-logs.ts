/**
 * `GET /containerLogs/:namespace/:pod/:container`: what `kubectl logs` reaches
 * through the apiserver's node proxy. Errors follow upstream
 * (pkg/kubelet/server/server.go, kubelet_pods.go validateContainerLogStatus),
 * as plain text the apiserver passes on to kubectl:
 *
 *   400/422  bad query (see log-query.ts)
 *   404      pod "p" does not exist
 *   404      container "c" not found in pod "p"          (not in the pod spec)
 *   400      container "c" in pod "p" is not available   (in the spec, never started)
 *   400      previous terminated container "c" in pod "p" not found
 *   400      container "c" in pod "p" is waiting to start - no logs yet
 *
 * Names from the URL are only used as keys into the PodSource; file paths come
 * from the source, so no URL can address a file outside the log root.
 */
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { V1Pod } from '@kubernetes/client-node';
import { readContainerLog, assertInside, containerLogFile } from '../logs/index.ts';
import { parseLogQuery, sinceInstant } from './log-query.ts';
import type { ContainerTarget, PodSource } from './pod-source.ts';

/** What the route needs. */
export interface ContainerLogsDeps {
  readonly pods: PodSource;
  /** If set, every log file served must lie under this directory (defence in depth). */
  readonly logsRoot?: string;
  /** Follow: ms between checks when no change notification arrives. */
  readonly followPollMs?: number;
}

type Params = { namespace: string; pod: string; container: string };

/** Sends a plain-text error, as the kubelet's go-restful WriteError does. */
export function sendText(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(message);
}

/** The pod `namespace/name` from the source. */
export function findPod(pods: PodSource, namespace: string, name: string): V1Pod | undefined {
  return pods.listPods().find((p) => p.metadata?.namespace === namespace && p.metadata?.name === name);
}

/** True if the pod spec has a (regular, init or ephemeral) container of that name. */
export function hasContainer(pod: V1Pod, name: string): boolean {
  const s = pod.spec;
  return [...(s?.containers ?? []), ...(s?.initContainers ?? []), ...(s?.ephemeralContainers ?? [])].some((c) => c.name === name);
}

function logFile(deps: ContainerLogsDeps, target: ContainerTarget, restartCount: number): string {
  const file = containerLogFile(target.logDir, restartCount);
  if (deps.logsRoot !== undefined) assertInside(path.resolve(deps.logsRoot), path.resolve(file));
  return file;
}

/** Registers the route on `app`. */
export function registerContainerLogs(app: FastifyInstance, deps: ContainerLogsDeps): void {
  app.get<{ Params: Params }>('/containerLogs/:namespace/:pod/:container', (req, reply) => serveLogs(deps, req, reply));
}

async function serveLogs(deps: ContainerLogsDeps, req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
  const { namespace, pod: podName, container } = req.params;
  const parsed = parseLogQuery(new URL(req.url, 'https://kubelet').searchParams);
  if (!parsed.ok) return sendText(reply, parsed.status, parsed.message);
  const q = parsed.options;
  const pod = findPod(deps.pods, namespace, podName);
  if (!pod) return sendText(reply, 404, `pod ${JSON.stringify(podName)} does not exist`);
  if (!hasContainer(pod, container)) {
    return sendText(reply, 404, `container ${JSON.stringify(container)} not found in pod ${JSON.stringify(podName)}`);
  }
  const what = `container ${JSON.stringify(container)} in pod ${JSON.stringify(podName)}`;
  const target = deps.pods.findContainer(namespace, podName, container);
  if (!target) return sendText(reply, 400, `${what} is not available`);
  const restartCount = q.previous ? target.restartCount - 1 : target.restartCount;
  const missing = q.previous ? `previous terminated ${what} not found` : `${what} is waiting to start - no logs yet`;
  if (restartCount < 0) return sendText(reply, 400, missing);
  const follow = q.follow && !q.previous && target.running;
  const ac = new AbortController();
  let stream;
  try {
    stream = await readContainerLog(logFile(deps, target, restartCount), {
      tailLines: q.tailLines,
      limitBytes: q.limitBytes,
      timestamps: q.timestamps,
      since: sinceInstant(q),
      follow,
      finished: follow ? target.exited : undefined,
      isWriting: follow ? () => stillWriting(deps.pods, req.params, restartCount) : undefined,
      pollMs: deps.followPollMs,
      signal: ac.signal,
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return sendText(reply, 400, missing);
    throw e;
  }
  reply.raw.on('close', () => ac.abort());
  return reply.type('text/plain; charset=utf-8').send(stream);
}

function stillWriting(pods: PodSource, p: Params, restartCount: number): boolean {
  const t = pods.findContainer(p.namespace, p.pod, p.container);
  return t !== undefined && t.running && t.restartCount === restartCount;
}
