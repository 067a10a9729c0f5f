/**
 * Summarizes V8 .cpuprofile files (from `--cpu-prof`): self time by function
 * and by source area (a package under node_modules, a project folder, or a V8
 * pseudo-node such as (garbage collector)), so a missed target can be explained.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives, coarsely. */
export function areaOf(f: CallFrame): string {
  if (!f.url) return f.functionName.startsWith('(') ? f.functionName : '(native/builtin)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (nm) return `npm:${nm[1]}`;
  if (f.url.startsWith('node:')) return `node:${f.url.slice(5).split('/')[0]}`;
  const m = /\/(core|providers|plugin-api|sockets|bin)\/([^/]+)/.exec(f.url);
  return m ? `${m[1]}/${m[2]}` : f.url;
}

/** Self milliseconds per key over one profile. */
function selfTimes(p: Profile, key: (f: CallFrame) => string): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const out = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const k = key(byId.get(p.samples[i]!)!);
    out.set(k, (out.get(k) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  }
  return out;
}

function top(m: Map<string, number>, n: number, total: number): string[] {
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, ms]) => `  ${ms.toFixed(0).padStart(8)} ms ${((ms / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
}

/** A text summary of every .cpuprofile in `dir` (the largest first). */
export function summarizeProfiles(dir: string, n = 25): string {
  if (!existsSync(dir)) return `no profiles in ${dir}`;
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const out: string[] = [`CPU profiles in ${dir}: ${files.length}`];
  for (const f of files) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile;
    const areas = selfTimes(p, areaOf);
    const total = [...areas.values()].reduce((a, b) => a + b, 0);
    const busy = total - (areas.get('(idle)') ?? 0);
    out.push(
      `\n${f}: ${(total / 1000).toFixed(1)} s profiled, ${(busy / 1000).toFixed(1)} s not idle`,
      'by area (self time):',
      ...top(areas, n, total),
      'by function (self time):',
      ...top(
        selfTimes(p, (c) => `${c.functionName || '(anonymous)'} ${areaOf(c)}:${c.lineNumber + 1}`),
        n,
        total,
      ),
    );
  }
  return out.join('\n');
}
