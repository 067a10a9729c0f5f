/**
 * Errors that cross the provider boundary. They are recognised by a
 * `Symbol.for` brand and a string `code`, never by `instanceof`, so a provider
 * built against another copy of this package is understood by core.
 */

/** The brand every provider error carries (a registry symbol, shared across copies). */
export const PROVIDER_ERROR = Symbol.for('nodelet.dev/v1/ProviderError');

/** Codes core understands; providers may use others (they are treated as `Internal`). */
export type ProviderErrorCode = 'NotFound' | 'NotSupported' | 'InvalidArgument' | 'ImagePull' | 'InvalidImage' | 'Unavailable' | 'Internal';

/** A branded error: `code` says what went wrong, `reason` is the short status reason. */
export interface ProviderError extends Error {
  /** The brand: how core recognises the error, whichever copy of this package made it. */
  readonly [PROVIDER_ERROR]: true;
  /** What went wrong: one of {@link ProviderErrorCode}, or a provider's own code (treated as `Internal`). */
  readonly code: ProviderErrorCode | (string & {});
  /** A CamelCase reason for pod status/events (e.g. `ErrImagePull`); defaults to the code. */
  readonly reason: string;
}

/** Creates a branded provider error. */
export function providerError(code: ProviderErrorCode, message: string, opts: { reason?: string; cause?: unknown } = {}): ProviderError {
  const err = new Error(message, { cause: opts.cause }) as Error & Record<string | symbol, unknown>;
  err.name = 'ProviderError';
  Object.defineProperty(err, PROVIDER_ERROR, { value: true });
  err.code = code;
  err.reason = opts.reason ?? code;
  return err as unknown as ProviderError;
}

/** True when `e` carries the provider-error brand (from any copy of this package). */
export function isProviderError(e: unknown): e is ProviderError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[PROVIDER_ERROR] === true;
}

function hasCode(e: unknown, code: ProviderErrorCode): boolean {
  return isProviderError(e) && e.code === code;
}

/** True for a branded `NotFound` error. */
export const isNotFound = (e: unknown): boolean => hasCode(e, 'NotFound');
/** True for a branded `NotSupported` error (an optional capability the provider lacks). */
export const isNotSupported = (e: unknown): boolean => hasCode(e, 'NotSupported');
/** True for a branded `InvalidArgument` error (bad input from the pod spec). */
export const isInvalidArgument = (e: unknown): boolean => hasCode(e, 'InvalidArgument');
/** True for a branded `ImagePull` error (the image could not be fetched). */
export const isImagePull = (e: unknown): boolean => hasCode(e, 'ImagePull');
/** True for a branded `InvalidImage` error (fetched, but not runnable by this provider). */
export const isInvalidImage = (e: unknown): boolean => hasCode(e, 'InvalidImage');
