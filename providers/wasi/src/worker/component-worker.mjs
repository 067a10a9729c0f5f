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
//                                         'PortInUse' when the HTTP port is taken
// wasi:cli/exit ends the thread with process.exit(code): the thread's exit code is
// the container's. The shim runs its blocking I/O (files, HTTP server) in one
// more thread it starts itself, which ends with this one.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';

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
// Volumes: each mount is a preopen. The shim resolves every path inside its
// preopen (no `..` above it, no absolute symlink, relative symlinks followed
// within it; see README "Components"); read-only mounts refuse writes below.
const preopens = {};
for (const m of d.mounts) preopens[m.containerPath] = m.hostPath;
filesystem._setPreopens(preopens);
guardReadOnly(
  filesystem,
  d.mounts.filter((m) => m.readOnly).map((m) => m.containerPath),
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

let instance;
try {
  const { instantiate } = await import(pathToFileURL(join(d.dir, 'component.js')).href);
  instance = await instantiate((file) => WebAssembly.compile(readFileSync(join(d.dir, file))), imports);
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
    post({ type: 'trap', message: describe(e) });
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

// Also works around the shim's refusal of mutate-directory (see openAt).
// Read-only mounts: the preopen descriptors of `paths`, and every descriptor
// opened through them, refuse whatever would change the volume ('read-only').
function guardReadOnly(fsShim, paths) {
  const readOnly = new WeakSet();
  for (const [desc, path] of fsShim._getPreopens()) if (paths.includes(path)) readOnly.add(desc);
  const proto = fsShim.types.Descriptor.prototype;
  const refuse = (name, isWrite) => {
    const orig = proto[name];
    proto[name] = function (...args) {
      if (readOnly.has(this) && isWrite(args)) throw 'read-only';
      return orig.apply(this, args);
    };
  };
  for (const name of [
    'writeViaStream',
    'appendViaStream',
    'setSize',
    'setTimes',
    'write',
    'createDirectoryAt',
    'setTimesAt',
    'removeDirectoryAt',
    'symlinkAt',
    'unlinkFileAt',
  ]) {
    refuse(name, () => true);
  }
  const renameAt = proto.renameAt;
  proto.renameAt = function (oldPath, newDescriptor, newPath) {
    if (readOnly.has(this) || readOnly.has(newDescriptor)) throw 'read-only';
    return renameAt.call(this, oldPath, newDescriptor, newPath);
  };
  const linkAt = proto.linkAt;
  proto.linkAt = function (oldFlags, oldPath, newDescriptor, newPath) {
    if (readOnly.has(newDescriptor)) throw 'read-only';
    return linkAt.call(this, oldFlags, oldPath, newDescriptor, newPath);
  };
  const openAt = proto.openAt;
  proto.openAt = function (pathFlags, path, openFlags, descriptorFlags) {
    const ro = readOnly.has(this);
    if (ro && (openFlags?.create || openFlags?.truncate || descriptorFlags?.write)) throw 'read-only';
    // wasi-libc asks for mutate-directory with writes; the shim refuses the flag
    // ('unsupported') although it does not enforce it: drop it (read-only is enforced here).
    const flags = descriptorFlags?.mutateDirectory ? { ...descriptorFlags, mutateDirectory: false } : descriptorFlags;
    const opened = openAt.call(this, pathFlags, path, openFlags, flags);
    if (ro) readOnly.add(opened);
    return opened;
  };
}
