// The WASI 0.2 interfaces nodelet gives a component, as jco's instantiate() takes
// them (interface name → preview2-shim's implementation), with the shim modules
// the component worker configures before instantiating (args, env, preopens).
// Shared by worker/component-worker.mjs and the bench's instantiation figure
// (bench/lib/instantiate-child.mjs). Plain JavaScript, typed with JSDoc.

/**
 * Loads preview2-shim and returns its modules and the import object made of them.
 * Every call returns the same modules (Node caches them): the shim keeps its state
 * (args, env, preopens, stdio) per thread.
 */
export async function preview2Imports() {
  const cli = await import('@bytecodealliance/preview2-shim/cli');
  const filesystem = await import('@bytecodealliance/preview2-shim/filesystem');
  const io = await import('@bytecodealliance/preview2-shim/io');
  const clocks = await import('@bytecodealliance/preview2-shim/clocks');
  const random = await import('@bytecodealliance/preview2-shim/random');
  const http = await import('@bytecodealliance/preview2-shim/http');
  /** @type {Record<string, unknown>} */
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
  return { cli, filesystem, http, imports };
}
