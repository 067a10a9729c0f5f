/**
 * Loads provider packages from the providers directories (fastify-style: each
 * step fails with its own catalogued code, and a failing package is skipped
 * and reported, never fatal to the others).
 *
 *   for each dir (in order), each sub-directory (sorted):
 *     read manifest ─► same package seen in an earlier dir? ─► skip (first dir wins)
 *       NDL_PROVIDER_MANIFEST / _MANIFEST_INVALID
 *     ─► apiVersion adapter ─► entry inside the package (realpath) ─► import()
 *       NDL_PROVIDER_API_VERSION  NDL_PROVIDER_ENTRY_OUTSIDE          NDL_PROVIDER_IMPORT
 *     ─► factory + shape ─► name/handlers free? ─► (all together) its config file ─► init with a timeout
 *       NDL_PROVIDER_SHAPE   NDL_PROVIDER_DUPLICATE  NDL_PROVIDER_CONFIG  NDL_PROVIDER_INIT
 *
 * A provider's configuration is the file `--provider-config <name>=<path>` names
 * (YAML or JSON, parsed by the `yaml` package, loaded only then), checked by the provider's own
 * `validateConfig` when it has one, and handed to `init` as `ctx.config`.
 *
 * A provider's ES module is imported once per process (Node caches it by URL):
 * replacing a provider's files takes a nodelet restart. When the same package
 * (by package.json `name`) is in several directories, the first directory wins;
 * so a copy in `<root-dir>/providers` overrides the bundled one.
 */
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ImageService, Logger, ServiceResolver } from '@nodelet/plugin-api/v1';
import { isNodeletError, nodeletError, type ErrorCode, type NodeletError } from '../errors/index.ts';
import { API_ADAPTERS, adapterFor, type ApiAdapter } from './api-adapters.ts';
import { resolveEntry } from './entry-path.ts';
import { readManifest, type ProviderManifest } from './manifest.ts';
import { providerFromModule, type ServedProvider } from './provider-shape.ts';

/** Default time a provider's `init` may take. */
const DEFAULT_INIT_TIMEOUT_MS = 30_000;

/** Options of {@link loadProviders}. */
export interface ProviderLoadOptions {
  /** Directories searched, in order. Missing directories are skipped. */
  readonly dirs: readonly string[];
  /** Where providers get their own data directory (`<dataRoot>/<name>`). */
  readonly dataRoot: string;
  /** Core's image service, handed to providers. */
  readonly images: ImageService;
  /** Aborted when nodelet shuts down. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly initTimeoutMs?: number;
  /** The apiVersion adapters (default {@link API_ADAPTERS}). */
  readonly adapters?: ReadonlyMap<string, ApiAdapter>;
  /** Configuration files by provider name (`--provider-config`). */
  readonly configs?: Readonly<Record<string, string>>;
  /** The node's Service resolver, handed to providers as `services` (cluster mode). */
  readonly services?: ServiceResolver;
}

/** A provider that loaded and initialised. */
export interface LoadedProvider {
  /** With the handlers it serves (its manifest's when the object leaves them out). */
  readonly provider: ServedProvider;
  readonly manifest: ProviderManifest;
  /** The entry's real path. */
  readonly entry: string;
}

/** A provider package that was skipped, with the catalogued reason. */
export interface ProviderFailure {
  /** The package directory. */
  readonly dir: string;
  /** The package name, when the manifest was readable. */
  readonly packageName?: string;
  readonly code: ErrorCode;
  /** One line: `<catalogue text>: <detail>`. */
  readonly reason: string;
}

/** What {@link loadProviders} found. */
export interface ProviderSet {
  readonly providers: LoadedProvider[];
  readonly failures: ProviderFailure[];
  /** Packages skipped because an earlier directory had the same package. */
  readonly shadowed: { readonly dir: string; readonly by: string }[];
}

interface Candidate {
  manifest: ProviderManifest;
  entry: string;
  provider: ServedProvider;
}

/** Loads every provider package under `o.dirs`; never throws for a bad package. */
export async function loadProviders(o: ProviderLoadOptions): Promise<ProviderSet> {
  const set: ProviderSet = { providers: [], failures: [], shadowed: [] };
  const seen = new Map<string, string>();
  const taken = new Map<string, string>();
  const ready: Candidate[] = [];
  for (const dir of packageDirs(o.dirs, o.log)) {
    let manifest: ProviderManifest | undefined;
    try {
      manifest = readManifest(dir);
      const first = seen.get(manifest.packageName);
      if (first) {
        set.shadowed.push({ dir, by: first });
        o.log.info({ dir, by: first, package: manifest.packageName }, 'provider package shadowed by an earlier providers directory');
        continue;
      }
      seen.set(manifest.packageName, dir);
      const c = await prepare(manifest, o.adapters ?? API_ADAPTERS);
      claim(c, taken);
      ready.push(c);
    } catch (e) {
      fail(set, o.log, dir, manifest?.packageName, e);
    }
  }
  await Promise.all(
    ready.map(async (c) => {
      try {
        await initialise(c, o);
        set.providers.push({ provider: c.provider, manifest: c.manifest, entry: c.entry });
        o.log.info({ provider: c.provider.name, handlers: c.provider.handlers, dir: c.manifest.dir }, 'provider loaded');
      } catch (e) {
        fail(set, o.log, c.manifest.dir, c.manifest.packageName, e);
      }
    }),
  );
  set.providers.sort((a, b) => ready.findIndex((c) => c.provider === a.provider) - ready.findIndex((c) => c.provider === b.provider));
  for (const [name, path] of Object.entries(o.configs ?? {})) {
    if (!ready.some((c) => c.provider.name === name))
      o.log.warn({ provider: name, path }, '--provider-config names a provider that is not loaded: its file is not used');
  }
  return set;
}

function packageDirs(dirs: readonly string[], log: Logger): string[] {
  const out: string[] = [];
  for (const root of dirs) {
    let names: string[];
    try {
      names = readdirSync(root).sort();
    } catch {
      log.debug({ dir: root }, 'providers directory not found, skipped');
      continue;
    }
    for (const n of names) {
      const dir = join(root, n);
      if (n.startsWith('.') || n === 'node_modules') continue;
      try {
        if (statSync(dir).isDirectory()) out.push(dir);
      } catch {
        /* vanished */
      }
    }
  }
  return out;
}

async function prepare(manifest: ProviderManifest, adapters: ReadonlyMap<string, ApiAdapter>): Promise<Candidate> {
  const adapt = adapterFor(manifest, adapters);
  const entry = resolveEntry(manifest);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
  } catch (e) {
    throw nodeletError('NDL_PROVIDER_IMPORT', `${manifest.packageName}: ${firstLine(e)}`, e);
  }
  return { manifest, entry, provider: await providerFromModule(mod, manifest, adapt) };
}

function claim(c: Candidate, taken: Map<string, string>): void {
  const clash = [`name ${c.provider.name}`, ...c.provider.handlers.map((h) => `handler ${h}`)].find((k) => taken.has(k));
  if (clash) throw nodeletError('NDL_PROVIDER_DUPLICATE', `${c.manifest.packageName}: ${clash} is already served by ${taken.get(clash)}`);
  for (const k of [`name ${c.provider.name}`, ...c.provider.handlers.map((h) => `handler ${h}`)]) taken.set(k, c.manifest.packageName);
}

async function initialise(c: Candidate, o: ProviderLoadOptions): Promise<void> {
  const p = c.provider;
  const config = await readConfig(c, o.configs?.[p.name]);
  if (!p.init) return;
  const rootDir = join(o.dataRoot, p.name);
  mkdirSync(rootDir, { recursive: true, mode: 0o750 });
  const abort = new AbortController();
  const stopWithNodelet = () => abort.abort();
  o.signal.addEventListener('abort', stopWithNodelet, { once: true });
  const ms = o.initTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(nodeletError('NDL_PROVIDER_INIT', `${p.name}: init did not finish within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([
      p.init({ log: o.log.child({ provider: p.name }), rootDir, images: o.images, signal: abort.signal, config, services: o.services }),
      timeout,
    ]);
  } catch (e) {
    abort.abort();
    o.signal.removeEventListener('abort', stopWithNodelet);
    await Promise.resolve(p.shutdown?.()).catch(() => undefined);
    throw isNodeletError(e) ? e : nodeletError('NDL_PROVIDER_INIT', `${p.name}: ${firstLine(e)}`, e);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The provider's configuration from `path` (undefined without one): parsed, then its `validateConfig`'s
 * answer. The YAML parser is loaded only when a file is named (the agent's start loads no parser).
 */
async function readConfig(c: Candidate, path: string | undefined): Promise<unknown> {
  if (path === undefined) return undefined;
  const p = c.provider;
  let raw: unknown;
  try {
    const { parse } = await import('yaml');
    raw = parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw nodeletError('NDL_PROVIDER_CONFIG', `${p.name}: cannot read its configuration ${path}: ${firstLine(e)}`, e);
  }
  if (!p.validateConfig) return raw;
  try {
    // Awaited here so that an async validateConfig's refusal is NDL_PROVIDER_CONFIG too.
    return await p.validateConfig(raw);
  } catch (e) {
    throw nodeletError('NDL_PROVIDER_CONFIG', `${p.name}: its configuration ${path} is invalid: ${firstLine(e)}`, e);
  }
}

function fail(set: ProviderSet, log: Logger, dir: string, packageName: string | undefined, e: unknown): void {
  const err: NodeletError = isNodeletError(e) ? e : nodeletError('NDL_PROVIDER_IMPORT', `${packageName ?? dir}: ${firstLine(e)}`, e);
  set.failures.push({ dir, packageName, code: err.code, reason: err.message });
  log.error({ dir, package: packageName, code: err.code }, `provider skipped: ${err.code}: ${err.message}`);
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
}
