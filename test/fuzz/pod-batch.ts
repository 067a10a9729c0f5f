/**
 * Runs pod-shaped fuzz inputs in batches through the static pod directory:
 * writes each input's manifest (and its module files), waits until nodelet has
 * said something precise about each — a pod status with a reason, or a log line
 * naming the manifest file — then removes the files and checks the pods go away.
 *
 *   write batch ──► poll /pods + log (≤ settleMs) ──► classify each ──► remove files ──► pods gone? (≤ removeMs)
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FuzzEnvironment, PodStatusLike } from './environment.ts';
import type { Outcome, TargetName } from './outcome.ts';

/** One pod-shaped input. */
export interface PodInput {
  readonly input: string;
  /** Manifest file name (in the manifest dir; `.yaml`/`.json` to be read as a manifest). */
  readonly file: string;
  readonly manifest: string | Buffer;
  /** The pod's metadata.name when the manifest has a usable one. */
  readonly podName?: string;
  /** Other files the manifest refers to (modules), by name. */
  readonly files?: Record<string, Buffer>;
  /** A pod that runs until removed (an endless loop) is classified once Running. */
  readonly runsForever?: boolean;
}

/** Waiting reasons that are still on the way, not an outcome. */
const TRANSIENT = new Set(['ContainerCreating', 'PodInitializing', '']);

/** A precise outcome of a pod status, or undefined while there is none. */
export function classifyStatus(s: PodStatusLike | undefined, runsForever = false): string | undefined {
  if (!s) return undefined;
  if (s.phase === 'Succeeded' || s.phase === 'Failed') {
    const t = s.containerStatuses?.map((c) => c.state?.terminated).find((x) => x?.reason);
    return `pod ${s.phase}/${s.reason ?? t?.reason ?? 'Completed'}${t?.exitCode !== undefined ? ` exit ${t.exitCode}` : ''}`;
  }
  if (s.reason) return `pod ${s.phase ?? '?'}/${s.reason}`;
  for (const c of s.containerStatuses ?? []) {
    const w = c.state?.waiting;
    if (w && !TRANSIENT.has(w.reason ?? '')) return `waiting ${w.reason}${w.message ? `: ${w.message.slice(0, 160)}` : ''}`;
    const t = c.state?.terminated;
    if (t?.reason) return `terminated ${t.reason} exit ${t.exitCode}${t.message ? `: ${t.message.slice(0, 160)}` : ''}`;
    if (c.state?.running && runsForever) return 'running';
  }
  return undefined;
}

/** Runs `inputs` `batchSize` at a time; records one outcome per input (plus a hang for a pod that is not removed). */
export async function runPodBatches(
  env: FuzzEnvironment,
  target: TargetName,
  inputs: readonly PodInput[],
  record: (o: Outcome) => void,
  o: { batchSize?: number; settleMs?: number; removeMs?: number } = {},
): Promise<void> {
  const { batchSize = 20, settleMs = 90_000, removeMs = 30_000 } = o;
  for (let i = 0; i < inputs.length && env.alive(); i += batchSize) {
    const batch = inputs.slice(i, i + batchSize);
    const logFrom = env.logSize();
    for (const p of batch) {
      for (const [name, bytes] of Object.entries(p.files ?? {})) writeFileSync(join(env.manifestDir, name), bytes);
      writeFileSync(join(env.manifestDir, p.file), p.manifest);
    }
    const verdicts = new Map<PodInput, string>();
    const lastSeen = new Map<PodInput, string>();
    const deadline = Date.now() + settleMs;
    while (verdicts.size < batch.length && Date.now() < deadline && env.alive()) {
      await new Promise((r) => setTimeout(r, 500)); // the poll's interval: a pod still without a verdict at the deadline is a finding
      const pods = await env.pods().catch(() => []);
      const log = env.logFrom(logFrom);
      for (const p of batch) {
        if (verdicts.has(p)) continue;
        const pod = p.podName ? pods.find((x) => x.metadata?.name === `${p.podName}-${env.nodeName}`) : undefined;
        const fromStatus = classifyStatus(pod?.status, p.runsForever);
        if (pod) lastSeen.set(p, `${pod.status?.phase ?? 'no phase'} ${JSON.stringify(pod.status?.containerStatuses?.map((c) => c.state) ?? [])}`);
        const warning = pod ? warningEvent(log, `${pod.metadata?.name}`) : undefined;
        if (fromStatus) verdicts.set(p, fromStatus);
        // A pod that waits for something (a volume that cannot be set up) keeps ContainerCreating, as upstream; its Warning event says why.
        else if (warning) verdicts.set(p, warning);
        else if (!pod) {
          const line = log.split('\n').find((l) => l.includes(p.file));
          if (line) verdicts.set(p, `refused: ${refusalText(line)}`);
        }
      }
    }
    for (const p of batch) {
      const v = verdicts.get(p);
      if (v) record({ target, input: p.input, verdict: 'classified', detail: v });
      else
        record({
          target,
          input: p.input,
          verdict: env.alive() ? 'unclassified' : 'crash',
          detail: env.alive()
            ? `no pod status reason or log line in ${settleMs / 1000} s (last seen: ${lastSeen.get(p)?.slice(0, 200) ?? 'no pod'})`
            : env.exitDescription(),
        });
    }
    for (const p of batch) {
      rmSync(join(env.manifestDir, p.file), { force: true });
      for (const name of Object.keys(p.files ?? {})) rmSync(join(env.manifestDir, name), { force: true });
    }
    const names = new Set(batch.filter((p) => p.podName).map((p) => `${p.podName}-${env.nodeName}`));
    const gone = Date.now() + removeMs;
    let left: string[] = [];
    while (Date.now() < gone && env.alive()) {
      left = (await env.pods().catch(() => [])).map((x) => x.metadata?.name ?? '').filter((n) => names.has(n));
      if (!left.length) break;
      await new Promise((r) => setTimeout(r, 500)); // the poll's interval: a pod left at the deadline is a finding
    }
    for (const n of left) record({ target, input: `removal of ${n}`, verdict: 'hang', detail: `still on /pods ${removeMs} ms after its manifest was removed` });
  }
}

/** The message of a JSON log line (its `msg` and `err`), or the line cut short. */
function refusalText(line: string): string {
  try {
    const j = JSON.parse(line) as { msg?: string; err?: string; note?: string; reason?: string };
    return [j.reason, j.msg, j.err ?? j.note].filter(Boolean).join(' — ').slice(0, 160);
  } catch {
    return line.slice(0, 160);
  }
}

/** The first Warning event recorded for pod `name` (standalone nodelet logs its events), as `event <reason>: <message>`. */
function warningEvent(log: string, name: string): string | undefined {
  for (const line of log.split('\n')) {
    if (!line.includes(`/${name}"`) || !line.includes('"type":"Warning"')) continue;
    try {
      const j = JSON.parse(line) as { object?: string; type?: string; reason?: string; msg?: string };
      if (j.type === 'Warning' && j.object?.endsWith(`/${name}`)) return `event ${j.reason}: ${(j.msg ?? '').slice(0, 160)}`;
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}
