/** Free TCP ports on 127.0.0.1 for test peers. */
import { createServer } from 'node:net';

/** Returns a port that was free a moment ago (bind to 0, read, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Ports {@link freeListenPort} handed out in this process (never twice). */
const handedOut = new Set<number>();

/**
 * A free port for a server that binds it later, from 20000–32767: below Linux's default ephemeral
 * range (32768–60999), where {@link freePort}'s ports come from and where another process's outgoing
 * connection can take the port before the server binds it (a fleet of 50 nodelets, each with many
 * connections to the apiserver, lost a node to `EADDRINUSE` so).
 */
export async function freeListenPort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (handedOut.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.unref();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free port in 20000-32767 after 200 tries');
}
