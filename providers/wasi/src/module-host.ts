/**
 * The thread a preview1 module runs on, as its run drives it: a worker of its
 * own (taken from the pool, ended with the module) or a shared thread, where
 * many BestEffort modules run at once and each one's messages come tagged with
 * its id (shared-threads.ts). One interface for both, so the run
 * (module-run.ts) does not care where its module runs.
 */
import type { TransferListItem, Worker } from 'node:worker_threads';
import type { ContainerStats } from '@nodelet/plugin-api/v1';
import type { SharedThread } from './shared-threads.ts';
import { moduleStats, sharedModuleStats } from './thread-stats.ts';
import type { DoneMessage, ModuleMessage, RunMessage } from './worker-protocol.ts';

/** The thread a module runs on. */
export interface ModuleHost {
  readonly threadId: number;
  /** True on a shared thread: terminating it ends the other modules on it too. */
  readonly shared: boolean;
  onMessage(fn: (m: ModuleMessage) => void): void;
  onError(fn: (e: Error) => void): void;
  /** Once: the module is gone (its thread ended, or its 'done' on a shared thread); `why` if its shared thread was ended for another reason. */
  onGone(fn: (code: number, why?: string) => void): void;
  /** Posts the run message, moving `transfer` (a dedicated thread's route port) with it. */
  post(input: RunMessage, transfer?: readonly TransferListItem[]): void;
  terminate(why: string): void;
  /** The module's stats. */
  stats(tid: number | undefined, control: SharedArrayBuffer): ContainerStats;
}

/** A worker of the module's own. */
export function dedicatedHost(worker: Worker): ModuleHost {
  return {
    threadId: worker.threadId,
    shared: false,
    onMessage: (fn) => worker.on('message', fn),
    onError: (fn) => worker.on('error', fn),
    onGone: (fn) => worker.on('exit', (code) => fn(code)),
    post: (input, transfer = []) => worker.postMessage(input, transfer),
    terminate: () => void worker.terminate(),
    stats: (tid, control) => moduleStats(worker, tid, control),
  };
}

/** A place on a shared thread: the module's messages come over the thread's port, tagged with its id. */
export function sharedHost(thread: SharedThread): ModuleHost {
  let gone: ((code: number, why?: string) => void) | undefined;
  let ended = false;
  let onMessage: (m: ModuleMessage) => void = () => {};
  let unsubscribe = () => {};
  // No MessageChannel per module: making one and moving its port to the thread was ~5 % of the
  // main thread's time in a 100-pod burst (bench/results/, "Where a burst's tail goes").
  let counted = true;
  const uncount = () => {
    if (counted) thread.modules--;
    counted = false;
  };
  const id = thread.attach((m: ModuleMessage | DoneMessage) => {
    if (m.type !== 'done') return onMessage(m);
    uncount();
    // A big module, the last on its thread, ends the thread to give its memory back; it is gone
    // once the thread exited (not before: the memory is still held until then).
    const exit = thread.ended(m.memoryBytes ?? 0);
    if (!exit) return end(0);
    unsubscribe();
    void exit.then(
      () => end(0),
      () => end(0),
    );
  });
  const end = (code: number, why?: string) => {
    if (ended) return;
    ended = true;
    unsubscribe();
    uncount();
    thread.detach(id);
    gone?.(code, why);
  };
  unsubscribe = thread.onGone(() => end(1, thread.goneBecause));
  return {
    threadId: thread.worker.threadId,
    shared: true,
    onMessage: (fn) => {
      onMessage = fn;
    },
    onError: () => {},
    onGone: (fn) => {
      gone = fn;
    },
    post: (input, transfer = []) => thread.worker.postMessage({ ...input, moduleId: id } satisfies RunMessage, transfer),
    terminate: (why) => void thread.terminate(why),
    stats: (_tid, control) => sharedModuleStats(control),
  };
}
