// How a trap is reported: its kind and message, then the Wasm backtrace — function names when the
// module has a name section, else `wasm-function[index]`, with the code offset — as in
// `lastState.terminated.message` (at most upstream's 4 KiB for a termination message) and in the
// container's log. Frames of unbounded recursion are folded into one line with a count.
// Plain JavaScript, typed with JSDoc; used by every worker kind.

/** Upstream's bound of a container's termination message (`pkg/kubelet/kuberuntime`, 4 KiB). */
export const TERMINATION_MESSAGE_MAX = 4096;

/** Frames V8 records for an error (default 10): enough to show where a trap came from. */
Error.stackTraceLimit = 48;

/**
 * The report of `e` (an Error thrown out of a module or component; anything else as text).
 * @param {unknown} e
 * @returns {string}
 */
export function describeTrap(e) {
  if (!(e instanceof Error)) return truncate(String(e));
  const head = `${e.name}: ${e.message}`;
  /** @type {string[]} */
  const frames = [];
  let last = '';
  let repeats = 0;
  const flush = () => {
    if (repeats > 0) frames.push(`    … the frame above ${repeats} more time${repeats === 1 ? '' : 's'}`);
    repeats = 0;
  };
  for (const line of (e.stack ?? '').split('\n')) {
    if (!line.includes('wasm://') && !line.includes('wasm-function[')) continue;
    // `at name (wasm://wasm/<hash>:wasm-function[12]:0x1a2b)` → `at name (wasm-function[12]:0x1a2b)`
    const frame = `    ${line.trim().replace(/wasm:\/\/wasm\/[0-9a-f]+:/, '')}`;
    if (frame === last) {
      repeats++;
      continue;
    }
    flush();
    frames.push(frame);
    last = frame;
  }
  flush();
  return truncate(frames.length > 0 ? `${head}\nwasm backtrace:\n${frames.join('\n')}` : head);
}

/** `s` within {@link TERMINATION_MESSAGE_MAX} bytes of UTF-8. @param {string} s */
function truncate(s) {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length <= TERMINATION_MESSAGE_MAX) return s;
  return `${bytes
    .subarray(0, TERMINATION_MESSAGE_MAX - 4)
    .toString('utf8')
    .replace(/\uFFFD$/, '')}\n…`;
}
