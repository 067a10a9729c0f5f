// Worker thread entry: runs one WASI 0.2 component (one container), then ends.
// Plain JavaScript, like wasi-worker.mjs. One thread per container, never reused:
// preview2-shim keeps its state (args, env, preopens, stdio) in module globals,
// so a thread holds exactly one component's view of the world.
//
// workerData (ComponentWorkerInput in ../component-runner.ts):
//   { dir, world: 'cli' | 'http', argv, env, mounts, logPath, logOptions, criLogUrl, listen? }
// Messages to the parent:
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
import { identifyMounts, MountError } from './wasi-imports.mjs';

const d = workerData;
const post = (msg) => parentPort.postMessage(msg);
const describe = (e) =>
  e instanceof Error ? `${e.name}: ${e.message}` : typeof e === 'object' && e !== null && 'tag' in e ? `${e.tag}: ${JSON.stringify(e.val)}` : String(e);

const { CriLogWriter } = await import(d.criLogUrl);
const log = new CriLogWriter(d.logPath, d.logOptions);
// The shim writes the component's stdout/stderr with process.stdout/stderr.write:
// they go to the container's CRI log (synchronously), nowhere else.
for (const [name, stream] of [
  ['stdout', process.stdout],
  ['stderr', process.stderr],
]) {
  stream.write = (chunk, encoding, cb) => {
    try {
      log.write(name, typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk);
    } catch {
      // the log is closed: the container is ending
    }
    const done = typeof encoding === 'function' ? encoding : cb;
    if (typeof done === 'function') queueMicrotask(done);
    return true;
  };
}
process.on('exit', () => log.close());

const cli = await import('@bytecodealliance/preview2-shim/cli');
const filesystem = await import('@bytecodealliance/preview2-shim/filesystem');
const io = await import('@bytecodealliance/preview2-shim/io');
const clocks = await import('@bytecodealliance/preview2-shim/clocks');
const random = await import('@bytecodealliance/preview2-shim/random');
const http = await import('@bytecodealliance/preview2-shim/http');

cli._setArgs(d.argv);
cli._setEnv(d.env);
cli._setCwd('/');
// Volumes: each mount is a preopen, identified first like preview1's (opened
// O_NOFOLLOW, its real path must be hostPath). The shim resolves every path inside
// its preopen (no `..` above it, no absolute symlink, relative symlinks followed
// within it); guardMounts adds read-only mounts and the mount identity check.
const preopens = {};
for (const m of d.mounts) preopens[m.containerPath] = m.hostPath;
let ids;
try {
  ids = identifyMounts(d.mounts, fs);
} catch (e) {
  post(e instanceof MountError ? { type: 'failed', reason: 'mount', message: e.message } : { type: 'failed', message: describe(e) });
  process.exit(1);
}
filesystem._setPreopens(preopens);
guardMounts(filesystem, d.mounts, ids, (m) =>
  post({
    type: 'warning',
    reason: 'VolumeReplaced',
    message: `volume ${m.name} mounted at ${m.containerPath}: its directory was renamed or replaced (e.g. by a symlink) after the container started; every access to it is refused`,
  }),
);

const imports = {
  'wasi:cli/environment': cli.environment,
  'wasi:cli/exit': cli.exit,
  'wasi:cli/stdin': cli.stdin,
  'wasi:cli/stdout': cli.stdout,
  'wasi:cli/stderr': cli.stderr,
  'wasi:cli/terminal-input': cli.terminalInput,
  'wasi:cli/terminal-output': cli.terminalOutput,
  'wasi:cli/terminal-stdin': cli.terminalStdin,
  'wasi:cli/terminal-stdout': cli.terminalStdout,
  'wasi:cli/terminal-stderr': cli.terminalStderr,
  'wasi:io/error': io.error,
  'wasi:io/poll': io.poll,
  'wasi:io/streams': io.streams,
  'wasi:clocks/monotonic-clock': clocks.monotonicClock,
  'wasi:clocks/wall-clock': clocks.wallClock,
  'wasi:random/random': random.random,
  'wasi:random/insecure': random.insecure,
  'wasi:random/insecure-seed': random.insecureSeed,
  'wasi:filesystem/types': filesystem.types,
  'wasi:filesystem/preopens': filesystem.preopens,
  'wasi:http/types': http.types,
  'wasi:http/outgoing-handler': http.outgoingHandler,
};

const memories = [];
const memoryBytes = () => Math.max(0, ...memories.map((m) => m.buffer.byteLength));
let instance;
try {
  const { instantiate } = await import(pathToFileURL(join(d.dir, 'component.js')).href);
  // Core modules come compiled (memories capped) from the runner; their memories are
  // kept to report the size at a trap (an OOM kill when near the cap).
  instance = await instantiate(
    (file) => d.modules[file] ?? WebAssembly.compile(readFileSync(join(d.dir, file))),
    imports,
    async (module, imps) => {
      const inst = await WebAssembly.instantiate(module, imps);
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

function runCli(inst) {
  const run = inst.run ?? inst['wasi:cli/run@0.2.0'];
  post({ type: 'started' });
  try {
    run.run();
    post({ type: 'exit', code: 0 });
    process.exit(0);
  } catch (e) {
    // jco throws a ComponentError for run()'s `err` result: exit code 1, as wasmtime reports.
    if (e?.name === 'ComponentError' || e?.constructor?.name === 'ComponentError') {
      post({ type: 'exit', code: 1 });
      process.exit(1);
    }
    post({ type: 'trap', message: describe(e), memoryBytes: memoryBytes() });
    process.exit(134);
  }
}

function serve(inst) {
  const handler = inst.incomingHandler ?? Object.entries(inst).find(([k]) => k.startsWith('wasi:http/incoming-handler'))?.[1];
  const server = new http.HTTPServer(handler);
  const { host, port } = d.listen;
  try {
    server.listen(port, host);
  } catch (e) {
    const inUse = e?.code === 'EADDRINUSE' || /EADDRINUSE/.test(String(e?.message ?? e));
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
function guardMounts(fsShim, mounts, ids, onReplaced) {
  const mountOf = new WeakMap();
  const byPath = new Map(mounts.map((m, i) => [m.containerPath, { ...m, id: ids[i], reported: false }]));
  for (const [desc, path] of fsShim._getPreopens()) if (byPath.has(path)) mountOf.set(desc, byPath.get(path));
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
  const wrap = (name, { write = () => false, path = false, others = () => [] }) => {
    const orig = proto[name];
    proto[name] = function (...args) {
      for (const m of [mountOf.get(this), ...others(args).map((d) => mountOf.get(d))]) {
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
  proto.openAt = function (pathFlags, path, openFlags, descriptorFlags) {
    const m = mountOf.get(this);
    if (m?.readOnly && (openFlags?.create || openFlags?.truncate || descriptorFlags?.write)) throw 'read-only';
    if (m && !intact(m)) throw 'not-permitted';
    const flags = descriptorFlags?.mutateDirectory ? { ...descriptorFlags, mutateDirectory: false } : descriptorFlags;
    const opened = openAt.call(this, pathFlags, path, openFlags, flags);
    if (m) mountOf.set(opened, m);
    return opened;
  };
}
