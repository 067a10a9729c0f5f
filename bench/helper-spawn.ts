// Experiment (not part of `npm run bench`): what a helper shell's spawn costs nodelet, by the
// size of the process that spawns it. For each RSS (this process grown to it with touched
// memory, as a grown nodelet holds its heap and its pods'), SAMPLES times: a new helper running
// the Perl program of `core/exec/mount-syscalls.ts` gets its first call (`umount-mounted` of a
// path that is not there: no system call but a failing umount2). Printed, median and max:
// `sync` the time the call held the main thread (the fork is in it), `first` from the call to
// its answer (spawn + Perl's start + the answer), and `warm` a call to a shell already running.
//
//   node --import tsx bench/helper-spawn.ts            # RSS_MIB=100,1024 SAMPLES=20
import { helperShell, mountSyscalls } from '../core/exec/index.ts';

const program = mountSyscalls();
if (!program) throw new Error('no perl on this machine (or another CPU): nothing to measure');
const targets = (process.env.RSS_MIB ?? '100,1024').split(',').map(Number);
const samples = Number(process.env.SAMPLES ?? 20);
const call = ['/nonexistent/helper-spawn'] as const;

const ms = (ns: bigint) => Number(ns) / 1e6;
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)]!.toFixed(2)} ms, max ${s[s.length - 1]!.toFixed(2)} ms`;
};
const rssMiB = () => Math.round(process.memoryUsage.rss() / 2 ** 20);

const held: Buffer[] = [];
for (const mib of targets) {
  // 4 MiB buffers, each written (a page counts in the RSS only once it is touched).
  while (rssMiB() < mib) held.push(Buffer.alloc(4 * 2 ** 20).fill(1));
  const sync: number[] = [];
  const first: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < samples; i++) {
    const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', program, size: 1 });
    const t0 = process.hrtime.bigint();
    const answer = sh('umount-mounted', call);
    const t1 = process.hrtime.bigint();
    await answer;
    const t2 = process.hrtime.bigint();
    await sh('umount-mounted', call);
    const t3 = process.hrtime.bigint();
    sync.push(ms(t1 - t0));
    first.push(ms(t2 - t0));
    warm.push(ms(t3 - t2));
    sh.close();
    await new Promise((r) => setTimeout(r, 50));
  }
  console.log(`rss ${rssMiB()} MiB: sync ${stats(sync)}; first ${stats(first)}; warm ${stats(warm)}`);
}
