/** The face of core/logging: what other folders may use; everything else in the folder is private to it. */
export { createLogger, flushLogger } from './logger.ts';
