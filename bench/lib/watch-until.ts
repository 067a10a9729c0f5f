/** A watch that resolves with the receive time of the first event whose object satisfies a predicate. */
import * as k8s from '@kubernetes/client-node';

/** An open watch (see {@link watchUntil}). */
export interface Until {
  /** Epoch ms at which the first matching event (ADDED/MODIFIED) was received. */
  readonly at: Promise<number>;
  stop(): void;
}

/** Opens a watch on `path` and resolves once it is established; `at` rejects after `timeoutMs`. */
export async function watchUntil<T>(
  kc: k8s.KubeConfig,
  path: string,
  fieldSelector: string | undefined,
  ok: (o: T) => boolean,
  timeoutMs: number,
): Promise<Until> {
  let resolveAt!: (t: number) => void;
  let rejectAt!: (e: Error) => void;
  const at = new Promise<number>((res, rej) => {
    resolveAt = res;
    rejectAt = rej;
  });
  at.catch(() => undefined);
  const timer = setTimeout(() => rejectAt(new Error(`timed out after ${timeoutMs} ms watching ${path}`)), timeoutMs);
  const req = (await new k8s.Watch(kc).watch(
    path,
    fieldSelector ? { fieldSelector } : {},
    (type, obj: T) => {
      if (type !== 'DELETED' && ok(obj)) resolveAt(Date.now());
    },
    () => undefined,
  )) as { abort(): void };
  return {
    at,
    stop: () => {
      clearTimeout(timer);
      req.abort();
    },
  };
}
