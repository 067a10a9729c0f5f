/**
 * Bounds on what a registry can make nodelet hold or wait for:
 *
 *   - bodies read into memory are capped as they stream (a chunked body has no
 *     Content-Length to check up front): manifests and indexes at 4 MiB (upstream
 *     containerd's `MaxManifestSize`), token responses at 1 MiB (a JWT is a few KB),
 *     error bodies at 64000 bytes (containerd's `NewUnexpectedStatusErr` limit) —
 *     an error body is truncated, never refused;
 *   - a body that makes no progress for the no-progress timeout fails (containerd
 *     gives up on a pull after 5 minutes without progress).
 */
import { nodeletError } from '../errors/index.ts';

/** Largest manifest or index nodelet reads (containerd: 4 MiB). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** Largest token endpoint answer nodelet reads. */
export const MAX_TOKEN_BYTES = 1024 * 1024;
/** How much of an error body nodelet reads (containerd reads 64000 bytes). */
export const MAX_ERROR_BODY_BYTES = 64_000;
/** containerd's image pull progress timeout: 5 minutes without a byte fails the pull. */
export const DEFAULT_NO_PROGRESS_TIMEOUT_MS = 5 * 60_000;

/** Reads at most `max` bytes of `body`; with `truncate` the rest is dropped, else a longer body fails with `NDL_IMAGE_FORMAT`. */
export async function readCapped(body: ReadableStream<Uint8Array> | null, max: number, what: string, truncate = false): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const reader = body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.length > max) {
        if (truncate) chunks.push(Buffer.from(value.subarray(0, max - size)));
        await reader.cancel().catch(() => undefined);
        if (truncate) return Buffer.concat(chunks);
        throw nodeletError('NDL_IMAGE_FORMAT', `${what} exceeds ${max} bytes`);
      }
      size += value.length;
      chunks.push(Buffer.from(value));
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks);
}

/**
 * Wraps `body` so that a read waiting longer than `ms` for the next chunk fails
 * with `no progress ... for Ns` (the source is cancelled). Time spent by the
 * consumer between reads does not count.
 */
function progressGuard(body: ReadableStream<Uint8Array>, ms: number, what: string, onStall?: (e: Error) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(nodeletError('NDL_IMAGE_PULL', `no progress reading ${what} for ${ms / 1000}s`)), ms);
      });
      try {
        const r = await Promise.race([reader.read(), stalled]);
        if (r.done) controller.close();
        else controller.enqueue(r.value);
      } catch (e) {
        controller.error(e);
        reader.cancel(e).catch(() => undefined);
        onStall?.(e as Error);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

/** `res` with its body under {@link progressGuard}. */
export function guardResponse(res: Response, ms: number, what: string, onStall?: (e: Error) => void): Response {
  if (!res.body || NULL_BODY_STATUS.has(res.status)) return res;
  return new Response(progressGuard(res.body, ms, what, onStall), { status: res.status, statusText: res.statusText, headers: res.headers });
}
