/**
 * `nodelet run`'s command line: its usage, its flags and their parsing into a
 * {@link RunRequest}. Loaded by the lean `nodelet run` (run-main.ts), so it imports
 * nothing beyond node:util's parseArgs and the errors catalogue.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { nodeletError } from '../errors/index.ts';
import { parseSubcommandArgs, type SubcommandSpec } from './subcommands.ts';

/** The user's cache directory: $XDG_CACHE_HOME when it is an absolute path, else ~/.cache. */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache');
}

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
