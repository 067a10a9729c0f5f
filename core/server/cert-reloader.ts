/**
 * Reloads the serving certificate and key from disk when they change, as
 * upstream's `dynamiccertificates.NewDynamicServingContentFromFiles` does for
 * the kubelet (feature ReloadKubeletServerCertificateFile): the files'
 * directories are watched (so a symlink swap or an atomic rename is seen) and
 * re-read every minute as well. A pair that cannot be read or does not match
 * is logged and ignored — the server keeps serving the last good one.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from '@nodelet/plugin-api/v1';
import { readPair } from './serving-cert.ts';

/** Options of {@link watchServingCert}. */
export interface CertReloaderOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** The pair now served (PEM), to tell a change from a touch. */
  readonly initial: { cert: string; key: string };
  readonly onChange: (pair: { cert: string; key: string }) => void;
  readonly log: Logger;
  /** Re-read interval; default 60 s (upstream's FileRefreshDuration is one minute). */
  readonly pollMs?: number;
}

/** Starts watching; returns a stop function. */
export function watchServingCert(o: CertReloaderOptions): () => void {
  let last = o.initial;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const reload = async () => {
    if (stopped) return;
    try {
      const next = await readPair(o.certFile, o.keyFile);
      if (next.cert === last.cert && next.key === last.key) return;
      last = next;
      o.onChange(next);
      o.log.info({ certFile: o.certFile, keyFile: o.keyFile }, 'serving certificate reloaded from disk');
    } catch (e) {
      o.log.warn({ err: (e as Error).message }, 'serving certificate changed on disk but cannot be used; keeping the current one');
    }
  };
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void reload(), 200);
  };
  const names = new Set([path.basename(o.certFile), path.basename(o.keyFile)]);
  const watchers: FSWatcher[] = [];
  for (const dir of new Set([path.dirname(o.certFile), path.dirname(o.keyFile)])) {
    try {
      const w = watch(dir, (_event, file) => {
        if (!file || names.has(file.toString())) soon();
      });
      w.on('error', () => undefined);
      watchers.push(w);
    } catch (e) {
      o.log.warn({ dir, err: (e as Error).message }, 'cannot watch the serving certificate directory; re-reading it every minute');
    }
  }
  const poll = setInterval(() => void reload(), o.pollMs ?? 60_000);
  poll.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
    clearInterval(poll);
    for (const w of watchers) w.close();
  };
}
