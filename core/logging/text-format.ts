/**
 * nodelet's `--logging-format=text`: pino's JSON lines rewritten in the upstream
 * kubelet's klog text layout, one line per record:
 *
 *   I1130 22:05:59.123456   12345 nodelet] "nodelet is running" node="n1" port=10250
 *
 * Written by hand because no library prints klog's layout: pino-pretty has its
 * own (colourised, multi-line for objects) and runs as a transport in a worker
 * thread, which costs the idle memory nodelet budgets for pods. This is a
 * synchronous in-process stream in front of pino's stderr destination.
 */

/** Where formatted lines go (pino's destination). */
export interface LineSink {
  write(line: string): unknown;
}

const OMIT = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'name', 'component']);
const SEVERITY = (level: number) => (level >= 60 ? 'F' : level >= 50 ? 'E' : level >= 40 ? 'W' : 'I');
const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function header(level: number, time: number, pid: unknown, who: string): string {
  const d = new Date(time);
  const stamp = `${pad(d.getMonth() + 1)}${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}000`;
  return `${SEVERITY(level)}${stamp} ${String(pid ?? process.pid).padStart(7)} ${who}]`;
}

function value(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v) ?? 'undefined';
}

/** Formats one pino JSON record as a klog text line (with its newline); a non-JSON line passes through. */
export function formatTextLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const who = [rec.name, rec.component].filter((x) => typeof x === 'string' && x).join('/') || 'nodelet';
  const fields = Object.entries(rec)
    .filter(([k]) => !OMIT.has(k))
    .map(([k, v]) => ` ${k}=${value(v)}`)
    .join('');
  return `${header(Number(rec.level ?? 30), Number(rec.time ?? Date.now()), rec.pid, who)} ${JSON.stringify(String(rec.msg ?? ''))}${fields}\n`;
}

/** A pino destination that writes each record to `sink` in the text layout. */
export function textDestination(sink: LineSink): LineSink {
  return { write: (line: string) => sink.write(formatTextLine(line)) };
}
