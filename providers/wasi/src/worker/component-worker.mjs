// Worker thread entry: runs one WASI 0.2 component (one container), then ends.
// Plain JavaScript, like wasi-worker.mjs (type-checked against ../worker-protocol.ts,
// which the main thread uses too). One thread per container, never reused:
// preview2-shim keeps its state (args, env, preopens, stdio) in module globals,
// so a thread holds exactly one component's view of the world.
//
// workerData (ComponentWorkerData in ../worker-protocol.ts):
//   { dir, modules, world: 'cli' | 'http', argv, env, mounts, logPath, logOptions, criLogUrl, listen?, routes?,
//     platform, imports, outbound?, sockets }
// Messages to the parent (ComponentMessage there):
//   { type: 'started' }                   instantiated; cli: run() about to be called,
//                                         http: listening on listen.host:listen.port
//   { type: 'exit', code }                cli: run() returned (0, or 1 for its error result)
//   { type: 'trap', message }             the component trapped / threw
//   { type: 'failed', message, reason? }  could not start (before 'started'); reason
//                                         'PortInUse' when the HTTP port is taken, 'mount'
//                                         when a mount's directory is not the one named
//   { type: 'warning', message, reason? } any time; with a reason also a Warning event
// wasi:cli/exit ends the thread with process.exit(code): the thread's exit code is
// the container's. The shim runs its blocking I/O (files, HTTP server) in one
// more thread it starts itself, which ends with this one.
import * as fs from 'node:fs';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { droppingLogWriter, identifyMounts, MountError } from './wasi-imports.mjs';
import { preview2Imports } from './preview2-imports.mjs';
import { describeTrap } from './trap-report.mjs';
import { RouteClient } from './service-route.mjs';
import { routedOutgoingHandler } from './shim-outgoing.mjs';
import { confinedSockets } from './component-sockets.mjs';
import { Platform } from './platform/platform-imports.mjs';
import { jcoPlatformImports } from './platform/jco-platform.mjs';
/** @import { ShimOutgoingHandler } from './shim-outgoing.mjs' */
/** @import { ComponentMessage, ComponentWorkerData, WorkerMount } from '../worker-protocol.ts' */
/**
 * The part of preview2-shim's Node.js http module used here (its package's `types`
 * condition resolves to the browser build, which has no server).
 * @typedef {{ HTTPServer: new (handler: unknown) => { listen(port: number, host: string): void } }} HttpShim
 */
/**
 * preview2-shim's filesystem, as guardMounts edits it: a Descriptor's methods are
 * wrapped by name on its prototype.
 * @typedef {(this: object, ...args: unknown[]) => unknown} DescriptorMethod
 * @typedef {{ _getPreopens(): Array<[object, string]>, types: { Descriptor: { prototype: Record<string, DescriptorMethod> } } }} FilesystemShim
 */
/** @typedef {WorkerMount & { id: { dev: bigint, ino: bigint }, reported: boolean }} GuardedMount */

if (!parentPort) throw new Error('component-worker.mjs runs as a worker thread');
const port = parentPort;
const d = /** @type {ComponentWorkerData} */ (workerData);
/** @param {ComponentMessage} msg */
const post = (msg) => port.postMessage(msg);
/** @param {unknown} e a thrown value: an Error, a WIT error variant ({ tag, val }) or anything else */
const describe = (e) =>
  e instanceof Error
    ? `${e.name}: ${e.message}`
    : typeof e === 'object' && e !== null && 'tag' in e
      ? `${String(e.tag)}: ${JSON.stringify('val' in e ? e.val : undefined)}`
      : String(e);

/** @type {{ CriLogWriter: typeof import('@nodelet/plugin-api/v1/toolkit').CriLogWriter }} */
const { CriLogWriter } = await import(d.criLogUrl);
const log = new CriLogWriter(d.logPath, d.logOptions);
// The shim writes the component's stdout/stderr with process.stdout/stderr.write:
// they go to the container's CRI log (synchronously), nowhere else; what the log
// refuses (a full disk) is dropped and reported as droppingLogWriter says.
const writeLog = droppingLogWriter(log, (message, reason) => post({ type: 'warning', message, ...(reason === undefined ? {} : { reason }) }));
for (const [name, stream] of /** @type {const} */ ([
  ['stdout', process.stdout],
  ['stderr', process.stderr],
])) {
  /**
   * @param {string | Uint8Array} chunk
   * @param {BufferEncoding | ((err?: Error | null) => void)} [encoding]
   * @param {(err?: Error | null) => void} [cb]
   */
  const write = (chunk, encoding, cb) => {
    writeLog(name, typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk);
    const done = typeof encoding === 'function' ? encoding : cb;
    if (typeof done === 'function') queueMicrotask(done);
    return true;
  };
  stream.write = /** @type {typeof stream.write} */ (write);
}
process.on('exit', () => log.close());

const shim = await preview2Imports();
const { cli, filesystem, imports } = shim;
const http = /** @type {typeof shim.http & HttpShim} */ (shim.http);
// Outgoing requests and connections go only where the pod's allow-list says (d.outbound), and
// connect where the node's Service resolver says (ClusterIPs, Service names).
const routes = d.routes ? new RouteClient(d.routes) : undefined;
/** @param {string} what */
const denied = (what) => writeLog('stderr', Buffer.from(`nodelet: outbound ${what} denied: not in the pod's wasi.nodelet.dev/allowed-outbound-hosts\n`));
if (routes || d.outbound)
  imports['wasi:http/outgoing-handler'] = routedOutgoingHandler(/** @type {ShimOutgoingHandler} */ (shim.http.outgoingHandler), routes, {
    policy: d.outbound,
    denied,
  });
// wasi:sockets: the shim's, confined to the pod (component-sockets.mjs); loaded only when imported.
if (d.imports.some((i) => i.startsWith('wasi:sockets/')))
  Object.assign(
    imports,
    confinedSockets(/** @type {any} */ (await import('@bytecodealliance/preview2-shim/sockets')), {
      confinement: d.sockets,
      policy: d.outbound,
      routes,
      denied,
    }),
  );

// wasi:config, wasi:keyvalue, wasi:logging (platform/jco-platform.mjs).
// The stores block the thread when Redis must answer: jco's bindings here are synchronous.
Object.assign(imports, jcoPlatformImports(new Platform(d.platform, d.env, { blocking: true }), d.imports, writeLog));

cli._setArgs([...d.argv]);
cli._setEnv(d.env);
cli._setCwd('/');
// Volumes: each mount is a preopen, identified first like preview1's (opened
// O_NOFOLLOW, its real path must be hostPath). The shim resolves every path inside
// its preopen (no `..` above it, no absolute symlink, relative symlinks followed
// within it); guardMounts adds read-only mounts and the mount identity check.
/** @type {Record<string, string>} */
const preopens = {};
for (const m of d.mounts) preopens[m.containerPath] = m.hostPath;
/** @type {ReturnType<typeof identifyMounts>} */
let ids;
try {
  ids = identifyMounts(d.mounts, fs);
} catch (e) {
  post(e instanceof MountError ? { type: 'failed', reason: 'mount', message: e.message } : { type: 'failed', message: describe(e) });
  process.exit(1);
}
/** @type {(preopens: Record<string, string>) => void} the Node.js build takes host paths */ (filesystem._setPreopens)(preopens);
guardMounts(/** @type {FilesystemShim} */ (/** @type {unknown} */ (filesystem)), d.mounts, ids, (m) =>
  post({
    type: 'warning',
    reason: 'VolumeReplaced',
    message: `volume ${m.name} mounted at ${m.containerPath}: its directory was renamed or replaced (e.g. by a symlink) after the container started; every access to it is refused`,
  }),
);

/** @type {WebAssembly.Memory[]} */
const memories = [];
const memoryBytes = () => Math.max(0, ...memories.map((m) => m.buffer.byteLength));
/**
 * The transpiled component's exports (jco's `instantiate` with `instantiation: async`), by
 * interface: `run`/`wasi:cli/run@…` for the cli world, `incomingHandler`/`wasi:http/incoming-handler@…` for http.
 * @typedef {Record<string, unknown>} ComponentExports
 */
/** @type {ComponentExports} */
let instance;
try {
  /**
   * @type {{ instantiate(
   *   getCoreModule: (file: string) => WebAssembly.Module | Promise<WebAssembly.Module>,
   *   imports: Record<string, unknown>,
   *   instantiateCore: (module: WebAssembly.Module, imports: WebAssembly.Imports) => Promise<WebAssembly.Instance>,
   * ): Promise<ComponentExports> }}
   */
  const { instantiate } = await import(pathToFileURL(join(d.dir, 'component.js')).href);
  // Core modules come compiled (memories capped) from the runner; their memories are
  // kept to report the size at a trap (an OOM kill when near the cap).
  instance = await instantiate(
    (file) => d.modules[file] ?? WebAssembly.compile(readFileSync(join(d.dir, file))),
    imports,
    async (module, imps) => {
      const inst = await WebAssembly.instantiate(module, imps); // a Module in: an Instance out
      for (const v of Object.values(inst.exports)) if (v instanceof WebAssembly.Memory) memories.push(v);
      return inst;
    },
  );
} catch (e) {
  post({ type: 'failed', message: describe(e) });
  process.exit(1);
}

if (d.world === 'http') serve(instance);
else runCli(instance);

/** @param {ComponentExports} inst */
function runCli(inst) {
  const run = /** @type {{ run(): void }} */ (inst.run ?? inst['wasi:cli/run@0.2.0']);
  post({ type: 'started' });
  try {
    run.run();
    post({ type: 'exit', code: 0 });
    process.exit(0);
  } catch (e) {
    // jco throws a ComponentError for run()'s `err` result: exit code 1, as wasmtime reports.
    const err = /** @type {{ name?: string, constructor?: { name?: string } } | undefined} */ (e);
    if (err?.name === 'ComponentError' || err?.constructor?.name === 'ComponentError') {
      post({ type: 'exit', code: 1 });
      process.exit(1);
    }
    const report = describeTrap(e);
    process.stderr.write(`nodelet: the component trapped: ${report}\n`);
    post({ type: 'trap', message: report, memoryBytes: memoryBytes() });
    process.exit(134);
  }
}

/** @param {ComponentExports} inst */
function serve(inst) {
  const handler = inst.incomingHandler ?? Object.entries(inst).find(([k]) => k.startsWith('wasi:http/incoming-handler'))?.[1];
  const server = new http.HTTPServer(handler);
  if (!d.listen) throw new Error('an http component runs with workerData.listen');
  const { host, port } = d.listen;
  try {
    server.listen(port, host);
  } catch (e) {
    const err = /** @type {{ code?: string, message?: string } | undefined} */ (e);
    const inUse = err?.code === 'EADDRINUSE' || /EADDRINUSE/.test(String(err?.message ?? e));
    post({
      type: 'failed',
      reason: inUse ? 'PortInUse' : 'Listen',
      message: inUse ? `port ${port} on ${host} is already in use` : `cannot listen on ${host}:${port}: ${describe(e)}`,
    });
    process.exit(1);
  }
  post({ type: 'started' });
}

// Volumes: every descriptor is tied to the mount it came from (preopens, then
// whatever openAt returns below them).
//  - Read-only mounts refuse whatever would change them ('read-only').
//  - Before each path call (…At), the mount's host directory must still be the one
//    identified at start (device + inode, not a symlink): a mount renamed or replaced
//    (e.g. by a symlink) by another container sharing the volume is refused
//    ('not-permitted') and reported once as VolumeReplaced, never followed.
//  - The shim refuses the mutate-directory flag wasi-libc asks for with writes
//    ('unsupported'), although it does not enforce it: it is dropped here.
/**
 * @param {FilesystemShim} fsShim
 * @param {readonly WorkerMount[]} mounts
 * @param {ReturnType<typeof identifyMounts>} ids each mount's directory as identified at the start
 * @param {(m: GuardedMount) => void} onReplaced called once per mount found renamed or replaced
 */
function guardMounts(fsShim, mounts, ids, onReplaced) {
  /** @type {WeakMap<object, GuardedMount>} */
  const mountOf = new WeakMap();
  /** @type {Map<string, GuardedMount>} */
  const byPath = new Map(mounts.map((m, i) => [m.containerPath, { ...m, id: ids[i], reported: false }]));
  for (const [desc, path] of fsShim._getPreopens()) {
    const m = byPath.get(path);
    if (m) mountOf.set(desc, m);
  }
  /** @param {GuardedMount} m */
  const intact = (m) => {
    try {
      const st = lstatSync(m.hostPath, { bigint: true });
      if (!st.isSymbolicLink() && st.dev === m.id.dev && st.ino === m.id.ino) return true;
    } catch {
      // gone: refused below
    }
    if (!m.reported) {
      m.reported = true;
      onReplaced(m);
    }
    return false;
  };
  const proto = fsShim.types.Descriptor.prototype;
  /**
   * @param {string} name
   * @param {{ write?: (args: unknown[]) => boolean, path?: boolean, others?: (args: unknown[]) => unknown[] }} how
   *   write: the call changes the mount; path: it resolves a path below the descriptor; others: more descriptors it uses
   */
  const wrap = (name, { write = () => false, path = false, others = () => [] }) => {
    const orig = proto[name];
    /** @type {DescriptorMethod} */
    proto[name] = function (...args) {
      for (const m of [mountOf.get(this), ...others(args).map((d) => (typeof d === 'object' && d !== null ? mountOf.get(d) : undefined))]) {
        if (!m) continue;
        if (m.readOnly && write(args)) throw 'read-only';
        if (path && !intact(m)) throw 'not-permitted';
      }
      return orig.apply(this, args);
    };
  };
  for (const name of ['writeViaStream', 'appendViaStream', 'setSize', 'setTimes', 'write']) wrap(name, { write: () => true });
  for (const name of ['createDirectoryAt', 'setTimesAt', 'removeDirectoryAt', 'symlinkAt', 'unlinkFileAt']) wrap(name, { write: () => true, path: true });
  for (const name of ['statAt', 'readlinkAt', 'metadataHashAt']) wrap(name, { path: true });
  wrap('renameAt', { write: () => true, path: true, others: (a) => [a[1]] });
  wrap('linkAt', { write: () => true, path: true, others: (a) => [a[2]] });
  const openAt = proto.openAt;
  /** @type {DescriptorMethod} */
  proto.openAt = function (pathFlags, path, rawOpenFlags, rawDescriptorFlags) {
    const openFlags = /** @type {{ create?: boolean, truncate?: boolean } | undefined} */ (rawOpenFlags);
    const descriptorFlags = /** @type {{ write?: boolean, mutateDirectory?: boolean } | undefined} */ (rawDescriptorFlags);
    const m = mountOf.get(this);
    if (m?.readOnly && (openFlags?.create || openFlags?.truncate || descriptorFlags?.write)) throw 'read-only';
    if (m && !intact(m)) throw 'not-permitted';
    const flags = descriptorFlags?.mutateDirectory ? { ...descriptorFlags, mutateDirectory: false } : descriptorFlags;
    const opened = openAt.call(this, pathFlags, path, openFlags, flags);
    if (m && typeof opened === 'object' && opened !== null) mountOf.set(opened, m);
    return opened;
  };
}
