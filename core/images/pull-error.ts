/**
 * How image failures cross to providers: branded `ImagePull` provider errors
 * with the kubelet's reasons (`ErrImagePull`, `ErrImageNeverPull`, `InvalidImageName`)
 * and a message naming the image and the precise cause; the catalogued
 * nodelet error (or the registry's) is kept as `cause`.
 */
import { providerError, isProviderError, type ProviderError } from '@nodelet/plugin-api/v1';
import { isNodeletError, nodeletError, type NodeletError } from '../errors/index.ts';
import { RegistryError, truncateMessage } from './registry-error.ts';

/** Why a fetch threw (`connect ECONNREFUSED ...`, `getaddrinfo ENOTFOUND ...`, `The operation was aborted`). */
function networkDetail(e: Error): string {
  const cause = e.cause as { message?: unknown; code?: unknown } | undefined;
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return `pull aborted: ${e.message}`;
  if (typeof cause?.message === 'string' && cause.message) return `${e.message}: ${cause.message}`;
  return e.message || String(e);
}

/** The catalogued error behind a failure. */
function catalogued(e: unknown): NodeletError {
  if (isNodeletError(e)) return e;
  if (e instanceof RegistryError) return nodeletError('NDL_IMAGE_PULL', e.message, e);
  if (e instanceof Error) return nodeletError('NDL_IMAGE_PULL', networkDetail(e), e);
  return nodeletError('NDL_IMAGE_PULL', String(e), e);
}

/** Message text: registry and network causes as they are, catalogued ones with their catalogue text. */
function detailOf(err: NodeletError): string {
  return err.code === 'NDL_IMAGE_PULL' ? err.detail : err.message;
}

/**
 * Longest pull failure message put in a status: 1024 characters, the apiserver's
 * `NoteLengthLimit` that upstream's scheduler also truncates its condition messages to.
 */
const MAX_PULL_MESSAGE_LENGTH = 1024;

/** Wraps any pull failure as `failed to pull image "<image>": <cause>` (reason `ErrImagePull`), at most {@link MAX_PULL_MESSAGE_LENGTH} characters. */
export function pullFailure(image: string, e: unknown): ProviderError {
  if (isProviderError(e)) return e;
  const err = catalogued(e);
  const message = truncateMessage(`failed to pull image "${image}": ${detailOf(err)}`, MAX_PULL_MESSAGE_LENGTH);
  return providerError('ImagePull', message, { reason: 'ErrImagePull', cause: err });
}

/** The kubelet's answer when the image is absent and the policy is Never. */
export function neverPullFailure(image: string): ProviderError {
  const cause = nodeletError('NDL_IMAGE_NEVER_PULL', image);
  return providerError('ImagePull', `Container image "${image}" is not present with pull policy of Never`, { reason: 'ErrImageNeverPull', cause });
}

/** The kubelet's answer for an unparsable image name. */
export function invalidNameFailure(image: string, e: unknown): ProviderError {
  const detail = isNodeletError(e) ? e.message : String(e);
  return providerError('ImagePull', `Failed to apply default image tag "${image}": ${detail}`, { reason: 'InvalidImageName', cause: e });
}
