/**
 * `nodelet run [--env K[=V]]... [--dir HOST[:GUEST]]... <image-ref | file.wasm> [-- args...]`:
 * runs one WebAssembly module once through the bundled WASI provider, like
 * `wasmtime run`. The module's stdout/stderr go to the terminal's and its exit
 * code becomes nodelet's. A file is read as is; anything else is pulled as an
 * image into the local store (`--root-dir`, as `nodelet pull`).
 *
 *   parse ─► module (file | pull) ─► load WASI provider ─► startContainer
 *        ─► copy the CRI log to stdout/stderr until exit ─► shutdown ─► exit code
 *
 * The provider writes the container's output to a CRI log file (as for pods); a
 * follower copies each entry to the stream it came from.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { finished as streamFinished } from 'node:stream/promises';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isPodProvider, type ContainerExit, type ContainerSpec, type ImageService, type Mount, type Provider, type PulledImage } from '@nodelet/plugin-api/v1';
import { BUNDLED_PROVIDERS_DIR } from '../config/index.ts';
import { nodeletError } from '../errors/index.ts';
import { dockerConfigCredentials, OciImageService, WASM_LAYER_TYPES, parseReference, registryHostOf } from '../images/index.ts';
import { createLogger, flushLogger } from '../logging/index.ts';
import { readContainerLog } from '../logs/index.ts';
import { loadProviders, type ServedProvider } from '../providers/index.ts';
import { parseSubcommandArgs, type SubcommandSpec } from './subcommands.ts';

/** The image store `nodelet run` pulls into: the agent's for root, the user's cache otherwise. */
function defaultRootDir(): string {
  return process.getuid?.() === 0 ? '/var/lib/nodelet' : join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'nodelet');
}

/** `nodelet run`'s usage and options. */
export const RUN: SubcommandSpec = {
  usage: `Usage: nodelet run [--env K[=V]]... [--dir HOST[:GUEST]]... <image-ref | file.wasm> [-- args...]

Runs a WebAssembly (WASI) module once through nodelet's WASI provider, like
"wasmtime run": the module's stdout and stderr are the terminal's, and its exit
code is nodelet's. A path to an existing file is run as is; anything else is an
image reference, pulled (if not already present) into nodelet's local image store
with the credentials of ~/.docker/config.json. Arguments after "--" (or after the
module) are the module's argv[1...]; argv[0] is the module's name.

Flags:
  -e, --env K=V        set an environment variable (K alone: take it from nodelet's environment)
      --dir HOST[:GUEST]
                       give the module the host directory HOST at GUEST (default: HOST's absolute path)
      --root-dir DIR   the image store's root (default /var/lib/nodelet for root, else ~/.cache/nodelet)
      --insecure       speak plain HTTP to the registry
  -h, --help           show this help`,
  options: {
    env: { type: 'string', short: 'e', multiple: true },
    dir: { type: 'string', multiple: true },
    'root-dir': { type: 'string' },
    insecure: { type: 'boolean' },
  },
};

/** What `nodelet run`'s command line asks for. */
export interface RunRequest {
  readonly target: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly dirs: { host: string; guest: string }[];
  readonly rootDir: string;
  readonly insecure: boolean;
}

const usageError = (detail: string) => nodeletError('NDL_CONFIG_UNEXPECTED_ARG', detail);

/** Parses `nodelet run`'s arguments (without `run`); undefined when help was asked for. */
export function parseRunArgs(args: readonly string[], hostEnv: NodeJS.ProcessEnv = process.env): RunRequest | undefined {
  const { positionals, values, help } = parseSubcommandArgs('run', args, RUN);
  if (help) return undefined;
  const [target, ...rest] = positionals;
  if (target === undefined) throw usageError('missing the module: an image reference or a .wasm file');
  const env: Record<string, string> = {};
  for (const e of (values.env as string[] | undefined) ?? []) {
    const eq = e.indexOf('=');
    const key = eq < 0 ? e : e.slice(0, eq);
    if (key === '') throw usageError(`--env ${e}: the name is empty`);
    if (eq >= 0) env[key] = e.slice(eq + 1);
    else if (hostEnv[key] !== undefined) env[key] = hostEnv[key]!;
  }
  const dirs = ((values.dir as string[] | undefined) ?? []).map((d) => {
    const colon = d.indexOf(':');
    const host = colon < 0 ? d : d.slice(0, colon);
    const guest = colon < 0 ? resolve(host) : d.slice(colon + 1);
    if (host === '') throw usageError(`--dir ${d}: the host directory is empty`);
    if (!isAbsolute(guest)) throw usageError(`--dir ${d}: the guest path ${guest} must be absolute`);
    return { host: resolve(host), guest };
  });
  return { target, args: rest, env, dirs, rootDir: String(values['root-dir'] ?? defaultRootDir()), insecure: values.insecure === true };
}

const WASM_MAGIC = Buffer.from([0x00, 0x61, 0x73, 0x6d]);

/** A local file as a pulled image; undefined when `target` is not an existing file. */
async function localModule(target: string): Promise<PulledImage | undefined> {
  const path = resolve(target);
  const st = await stat(path).catch(() => undefined);
  if (st === undefined) {
    if (/\.wasm$/i.test(target)) throw nodeletError('NDL_CLI_FILE', `${target}: no such file`);
    return undefined;
  }
  if (!st.isFile()) throw nodeletError('NDL_CLI_FILE', `${target}: not a regular file`);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw nodeletError('NDL_CLI_FILE', `${target}: ${(e as Error).message}`, e);
  }
  if (!bytes.subarray(0, 4).equals(WASM_MAGIC)) throw nodeletError('NDL_CLI_FILE', `${target}: not a WebAssembly module (no \\0asm header)`);
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  return { image: target, imageID: digest, digest, path, size: bytes.length, cached: true };
}

/** Pulls `ref` into the store under `rootDir` (pull policy IfNotPresent). */
async function pulledModule(req: RunRequest): Promise<PulledImage> {
  const ref = parseReference(req.target);
  const svc = await OciImageService.open({ rootDir: req.rootDir, insecureRegistries: req.insecure ? [registryHostOf(ref)] : [], userAgent: 'nodelet-run' });
  return svc.pull(req.target, { pullPolicy: 'IfNotPresent', credentials: await dockerConfigCredentials(), acceptLayerTypes: WASM_LAYER_TYPES });
}

/**
 * Copies the CRI log at `path` to stdout/stderr until `done` settles, then drains it:
 * `core/logs`' follow reader (woken by the log directory's changes) with a per-entry callback.
 * Waits for the file to appear first (the provider creates it as the module starts).
 */
async function followLog(path: string, done: Promise<unknown>): Promise<void> {
  let ended = false;
  void done.then(
    () => (ended = true),
    () => (ended = true),
  );
  for (;;) {
    const exists = await stat(path).then(
      () => true,
      () => false,
    );
    if (exists) break;
    if (ended) return;
    await Promise.race([done, sleep(20)]);
  }
  const stream = await readContainerLog(path, {
    follow: true,
    finished: done,
    onEntry: (e) => (e.stream === 'stderr' ? process.stderr : process.stdout).write(e.partial ? e.content : Buffer.concat([e.content, Buffer.from('\n')])),
  });
  await streamFinished(stream.resume());
}

/** Runs `nodelet run`; resolves to the module's exit code. */
export async function runModule(args: string[]): Promise<number> {
  const req = parseRunArgs(args);
  if (req === undefined) {
    process.stdout.write(`${RUN.usage}\n`);
    return 0;
  }
  for (const d of req.dirs) {
    const st = await stat(d.host).catch(() => undefined);
    if (!st?.isDirectory()) throw nodeletError('NDL_CLI_FILE', `--dir ${d.host}: not a directory`);
  }
  const image = (await localModule(req.target)) ?? (await pulledModule(req));

  const work = await mkdtemp(join(tmpdir(), 'nodelet-run-'));
  const ac = new AbortController();
  const log = createLogger({ level: 'warn', name: 'nodelet-run' });
  const noPull: ImageService = {
    pull: () => Promise.reject(nodeletError('NDL_IMAGE_PULL', 'nodelet run hands the provider an already pulled module')),
  };
  // One module, run once, ends with this process: the WASI provider runs it in-process (the default
  // external runtime would outlive `nodelet run` in its temporary directory).
  process.env.NODELET_WASI_RUNTIME = 'in-process';
  const set = await loadProviders({ dirs: [BUNDLED_PROVIDERS_DIR], dataRoot: join(work, 'providers-data'), images: noPull, signal: ac.signal, log });
  const all = set.providers.map((p) => p.provider);
  try {
    const wasi = all.find((p): p is ServedProvider & Provider => !isPodProvider(p) && p.handlers.includes('wasi'));
    if (!wasi) {
      const why = set.failures.map((f) => f.reason).join('; ') || `no WASI provider in ${BUNDLED_PROVIDERS_DIR}`;
      throw nodeletError('NDL_PROVIDER_INIT', why);
    }
    const name = image.image.replace(/^.*[/\\]/, '').replace(/[:@].*$/, '') || 'module';
    const mounts: Mount[] = req.dirs.map((d, i) => ({ name: `dir-${i}`, hostPath: d.host, containerPath: d.guest, readOnly: false }));
    const spec: ContainerSpec = {
      id: randomUUID(),
      pod: { namespace: 'default', name: 'nodelet-run', uid: randomUUID() },
      name: 'run',
      image,
      argv: [name, ...req.args],
      env: req.env,
      mounts,
      limits: {},
      logPath: join(work, 'run.log'),
      restartCount: 0,
      ports: [],
      network: { podIPs: [], hostNetwork: true },
    };
    const running = await wasi.startContainer(spec, { log, event: () => {}, signal: ac.signal, podDir: work });
    const stop = () => void running.stop(1_000);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let exit: ContainerExit;
    try {
      const exited = running.exit;
      await followLog(spec.logPath, exited);
      exit = await exited;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    if (exit.exitCode !== 0 && exit.message) process.stderr.write(`nodelet run: ${exit.reason}: ${exit.message}\n`);
    return exit.exitCode;
  } finally {
    ac.abort();
    await Promise.allSettled(all.map(async (p) => p.shutdown?.()));
    flushLogger();
    await rm(work, { recursive: true, force: true });
  }
}
