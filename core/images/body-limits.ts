/**
 * Bounds on what a registry can make nodelet hold or wait for:
 *
 *   - bodies read into memory are capped as they stream (a chunked body has no
 *     Content-Length to check up front): manifests and indexes at 4 MiB (upstream
 *     containerd's `MaxManifestSize`), token responses at 1 MiB (a JWT is a few KB),
 *     error bodies at 64000 bytes (containerd's `NewUnexpectedStatusErr` limit) —
 *     an error body is truncated, never refused;
 *   - a body that makes no progress for the no-progress timeout fails (containerd
 *     gives up on a pull after 5 minutes without progress); registry-transport.ts
 *     gives the timeout to undici.
 */
import type { Readable } from 'node:stream';
import { nodeletError } from '../errors/index.ts';

/** Largest manifest or index nodelet reads (containerd: 4 MiB). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** Largest token endpoint answer nodelet reads. */
export const MAX_TOKEN_BYTES = 1024 * 1024;
/** How much of an error body nodelet reads (containerd reads 64000 bytes). */
export const MAX_ERROR_BODY_BYTES = 64_000;
/** containerd's image pull progress timeout: 5 minutes without a byte fails the pull. */
export const DEFAULT_NO_PROGRESS_TIMEOUT_MS = 5 * 60_000;

/** Reads at most `max` bytes of `body`; with `truncate` the rest is dropped, else a longer body fails with `NDL_IMAGE_FORMAT`. Leaving the loop early destroys the body. */
export async function readCapped(body: Readable, max: number, what: string, truncate = false): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    const chunk = c as Buffer;
    if (size + chunk.length > max) {
      if (!truncate) throw nodeletError('NDL_IMAGE_FORMAT', `${what} exceeds ${max} bytes`);
      chunks.push(chunk.subarray(0, max - size));
      return Buffer.concat(chunks);
    }
    size += chunk.length;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Ends a body nodelet will not read; its connection is closed rather than reused. */
export function dropBody(body: Readable): void {
  body.on('error', () => undefined).destroy();
}

/** Reads and drops an answer's body that nodelet does not need (a 401 before its retry, an upload's), at most {@link MAX_ERROR_BODY_BYTES} of it. */
export async function discardBody(body: Readable): Promise<void> {
  await readCapped(body, MAX_ERROR_BODY_BYTES, 'body', true);
}
