/**
 * One probe run: GET the URL until the answer matches (exit 0), the attempts
 * run out (exit 1), or the pod goes away (exit 143). Each attempt is one line
 * in the container's log: stdout when it matched, stderr otherwise.
 */
import { abortableSleep, type CriStream } from '@nodelet/plugin-api/v1/toolkit';
import { statusMatches, type ProbeSpec } from './probe-spec.ts';

/** How a probe run ended, as a container exit. */
export interface ProbeExit {
  readonly exitCode: number;
  readonly reason: string;
  readonly message?: string;
  readonly finishedAt: Date;
}

/** Where a probe writes its log lines. */
export interface ProbeLog {
  write(stream: CriStream, chunk: string): void;
}

/** The exit code of a probe stopped because its pod was deleted (as SIGTERM's 128 + 15). */
export const STOPPED_EXIT_CODE = 143;

/** The most of a response body read for `--contains`. */
export const MAX_BODY_BYTES = 1 << 20;

async function readCapped(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

const errorText = (e: unknown): string => {
  const cause = (e as { cause?: { message?: string } }).cause;
  return cause?.message ?? (e instanceof Error ? e.message : String(e));
};

/** One attempt: whether it matched, and its log line. */
async function attempt(spec: ProbeSpec, signal: AbortSignal, fetchImpl: typeof fetch): Promise<{ ok: boolean; line: string }> {
  const timeout = AbortSignal.timeout(spec.timeoutMs);
  const t0 = performance.now();
  const head = `GET ${spec.url.href} →`;
  try {
    // Redirects are answers, not followed: a probe never leaves the host it names.
    const res = await fetchImpl(spec.url, {
      redirect: 'manual',
      signal: AbortSignal.any([signal, timeout]),
      headers: { 'user-agent': 'nodelet-http-probe/0.1' },
    });
    const body = spec.contains === undefined ? (await res.body?.cancel(), '') : await readCapped(res, MAX_BODY_BYTES);
    const ms = Math.round(performance.now() - t0);
    const lacks = spec.contains !== undefined && !body.includes(spec.contains);
    const ok = statusMatches(spec.expect, res.status) && !lacks;
    return { ok, line: `${head} ${res.status} ${res.statusText} (${ms} ms)${lacks ? `; body lacks ${JSON.stringify(spec.contains)}` : ''}` };
  } catch (e) {
    if (signal.aborted) throw e;
    return { ok: false, line: `${head} ${timeout.aborted ? `no answer within ${spec.timeoutMs} ms` : errorText(e)}` };
  }
}

/** Runs the probe until it ends; never rejects. */
export async function runProbe(spec: ProbeSpec, log: ProbeLog, signal: AbortSignal, fetchImpl: typeof fetch = fetch): Promise<ProbeExit> {
  const end = (exitCode: number, message?: string): ProbeExit => ({
    exitCode,
    reason: exitCode === 0 ? 'Completed' : 'Error',
    message,
    finishedAt: new Date(),
  });
  for (let n = 1; ; n++) {
    if (signal.aborted) return end(STOPPED_EXIT_CODE, 'stopped: the pod was deleted');
    let r: { ok: boolean; line: string };
    try {
      r = await attempt(spec, signal, fetchImpl);
    } catch {
      return end(STOPPED_EXIT_CODE, 'stopped: the pod was deleted');
    }
    log.write(r.ok ? 'stdout' : 'stderr', `${r.line}\n`);
    if (r.ok) return end(0);
    if (spec.attempts > 0 && n >= spec.attempts) return end(1, `no answer matching ${spec.expect} after ${n} attempt${n > 1 ? 's' : ''}; last: ${r.line}`);
    await abortableSleep(spec.intervalMs, signal);
  }
}
