/**
 * WASI 0.2 components, transpiled to JavaScript + core modules with jco once
 * per image digest and kept on disk under the provider's root dir:
 *
 *   <rootDir>/components/<digest hex>/component.js, component.core*.wasm, meta.json
 *
 * The transpile runs in a short-lived worker thread (worker/transpile-worker.mjs:
 * ~0.1–1 s of CPU that would otherwise block nodelet's event loop); concurrent
 * loads of one digest share it; a failed transpile is not cached. The cache
 * survives restarts: a directory is only renamed into place once complete.
 *
 *   load(digest) ──meta.json there──► ready
 *        └──missing──► transpile (worker) ──► check imports/exports ──► write tmp dir ──rename──► ready
 *                                                      └──unsupported──► InvalidImage (not cached on disk)
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { providerError, type PulledImage } from '@nodelet/plugin-api/v1';
import { plainWorker, type Transpiled, type TranspileReply, type TranspileWorkerData } from './worker-protocol.ts';
import { CONFIG_VERSIONS, KEYVALUE_VERSIONS, LOGGING_VERSIONS, SPIN_KEYVALUE_VERSIONS, SPIN_VARIABLES_VERSIONS } from './platform/interface-versions.mjs';

const TRANSPILE_WORKER_URL = new URL('./worker/transpile-worker.mjs', import.meta.url);

/**
 * The interfaces nodelet provides to components (preview2-shim, confined by
 * worker/component-worker.mjs). Anything else a component imports makes its
 * container fail at start, naming the interface. `wasi:sockets/*` are the
 * shim's, confined to the pod by worker/component-sockets.mjs.
 */
export const PROVIDED_INTERFACES: ReadonlySet<string> = new Set([
  'wasi:cli/environment',
  'wasi:cli/exit',
  'wasi:cli/stdin',
  'wasi:cli/stdout',
  'wasi:cli/stderr',
  'wasi:cli/terminal-input',
  'wasi:cli/terminal-output',
  'wasi:cli/terminal-stdin',
  'wasi:cli/terminal-stdout',
  'wasi:cli/terminal-stderr',
  'wasi:io/error',
  'wasi:io/poll',
  'wasi:io/streams',
  'wasi:clocks/monotonic-clock',
  'wasi:clocks/wall-clock',
  'wasi:random/random',
  'wasi:random/insecure',
  'wasi:random/insecure-seed',
  'wasi:filesystem/types',
  'wasi:filesystem/preopens',
  'wasi:http/types',
  'wasi:http/outgoing-handler',
  'wasi:sockets/network',
  'wasi:sockets/instance-network',
  'wasi:sockets/tcp',
  'wasi:sockets/tcp-create-socket',
  'wasi:sockets/udp',
  'wasi:sockets/udp-create-socket',
  'wasi:sockets/ip-name-lookup',
]);

/**
 * The platform interfaces nodelet provides (worker/platform/), by the versions provided: their
 * drafts differ, so a component naming another version fails at start naming it.
 */
export const PLATFORM_INTERFACES: ReadonlyMap<string, readonly string[]> = new Map([
  ['wasi:config/store', CONFIG_VERSIONS],
  ['wasi:keyvalue/store', KEYVALUE_VERSIONS],
  ['wasi:keyvalue/atomics', KEYVALUE_VERSIONS],
  ['wasi:keyvalue/batch', KEYVALUE_VERSIONS],
  ['wasi:logging/logging', LOGGING_VERSIONS],
  ['fermyon:spin/variables', SPIN_VARIABLES_VERSIONS],
  ['fermyon:spin/key-value', SPIN_KEYVALUE_VERSIONS],
]);

/** Which world a component is run as, from its exports. */
export type ComponentWorld = 'cli' | 'http';

/** A transpiled component ready to run. */
export interface LoadedComponent {
  /** Directory holding component.js and its core modules. */
  readonly dir: string;
  readonly world: ComponentWorld;
  /** Interfaces it imports, with their versions as the component names them (e.g. `wasi:cli/stdout@0.2.0`). */
  readonly imports: readonly string[];
  /** How long the transpile took (0 when it came from the cache). */
  readonly transpileMs: number;
}

interface Meta {
  readonly world: ComponentWorld;
  readonly imports: string[];
}

/** The interface name without its `@version`. */
export function unversioned(name: string): string {
  return name.replace(/@[^/]*$/, '');
}

/** Why nodelet cannot give `name` (a versioned interface), or undefined when it can. */
function unprovided(name: string): string | undefined {
  const base = unversioned(name);
  if (PROVIDED_INTERFACES.has(base)) return undefined;
  const versions = PLATFORM_INTERFACES.get(base);
  if (!versions) return name;
  // Unversioned: jco names an interface so when the component calls nothing of it (transpile-worker.mjs).
  if (base === name) return undefined;
  const version = name.slice(base.length + 1);
  return versions.includes(version) ? undefined : `${name} (nodelet provides ${versions.map((v) => `@${v}`).join(', ')})`;
}

/**
 * Checks a component's imports and exports; returns its world. Throws a
 * branded `InvalidImage` error (reason `UnsupportedInterface`) naming every
 * interface (with its version) nodelet does not provide, or one saying which export is missing.
 */
export function checkComponent(image: string, imports: readonly string[], exports: readonly string[]): ComponentWorld {
  const missing = imports.flatMap((i) => unprovided(i) ?? []);
  if (missing.length > 0) {
    throw providerError(
      'InvalidImage',
      `the component of image ${image} imports ${missing.join(', ')}, which nodelet does not provide (it provides wasi:cli, wasi:io, wasi:clocks, wasi:random, wasi:filesystem, wasi:sockets and wasi:http 0.2, wasi:config/store, wasi:keyvalue/{store,atomics,batch} and wasi:logging/logging)`,
      { reason: 'UnsupportedInterface' },
    );
  }
  const names = exports.map(unversioned);
  if (names.includes('wasi:http/incoming-handler')) return 'http';
  if (names.includes('wasi:cli/run')) return 'cli';
  throw providerError(
    'InvalidImage',
    `the component of image ${image} exports neither wasi:cli/run nor wasi:http/incoming-handler (exports: ${names.join(', ') || 'none'})`,
    {
      reason: 'UnsupportedInterface',
    },
  );
}

/** Transpiled components by image digest, on disk under `dir`. */
export class ComponentCache {
  private readonly loading = new Map<string, Promise<LoadedComponent>>();

  /** @param dir where transpiled components are kept (created on first use) */
  constructor(readonly dir: string) {}

  /** The transpiled component of `image`, transpiling it on first use. */
  async load(image: PulledImage): Promise<LoadedComponent> {
    const hex = image.digest.replace(/^sha256:/, '');
    if (!/^[0-9a-f]{64}$/.test(hex)) throw providerError('InvalidImage', `image ${image.image} has a malformed digest ${image.digest}`);
    const out = join(this.dir, hex);
    const cached = await readMeta(out);
    if (cached) {
      checkComponent(image.image, cached.imports, [cached.world === 'http' ? 'wasi:http/incoming-handler' : 'wasi:cli/run']);
      return { dir: out, world: cached.world, imports: cached.imports, transpileMs: 0 };
    }
    let p = this.loading.get(hex);
    if (!p) {
      p = this.transpile(image, out).finally(() => this.loading.delete(hex));
      this.loading.set(hex, p);
    }
    return p;
  }

  private async transpile(image: PulledImage, out: string): Promise<LoadedComponent> {
    const t0 = performance.now();
    let bytes: Buffer;
    try {
      bytes = await readFile(image.path);
    } catch (e) {
      throw providerError('InvalidImage', `cannot read the component of image ${image.image} at ${image.path}: ${(e as Error).message}`, { cause: e });
    }
    const result = await runTranspileWorker(bytes, image.image);
    const world = checkComponent(image.image, result.imports, result.exports);
    const imports = [...result.imports];
    await mkdir(this.dir, { recursive: true });
    const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
    await mkdir(tmp, { recursive: true });
    try {
      for (const [name, content] of Object.entries(result.files)) await writeFile(join(tmp, name), content);
      await writeFile(join(tmp, 'meta.json'), JSON.stringify({ world, imports } satisfies Meta));
      if (existsSync(out)) await rm(tmp, { recursive: true, force: true });
      else await rename(tmp, out);
    } catch (e) {
      await rm(tmp, { recursive: true, force: true });
      throw providerError('Internal', `cannot store the transpiled component of image ${image.image} under ${this.dir}: ${(e as Error).message}`, { cause: e });
    }
    return { dir: out, world, imports, transpileMs: performance.now() - t0 };
  }
}

async function readMeta(dir: string): Promise<Meta | undefined> {
  try {
    const m = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as Meta;
    return (m.world === 'cli' || m.world === 'http') && Array.isArray(m.imports) ? m : undefined;
  } catch {
    return undefined;
  }
}

function runTranspileWorker(bytes: Uint8Array, image: string): Promise<Transpiled> {
  return new Promise((resolve, reject) => {
    const w = new Worker(TRANSPILE_WORKER_URL, { ...plainWorker(), workerData: { bytes } satisfies TranspileWorkerData });
    let settled = false;
    w.once('message', (m: TranspileReply) => {
      settled = true;
      if (m.ok) resolve(m.result);
      else reject(providerError('InvalidImage', `image ${image} is not a valid WebAssembly component: ${m.message}`));
    });
    w.once('error', (e) => {
      if (!settled) reject(providerError('Internal', `transpiling the component of image ${image} failed: ${e.message}`, { cause: e }));
      settled = true;
    });
    w.once('exit', (code) => {
      if (!settled) reject(providerError('Internal', `the transpile worker for image ${image} ended (code ${code}) without a result`));
      settled = true;
    });
  });
}
