// The TCP listeners of a container's pre-opened sockets (wasi-sockets.mjs serves
// the module's calls on them), opened by the worker before the module starts.
// Plain JavaScript: workers start without a TypeScript loader (see README.md);
// typed with JSDoc. node:net is loaded only by workers that listen (a worker's heap is small).

/** A listener that cannot be opened (thrown by {@link listenAll}). */
export class ListenError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'ListenError';
  }
}

/**
 * A pre-opened listener: its server, the connections it took that the module has
 * not accepted yet, and who to tell when one arrives (wasi-sockets.mjs).
 * @typedef {{ server: import('node:net').Server, pending: import('node:net').Socket[], host: string, port: number, onChange?: () => void }} Listener
 */

/**
 * Opens one TCP listener per `{ host, port }`, in order. Rejects with
 * {@link ListenError} (and closes those already open) when one cannot be
 * opened, e.g. the port is already taken on that address.
 * @param {ReadonlyArray<{ readonly host: string, readonly port: number }>} addrs
 * @param {number} [maxConnections] per listener: connections beyond (pending or accepted) are
 *   closed at once (node:net's server.maxConnections), so a flood cannot take nodelet's descriptors
 * @returns {Promise<Listener[]>}
 */
export async function listenAll(addrs, maxConnections) {
  const net = await import('node:net'); // loaded only by workers that listen (a worker's heap is small)
  /** @type {Listener[]} */
  const out = [];
  try {
    for (const { host, port } of addrs) {
      /** @type {Listener} */
      const l = { server: net.createServer({ allowHalfOpen: true, pauseOnConnect: true }), pending: [], host, port };
      if (maxConnections !== undefined && Number.isFinite(maxConnections)) l.server.maxConnections = maxConnections;
      l.server.on('connection', (s) => {
        s.on('error', () => {}); // until accepted: a reset while pending is not worth a crash
        l.pending.push(s);
        l.onChange?.();
      });
      await /** @type {Promise<void>} */ (
        new Promise((resolve, reject) => {
          l.server.once('error', reject);
          l.server.listen({ host, port, exclusive: true }, () => {
            l.server.off('error', reject);
            resolve();
          });
        })
      );
      l.server.on('error', () => {});
      out.push(l);
    }
  } catch (e) {
    for (const l of out) l.server.close();
    const addr = addrs[out.length];
    const err = /** @type {{ code?: string, message?: string } | undefined} */ (e);
    const why =
      err?.code === 'EADDRINUSE'
        ? 'the address is already in use'
        : err?.code === 'EADDRNOTAVAIL'
          ? 'the address is not on this node'
          : (err?.message ?? String(e));
    throw new ListenError(`cannot listen on ${addr.host}:${addr.port} (containerPort ${addr.port}): ${why}`);
  }
  return out;
}
