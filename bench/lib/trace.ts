/** Reads the JSON lines written by preload/trace-modules.mjs in the nodelet process. */
import { existsSync, readFileSync } from 'node:fs';

/** One traced event. */
export type TraceEvent =
  | { ev: 'compile'; ms: number; bytes: number }
  | { ev: 'worker'; logPath: string; t0: number; startMs: number }
  | { ev: 'exit'; logPath: string; runMs: number }
  | { ev: 'mem'; rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number; spacesKiB: Record<string, number>; codeKiB: number };

/** Asks the nodelet process (pid) for a memory breakdown (SIGUSR2) and returns it in MiB. */
export async function mainThreadMemory(pid: number, file: string): Promise<Record<string, unknown> | undefined> {
  const before = readTrace(file).filter((e) => e.ev === 'mem').length;
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const mems = readTrace(file).filter((e): e is Extract<TraceEvent, { ev: 'mem' }> => e.ev === 'mem');
    if (mems.length > before) {
      const m = mems.at(-1)!;
      const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
      return {
        rssMiB: mb(m.rss),
        heapTotalMiB: mb(m.heapTotal),
        heapUsedMiB: mb(m.heapUsed),
        externalMiB: mb(m.external),
        arrayBuffersMiB: mb(m.arrayBuffers),
        codeKiB: m.codeKiB,
        spacesKiB: m.spacesKiB,
        spacesCommittedKiB: (m as { spacesCommittedKiB?: unknown }).spacesCommittedKiB,
      };
    }
  }
  return undefined;
}

/** All events so far, in file order. */
export function readTrace(file: string): TraceEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TraceEvent);
}

/** Worker events whose log path lies under pod logs of namespace `ns` (`<ns>_<pod>_<uid>`), ordered by start. */
export function workersOf(events: TraceEvent[], ns: string, pod?: string): Extract<TraceEvent, { ev: 'worker' }>[] {
  const re = new RegExp(`/${ns}_${pod ?? '[^_/]+'}_[^/]+/`);
  return events.filter((e): e is Extract<TraceEvent, { ev: 'worker' }> => e.ev === 'worker' && re.test(e.logPath)).sort((a, b) => a.t0 - b.t0);
}

/** The exit event of the worker that wrote `logPath`'s directory's pod. */
export function exitOf(events: TraceEvent[], ns: string, pod: string): Extract<TraceEvent, { ev: 'exit' }> | undefined {
  const re = new RegExp(`/${ns}_${pod}_[^/]+/`);
  return events.find((e): e is Extract<TraceEvent, { ev: 'exit' }> => e.ev === 'exit' && re.test(e.logPath));
}
