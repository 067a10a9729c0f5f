/**
 * One WASI preview1 command run to its end on the calling thread, for `nodelet run`
 * (package export `@nodelet/provider-wasi/run-once`): the WASI layer of a container's
 * worker (worker/wasi-semantics.mjs, wasmtime's preview1 semantics over node:wasi, and
 * worker/wasi-imports.mjs, applied in the order worker/wasi-worker.mjs applies them to a
 * module on a thread of its own) without a worker thread, a CRI log, a worker pool or
 * the rest of the provider, so that running one module costs about what plain
 * node:wasi costs. The module's stdout and stderr are written to this process's
 * descriptors 1 and 2 as it writes them; its stdin reads end of input (/dev/null), as a
 * container's without `stdin: true`.
 *
 *   compileCommandModule (module-check.ts: the provider's checks and errors)
 *     ─► runCommandModule: identify mounts ─► node:wasi + semantics + wrappers ─► instantiate ─► _start
 *                                                        ─► exit | trap | stopped
 *
 * Outcomes are the provider's (wasi-container.ts): the module's exit code; 134 with the
 * trap's report (also written to its stderr, as the worker writes it to the log); 137
 * when stopped. On the calling thread nothing else can run while the module does, so
 * the two stops a worker gets from its main thread come from V8 instead (node:vm
 * runs the start and `_start`):
 *  - SIGINT (Ctrl-C) terminates the module at once, busy or sleeping (`breakOnSigint`):
 *    137, as `nodelet run` reports a module stopped by SIGINT;
 *  - a start section that does not return within the start timeout
 *    (NODELET_WASI_START_TIMEOUT_MS, default 10 s) is terminated (`timeout`): the
 *    provider's StartTimeout error.
 * Other signals keep their default action. A write to stdout or stderr whose reader
 * has gone (EPIPE: `nodelet run m.wasm | head -1`) stops the module at its next WASI
 * call, as SIGPIPE ends a program: {@link BROKEN_PIPE_EXIT_CODE}.
 */
import * as fs from 'node:fs';
import { isAbsolute } from 'node:path';
import vm from 'node:vm';
import { WASI } from 'node:wasi';
import type { ContainerExit } from '@nodelet/plugin-api/v1';
import { optionsFromEnv } from './env-options.ts';
import { makeFdBudget } from './fd-budget.ts';
import type { MemoryDecl } from './memory-cap.ts';
import { compileCommandModule, ModuleRefused } from './module-check.ts';
import { codeExit, KILLED_EXIT_CODE, trapExit } from './wasi-container.ts';
import type { WorkerMount } from './worker-protocol.ts';
import { wasmKindOf } from './wasm-kind.ts';
import {
  captureStdio,
  confinePaths,
  guardReadOnly,
  identifyMounts,
  interruptibleSleep,
  MountError,
  stopOnRequest,
  StoppedError,
  trackDescriptors,
} from './worker/wasi-imports.mjs';
import type { HostPaths } from './worker/wasi-imports.mjs';
import { wasiSemantics } from './worker/wasi-semantics.mjs';
import { describeTrap } from './worker/trap-report.mjs';
import type { Preview1 } from './worker/preview1.ts';

export { ModuleRefused, wasmKindOf };

/**
 * How long a start section may run (default): the provider's DEFAULT_START_TIMEOUT_MS
 * (container-runner.ts, which this module does not load; a unit test keeps them equal).
 */
export const RUN_START_TIMEOUT_MS = 10_000;

/** Exit code when the reader of the module's stdout or stderr went away: 128 + SIGPIPE, as a shell reports a program SIGPIPE ended. */
export const BROKEN_PIPE_EXIT_CODE = 141;

/** A module compiled and checked for {@link runCommandModule}. */
export interface CommandModule {
  readonly module: WebAssembly.Module;
  /** Its imported memories (created before instantiation). */
  readonly importedMemories: readonly MemoryDecl[];
  /** It has a start section (bounded by the start timeout). */
  readonly startFunction: boolean;
  /** It imports `wasi_experimental_http`, which only the provider serves (with JSPI, on a worker). */
  readonly experimentalHttp: boolean;
}

/**
 * Compiles `bytes` as the provider does (no memory cap): rejects with the provider's
 * refusals ({@link ModuleRefused}, `InvalidImage`) naming `image`. `compile` (default `WebAssembly.compile`)
 * lets the caller take the module from a cache.
 */
export async function loadCommandModule(
  bytes: Uint8Array,
  image: string,
  compile?: (bytes: Uint8Array<ArrayBuffer>) => Promise<WebAssembly.Module>,
): Promise<CommandModule> {
  const { module, capped } = await compileCommandModule(bytes, image, undefined, compile);
  return {
    module,
    importedMemories: capped.memories.filter((m) => m.import !== undefined),
    startFunction: capped.startFunction === true,
    experimentalHttp: WebAssembly.Module.imports(module).some((i) => i.module === 'wasi_experimental_http'),
  };
}

/** What to run the module with. */
export interface RunRequest {
  /** The image or file as the user named it (in error messages). */
  readonly image: string;
  /** The container's name (in error messages, as the provider words them). */
  readonly name: string;
  /** argv[0] is the program's name. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Preopened directories: hostPath must be a real (symlink-free) path, as for a container. */
  readonly mounts: readonly WorkerMount[];
  /** Where the NODELET_WASI_* options are read (default process.env). */
  readonly processEnv?: NodeJS.ProcessEnv;
  /** Descriptors the module's stdout and stderr are written to (default 1 and 2). */
  readonly stdoutFd?: number;
  readonly stderrFd?: number;
  /** Warnings the provider would log (a volume replaced, output that could not be written). */
  readonly warn?: (message: string) => void;
}

/** How the run ended; `instance` when the module ended by itself (exit or trap), not when stopped. */
export interface RunOutcome {
  readonly exit: Omit<ContainerExit, 'finishedAt'>;
  readonly instance?: WebAssembly.Instance;
}

/**
 * Runs `loaded` to its end on this thread. Throws the provider's refusals
 * ({@link ModuleRefused}, with the provider's messages) when it cannot start
 * (`InvalidArgument` for a mount that cannot be presented, `InvalidImage` when it cannot
 * be instantiated or its start section does not return in time) and a RangeError for a
 * malformed NODELET_WASI_* variable.
 */
export function runCommandModule(loaded: CommandModule, req: RunRequest): RunOutcome {
  checkMounts(req);
  const opts = optionsFromEnv(req.processEnv ?? process.env);
  const budget = makeFdBudget(opts.maxOpenFiles, opts.nodeMaxOpenFiles);
  const startTimeoutMs = opts.startTimeoutMs ?? RUN_START_TIMEOUT_MS;
  // [0]: the stop flag the wrappers check at every call (stopOnRequest, interruptibleSleep).
  const control = new Int32Array(new SharedArrayBuffer(4));
  const stop = () => {
    Atomics.store(control, 0, 1);
    Atomics.notify(control, 0);
  };
  const warn = req.warn ?? (() => {});
  const out = directOutput(req.stdoutFd ?? 1, req.stderrFd ?? 2, stop);
  let ids: Array<{ dev: bigint; ino: bigint }>;
  let wasi: WASI;
  const devNull = fs.openSync('/dev/null', 'r+');
  try {
    ids = identifyMounts(req.mounts, fs);
    const preopens: Record<string, string> = {};
    for (const m of req.mounts) preopens[m.containerPath] = m.hostPath;
    wasi = new WASI({
      version: 'preview1',
      args: [...req.argv],
      env: { ...req.env },
      preopens,
      returnOnExit: true,
      stdin: devNull,
      stdout: devNull,
      stderr: devNull,
    });
  } catch (e) {
    fs.closeSync(devNull);
    if (e instanceof MountError) throw new ModuleRefused('InvalidArgument', `container ${req.name}: ${e.message}`);
    throw new ModuleRefused('InvalidImage', `cannot instantiate the module of image ${req.image}: ${describe(e)}`);
  }
  const imports = wasi.getImportObject() as WebAssembly.Imports & { wasi_snapshot_preview1: Preview1 };
  const w = imports.wasi_snapshot_preview1;
  let memory: WebAssembly.Memory | undefined;
  const mem = () => memory as WebAssembly.Memory;
  let hostPaths: HostPaths | undefined;
  // Closest to node:wasi, as in the worker: every other wrapper forwards to these corrections.
  wasiSemantics(w, mem, () => hostPaths, fs);
  // Preopens get descriptors 3, 4, ... in the order given (uvwasi).
  const preopenFds = req.mounts.map((_, i) => 3 + i);
  const closeDescriptors = trackDescriptors(w, mem, preopenFds, { max: budget.max, nodeMax: budget.nodeMax, node: new Int32Array(budget.node) });
  try {
    captureStdio(w, mem, out, (message) => warn(message));
    guardReadOnly(
      w,
      mem,
      preopenFds.filter((_, i) => req.mounts[i]!.readOnly),
    );
    hostPaths = confinePaths(
      w,
      mem,
      req.mounts.map((m, i) => ({ fd: preopenFds[i]!, hostPath: m.hostPath, name: m.name, containerPath: m.containerPath, ...ids[i]! })),
      fs,
      (m) =>
        warn(
          `volume ${m.name} mounted at ${m.containerPath}: its directory was renamed or replaced (e.g. by a symlink) after the container started; every access to it is refused`,
        ),
    );
    interruptibleSleep(w, mem, control);
    stopOnRequest(w, control);
    for (const m of loaded.importedMemories) {
      if (!m.import) continue;
      memory = new WebAssembly.Memory({ initial: m.min, maximum: m.max, shared: m.shared });
      (imports[m.import.module] ??= {})[m.import.name] = memory;
    }
    const stopped = (): RunOutcome => ({
      exit: out.broken ? { exitCode: BROKEN_PIPE_EXIT_CODE, reason: 'Error' } : { exitCode: KILLED_EXIT_CODE, reason: 'Error' },
    });
    let instance: WebAssembly.Instance;
    try {
      instance = guarded(() => new WebAssembly.Instance(loaded.module, imports), loaded.startFunction ? startTimeoutMs : undefined);
    } catch (e) {
      if (vmStop(e) === 'interrupted' || e instanceof StoppedError) return stopped();
      if (vmStop(e) === 'timeout') {
        throw new ModuleRefused(
          'InvalidImage',
          `the module of image ${req.image} did not finish instantiating within ${startTimeoutMs / 1000}s: its start function (run before _start) does not return; its thread was terminated`,
          { reason: 'StartTimeout' },
        );
      }
      throw new ModuleRefused('InvalidImage', `cannot instantiate the module of image ${req.image}: ${describe(e)}`);
    }
    if (instance.exports.memory instanceof WebAssembly.Memory) memory = instance.exports.memory;
    try {
      // A stand-in instance so that a module that imports its memory can start too.
      const code = guarded(() => wasi.start({ exports: { ...instance.exports, memory: mem() } }));
      // A stop wins over whatever the module did after it (as in the worker).
      return Atomics.load(control, 0) !== 0 ? stopped() : { exit: codeExit(code), instance };
    } catch (e) {
      if (vmStop(e) === 'interrupted' || e instanceof StoppedError || Atomics.load(control, 0) !== 0) return stopped();
      const report = describeTrap(e);
      try {
        out.write('stderr', Buffer.from(`nodelet: the module trapped: ${report}\n`));
      } catch {
        // stderr refuses writes: the report is still the exit's message
      }
      return { exit: trapExit(report, memory?.buffer.byteLength ?? 0, undefined), instance };
    }
  } finally {
    closeDescriptors();
    fs.closeSync(devNull);
  }
}

/** The provider's checks of a container's mounts (wasi-provider.ts): absolute paths, each mount path once. */
function checkMounts(req: RunRequest): void {
  const bad = (msg: string) => new ModuleRefused('InvalidArgument', `container ${req.name}: ${msg}`);
  const seen = new Set<string>();
  for (const m of req.mounts) {
    if (!isAbsolute(m.containerPath)) throw bad(`mountPath ${m.containerPath} of volume ${m.name} is not absolute`);
    if (!isAbsolute(m.hostPath)) throw bad(`host path ${m.hostPath} of volume ${m.name} is not absolute`);
    if (seen.has(m.containerPath)) throw bad(`mountPath ${m.containerPath} is used twice`);
    seen.add(m.containerPath);
  }
}

/** The module's output written straight to two descriptors; `broken` once a reader went away. */
interface DirectOutput {
  write(stream: 'stdout' | 'stderr', chunk: Uint8Array): void;
  readonly broken: boolean;
}

/**
 * Writes whole chunks to `stdoutFd`/`stderrFd`: waits out EAGAIN (a descriptor left
 * non-blocking by whoever shares it), and on EPIPE drops that stream and calls `onBroken`
 * (the run stops). Other errors are thrown to captureStdio's writer, which drops the
 * output and warns.
 */
function directOutput(stdoutFd: number, stderrFd: number, onBroken: () => void): DirectOutput {
  const gone = new Set<string>();
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    get broken() {
      return gone.size > 0;
    },
    write(stream, chunk) {
      if (gone.has(stream)) return;
      const fd = stream === 'stdout' ? stdoutFd : stderrFd;
      let off = 0;
      while (off < chunk.length) {
        try {
          off += fs.writeSync(fd, chunk, off, chunk.length - off);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'EAGAIN') {
            Atomics.wait(pause, 0, 0, 1);
            continue;
          }
          if (code === 'EPIPE') {
            gone.add(stream);
            onBroken();
            return;
          }
          throw e;
        }
      }
    },
  };
}

/** The global the guarded script calls (set only while it runs). */
const THUNK = '__nodeletRunOnce';
let thunkScript: vm.Script | undefined;

/**
 * Calls `fn` through node:vm so that SIGINT terminates it wherever it is (in Wasm code,
 * or waiting in a sleep), and, with `timeoutMs`, so does running longer than that.
 */
function guarded<T>(fn: () => T, timeoutMs?: number): T {
  thunkScript ??= new vm.Script(`globalThis.${THUNK}()`, { filename: 'nodelet-run' });
  const g = globalThis as unknown as Record<string, unknown>;
  g[THUNK] = fn;
  try {
    return thunkScript.runInThisContext({ breakOnSigint: true, ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }) }) as T;
  } finally {
    delete g[THUNK];
  }
}

/** Which of node:vm's stops `e` is, if any. */
function vmStop(e: unknown): 'interrupted' | 'timeout' | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') return 'interrupted';
  if (code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'timeout';
  return undefined;
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
