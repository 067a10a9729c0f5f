// How a `wasi:logging/logging.log` call is written to the container's log (what `kubectl logs`
// shows): one line per call, `<LEVEL> <context>: <message>` (no context: `<LEVEL> <message>`),
// levels written as the WIT enum names them, in upper case and padded to one width so lines align.
// warn, error and critical go to stderr, the others to stdout. A message with line breaks stays
// one line per call: its breaks are written as `\n`. Plain JavaScript (it runs in the worker threads).

/** `wasi:logging/logging.level`, in its order (the enum's discriminants). */
export const LOG_LEVELS = /** @type {const} */ (['trace', 'debug', 'info', 'warn', 'error', 'critical']);

/** @typedef {typeof LOG_LEVELS[number]} LogLevel */

/**
 * The line for one call, and the stream it goes to.
 * @param {LogLevel} level @param {string} context @param {string} message
 * @returns {{ stream: 'stdout' | 'stderr', line: string }}
 */
export function logLine(level, context, message) {
  const flat = (/** @type {string} */ s) => s.replace(/\r?\n/g, '\\n');
  const text = context === '' ? flat(message) : `${flat(context)}: ${flat(message)}`;
  return { stream: level === 'warn' || level === 'error' || level === 'critical' ? 'stderr' : 'stdout', line: `${level.toUpperCase().padEnd(8)} ${text}\n` };
}
