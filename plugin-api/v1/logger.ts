/**
 * The structured logger core hands to a provider (a pino logger satisfies it).
 * Call it as `log.info({ pod: 'ns/name' }, 'message')` or `log.info('message')`.
 */
export interface Logger {
  /** Detailed tracing, off by default. */
  debug(obj: object | string, msg?: string): void;
  /** Normal operation. */
  info(obj: object | string, msg?: string): void;
  /** Something unexpected that nodelet recovers from. */
  warn(obj: object | string, msg?: string): void;
  /** A failure the user should see. */
  error(obj: object | string, msg?: string): void;
  /** A logger whose every line carries `bindings`. */
  child(bindings: Record<string, unknown>): Logger;
}
