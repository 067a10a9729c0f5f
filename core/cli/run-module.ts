/**
 * `nodelet run [--env K[=V]]... [--dir HOST[:GUEST]]... <image-ref | file.wasm> [-- args...]`:
 * runs one WebAssembly module once through the bundled WASI provider, like
 * `wasmtime run`. The module's stdout/stderr go to the terminal's and its exit
 * code becomes nodelet's. A file is read as is; anything else is pulled as an
 * image into the local store (`--root-dir`, as `nodelet pull`).
 *
 *   parse ─► module (file | pull) ─► preview1 command: compiled (or taken from the
 *        compile cache, compile-cache.ts) and run to its end on this thread with the
 *        provider's WASI layer (@nodelet/provider-wasi/run-once), its output written
 *        straight to stdout/stderr ─► cache stored after a first run ─► exit code
 *                                 └► component, or a module importing wasi_experimental_http:
 *                                    through the provider itself (run-provider.ts)
 *
 * What a run needs is all this loads: no provider loading, worker threads, CRI log,
 * logger, API client or gRPC (bin/nodelet.mjs imports it through run-main.ts, without
 * the agent's command-line parsing). The image store's code is loaded only to pull.
 */
import { readFileSync, statSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PulledImage } from '@nodelet/plugin-api/v1';
import { loadCommandModule, runCommandModule, wasmKindOf } from '@nodelet/provider-wasi/run-once';
import { nodeletError } from '../errors/index.ts';
import type { CompileCache } from './compile-cache.ts';
import { parseRunArgs, RUN, userCacheDir, type RunRequest } from './run-args.ts';

export { parseRunArgs, RUN, type RunRequest } from './run-args.ts';

const WASM_MAGIC = Buffer.from([0x00, 0x61, 0x73, 0x6d]);

/** Where the compile cache lives: `$XDG_CACHE_HOME/nodelet/wasm-code` (`~/.cache/nodelet/wasm-code`). */
function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(userCacheDir(env), 'nodelet', 'wasm-code');
}

/**
 * The smallest module kept in the compile cache. V8 compiles a small module lazily in
 * less time than the cache takes to load (node:v8 and node:zlib, ~2-3 ms, then the
 * entry): hello.wasm, 187 KiB, compiles in ~2 ms, its entry loads in ~3 ms in all. A
 * 5 MiB Go module loads from its entry in about the time it compiles (~10 ms), then runs
 * ~4 ms shorter on the TurboFan code of its hot functions (bench/README.md, "nodelet run").
 */
export const COMPILE_CACHE_MIN_BYTES = 512 * 1024;

/**
 * The compile cache for a module of `size` bytes: none below {@link COMPILE_CACHE_MIN_BYTES},
 * when NODE_DISABLE_COMPILE_CACHE is set (as it turns off Node's own) or when it cannot be used.
 */
async function compileCache(size: number, env: NodeJS.ProcessEnv = process.env): Promise<CompileCache | undefined> {
  if (env.NODE_DISABLE_COMPILE_CACHE || size < COMPILE_CACHE_MIN_BYTES) return undefined;
  const { openCompileCache } = await import('./compile-cache.ts');
  return openCompileCache({ dir: compileCacheDir(env) });
}

/**
 * A module to run: its bytes, and the image it is (a pulled one, or, for a local file,
 * made when the provider needs one: its digest costs node:crypto).
 */
interface ModuleToRun {
  readonly name: string;
  readonly bytes: Buffer;
  image(): Promise<PulledImage>;
}

/** A local file; undefined when `target` is not an existing file. */
async function localModule(target: string): Promise<ModuleToRun | undefined> {
  const path = resolve(target);
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined) {
    if (/\.wasm$/i.test(target)) throw nodeletError('NDL_CLI_FILE', `${target}: no such file`);
    return undefined;
  }
  if (!st.isFile()) throw nodeletError('NDL_CLI_FILE', `${target}: not a regular file`);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw nodeletError('NDL_CLI_FILE', `${target}: ${(e as Error).message}`, e);
  }
  if (!bytes.subarray(0, 4).equals(WASM_MAGIC)) throw nodeletError('NDL_CLI_FILE', `${target}: not a WebAssembly module (no \\0asm header)`);
  const image = async (): Promise<PulledImage> => {
    const { createHash } = await import('node:crypto');
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    return { image: target, imageID: digest, digest, path, size: bytes.length, cached: true };
  };
  return { name: target, bytes, image };
}

/** Pulls `ref` into the store under `rootDir` (pull policy IfNotPresent). */
async function pulledModule(req: RunRequest): Promise<ModuleToRun> {
  const { dockerConfigCredentials, OciImageService, WASM_LAYER_TYPES, parseReference, registryHostOf } = await import('../images/index.ts');
  const ref = parseReference(req.target);
  const svc = await OciImageService.open({ rootDir: req.rootDir, insecureRegistries: req.insecure ? [registryHostOf(ref)] : [], userAgent: 'nodelet-run' });
  const image = await svc.pull(req.target, { pullPolicy: 'IfNotPresent', credentials: await dockerConfigCredentials(), acceptLayerTypes: WASM_LAYER_TYPES });
  return { name: image.image, bytes: readFileSync(image.path), image: async () => image };
}

/** Runs `nodelet run`; resolves to the module's exit code. */
export async function runModule(args: string[]): Promise<number> {
  const req = parseRunArgs(args);
  if (req === undefined) {
    process.stdout.write(`${RUN.usage}\n`);
    return 0;
  }
  for (const d of req.dirs) {
    const st = statSync(d.host, { throwIfNoEntry: false });
    if (!st?.isDirectory()) throw nodeletError('NDL_CLI_FILE', `--dir ${d.host}: not a directory`);
  }
  const module = (await localModule(req.target)) ?? (await pulledModule(req));
  const { name, bytes } = module;
  const programName = name.replace(/^.*[/\\]/, '').replace(/[:@].*$/, '') || 'module';
  const viaProvider = async () => (await import('./run-provider.ts')).runThroughProvider(req, await module.image(), programName);
  if (wasmKindOf(bytes) === 'component') return viaProvider();

  const cache = await compileCache(bytes.length);
  let fromCache = false;
  const loaded = await loadCommandModule(bytes, name, async (wire) => {
    const cached = cache?.load(wire);
    fromCache = cached !== undefined;
    return cached ?? WebAssembly.compile(wire);
  });
  if (loaded.experimentalHttp) return viaProvider();
  const outcome = runCommandModule(loaded, {
    image: name,
    name: 'run',
    argv: [programName, ...req.args],
    env: req.env,
    mounts: req.dirs.map((d, i) => ({ name: `dir-${i}`, hostPath: d.host, containerPath: d.guest, readOnly: false })),
    // Straight to descriptor 2: process.stderr would make a shared pipe non-blocking under the module's writes.
    warn: (message) => writeSync(2, `nodelet run: ${message}\n`),
  });
  if (outcome.instance && !fromCache) cache?.store(bytes, loaded.module, outcome.instance);
  const { exit } = outcome;
  if (exit.exitCode !== 0 && exit.message) process.stderr.write(`nodelet run: ${exit.reason}: ${exit.message}\n`);
  return exit.exitCode;
}
