/**
 * Memory and CPU of a process tree from /proc: RSS from /proc/<pid>/status,
 * PSS from /proc/<pid>/smaps_rollup (when readable), CPU from utime+stime of
 * /proc/<pid>/stat. Threads (worker threads) are part of their process.
 */
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = 100;

/** Every process now: its children by parent pid, and its CPU ticks (utime+stime), from one pass over /proc. */
function procTable(): { children: Map<number, number[]>; ticks: Map<number, number> } {
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(d);
      const kids = children.get(Number(f[1]));
      if (kids) kids.push(pid);
      else children.set(Number(f[1]), [pid]);
      ticks.set(pid, Number(f[11]) + Number(f[12]));
    } catch {
      /* exited */
    }
  }
  return { children, ticks };
}

/** `root` and its descendants in `children`. */
function descendants(children: ReadonlyMap<number, number[]>, root: number): number[] {
  const out: number[] = [];
  const todo = [root];
  while (todo.length) {
    const p = todo.pop()!;
    out.push(p);
    todo.push(...(children.get(p) ?? []));
  }
  return out;
}

/** `root` and all its descendants (alive now). */
export function processTree(root: number): number[] {
  return descendants(procTable().children, root);
}

function kbField(text: string, field: string): number | undefined {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Memory of a process tree, in bytes. `pss` is undefined when smaps_rollup is not readable. */
export interface TreeMemory {
  pids: number;
  rss: number;
  pss?: number;
  threads: number;
  byProcess: Array<{ pid: number; comm: string; rssMiB: number }>;
}

/** Sums RSS (and PSS when readable) over the tree of `root`. */
export function treeMemory(root: number): TreeMemory {
  let rss = 0;
  let pss: number | undefined = 0;
  let threads = 0;
  const byProcess: TreeMemory['byProcess'] = [];
  const pids = processTree(root);
  for (const pid of pids) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const own = (kbField(status, 'VmRSS') ?? 0) * 1024;
      rss += own;
      byProcess.push({ pid, comm: /^Name:\s+(\S+)/m.exec(status)?.[1] ?? '?', rssMiB: mib(own) });
      threads += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    } catch {
      /* exited */
    }
    try {
      const v = kbField(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
      pss = v === undefined || pss === undefined ? undefined : pss + v * 1024;
    } catch {
      pss = undefined;
    }
  }
  return { pids: pids.length, rss, pss, threads, byProcess };
}

/** CPU seconds (user+system) used so far by the tree of `root`. */
export function treeCpuSeconds(root: number): number {
  return treesCpuSeconds({ root }).root!;
}

/**
 * CPU seconds (user+system) used so far by the tree of each root, by name, from one
 * pass over /proc (each process's stat read once; ~2 ms with ~100 processes).
 */
export function treesCpuSeconds(roots: Readonly<Record<string, number>>): Record<string, number> {
  const { children, ticks } = procTable();
  return Object.fromEntries(
    Object.entries(roots).map(([name, root]) => [name, descendants(children, root).reduce((sum, pid) => sum + (ticks.get(pid) ?? 0), 0) / CLK_TCK]),
  );
}

/**
 * What kind of thread `comm` (a thread's name) is: `main` (a Node process's main thread), `v8`
 * (V8's platform threads: concurrent GC and compilers), `workers` (Node worker threads), `libuv`
 * (its pool); a single-threaded process by its command (`perl`, `sh`, …).
 */
function threadKind(comm: string): string {
  if (comm === 'MainThread') return 'main';
  if (comm.startsWith('V8Worker') || comm.startsWith('v8:')) return 'v8';
  if (comm === 'WorkerThread') return 'workers';
  if (comm.startsWith('libuv')) return 'libuv';
  return comm;
}

/**
 * CPU seconds used so far by the trees of `roots`, by thread kind (see {@link threadKind}), from
 * each live thread's /proc/<pid>/task/<tid>/stat; `ended`: what each process's threads that
 * exited used (its total less its live threads'). For where a fleet's CPU goes.
 */
export function treesCpuByThreadKind(roots: Readonly<Record<string, number>>): Record<string, number> {
  const { children, ticks } = procTable();
  const out: Record<string, number> = {};
  const add = (kind: string, t: number) => (out[kind] = (out[kind] ?? 0) + t / CLK_TCK);
  for (const root of Object.values(roots))
    for (const pid of descendants(children, root)) {
      let live = 0;
      try {
        for (const tid of readdirSync(`/proc/${pid}/task`)) {
          const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
          const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          const t = Number(f[11]) + Number(f[12]);
          live += t;
          add(threadKind(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))), t);
        }
      } catch {
        continue; // exited
      }
      add('ended', Math.max(0, (ticks.get(pid) ?? 0) - live));
    }
  return out;
}

/** Average cores used by the tree over `ms` and the memory at the end (max RSS seen by sampling every second). */
export async function sampleTree(root: number, ms: number): Promise<{ cores: number; seconds: number; memory: TreeMemory; maxRss: number }> {
  const c0 = treeCpuSeconds(root);
  const t0 = performance.now();
  let maxRss = 0;
  while (performance.now() - t0 < ms) {
    await new Promise((r) => setTimeout(r, Math.min(1000, ms - (performance.now() - t0))));
    maxRss = Math.max(maxRss, treeMemory(root).rss);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { cores: (treeCpuSeconds(root) - c0) / seconds, seconds, memory: treeMemory(root), maxRss };
}

/** Bytes → MiB rounded to 0.1. */
export const mib = (b: number): number => Math.round((b / 1048576) * 10) / 10;

/** The machine: cores, memory, CPU model, kernel, Node version. */
export function machine(): { nproc: number; memoryGiB: number; cpuModel: string; node: string; load: string } {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const meminfo = readFileSync('/proc/meminfo', 'utf8');
  return {
    nproc: (cpuinfo.match(/^processor\s*:/gm) ?? []).length,
    memoryGiB: Math.round(((kbField(meminfo, 'MemTotal') ?? 0) / 1048576) * 10) / 10,
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? 'unknown',
    node: process.version,
    load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  };
}
