/** Waiting for a stream that pushed back, without waiting forever. */
import type { Writable } from 'node:stream';

/** Resolves once `s` can take more (`drain`), or has failed or closed — never waits forever. */
export function writable(s: Writable): Promise<void> {
  if (s.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      s.off('drain', done);
      s.off('close', done);
      s.off('error', done);
      resolve();
    };
    s.once('drain', done);
    s.once('close', done);
    s.once('error', done);
  });
}
