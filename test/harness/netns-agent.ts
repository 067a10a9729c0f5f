/**
 * The test harness's agents (`test-network.ts` starts them): one inside each test network
 * namespace (`ip netns exec <ns> node netns-agent.ts <dir> <host>`) and one in the root
 * namespace (`node netns-agent.ts <dir> --root`). Together they are the only bridge between a
 * namespace and the root namespace, and carry bytes over Unix sockets in `<dir>` (paths, so not
 * bound to a network namespace), never over an IP network. Separate processes, so a test blocked
 * in a synchronous call (`kubectl logs`, whose apiserver dials nodelet through them) blocks
 * nothing.
 *
 *   namespace agent
 *     dial `<dir>/<host>.dial.sock`: a connection's first line is `{"host","port","localAddress"?}`;
 *          the agent connects to it from inside the namespace and answers `ok` or
 *          `error <code> <message>`, then pipes the bytes both ways.
 *     `out <port>`: listens on 127.0.0.1:<port> in the namespace, each connection piped to
 *          `<dir>/out-<port>.sock`.
 *   root agent
 *     `out <port>`: serves `<dir>/out-<port>.sock`, each connection piped to 127.0.0.1:<port>.
 *     `in <port> <host>`: listens on 127.0.0.1:<port>, each connection dialled to 127.0.0.1:<port>
 *          inside `<host>` (its dial socket).
 *
 * Commands come one a line on stdin and are answered `<command line> ok` or `<command line>
 * error <message>` on stdout. An agent prints `ready` once it can take them, and exits when stdin
 * closes (its test is gone).
 */
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const [dir, role] = process.argv.slice(2);
if (!dir || !role) {
  process.stderr.write('usage: netns-agent.ts <socket dir> <host>|--root\n');
  process.exit(2);
}
const root = role === '--root';

/**
 * Pipes two sockets both ways: an end is passed on after the bytes before it (every socket here
 * allows half-open connections, so a client's end never cuts the answer), an error ends the
 * other side at once.
 */
function pipeBoth(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
}

/** Reads the first line of `sock` (at most 1 KiB) and pauses it; what came after the line is put back. */
function firstLine(sock: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const nl = buf.indexOf(0x0a);
      if (nl < 0) {
        if (buf.length > 1024) reject(new Error('header too long'));
        return;
      }
      sock.off('data', onData);
      sock.pause();
      if (nl + 1 < buf.length) sock.unshift(buf.subarray(nl + 1));
      resolve(buf.subarray(0, nl).toString('utf8'));
    };
    sock.on('data', onData);
    sock.once('error', reject);
  });
}

/** Connects to `to` over the dial socket of `host`'s agent (the root agent's `in`). */
async function dialInto(host: string, to: { host: string; port: number }): Promise<Socket> {
  const s = connect({ path: join(dir!, `${host}.dial.sock`), allowHalfOpen: true });
  s.write(`${JSON.stringify(to)}\n`);
  const answer = await firstLine(s);
  if (answer !== 'ok') {
    s.destroy();
    throw new Error(answer);
  }
  return s;
}

/** Listens on `where` (a port on 127.0.0.1 or a socket path); each connection is piped to what `peer` opens. */
function relay(where: number | string, peer: () => Promise<Socket> | Socket): Promise<void> {
  const server = createServer({ allowHalfOpen: true }, (c) => {
    c.pause();
    Promise.resolve()
      .then(peer)
      .then(
        (p) => {
          pipeBoth(c, p);
          c.resume();
        },
        () => c.destroy(),
      );
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    if (typeof where === 'number') server.listen(where, '127.0.0.1', ok);
    else server.listen(where, ok);
  });
}

async function run(line: string): Promise<void> {
  const out = /^out (\d+)$/.exec(line);
  const into = /^in (\d+) ([\w-]+)$/.exec(line);
  if (out && root) {
    const port = Number(out[1]);
    await relay(join(dir!, `out-${port}.sock`), () => connect({ port, host: '127.0.0.1', allowHalfOpen: true }));
  } else if (out) {
    await relay(Number(out[1]), () => connect({ path: join(dir!, `out-${out[1]}.sock`), allowHalfOpen: true }));
  } else if (into && root) {
    const port = Number(into[1]);
    await relay(port, () => dialInto(into[2]!, { host: '127.0.0.1', port }));
  } else {
    throw new Error('unknown command');
  }
}

if (!root) {
  const dial = createServer({ allowHalfOpen: true }, (client) => {
    void firstLine(client).then(
      (header) => {
        let to: { host: string; port: number; localAddress?: string };
        try {
          to = JSON.parse(header) as typeof to;
        } catch {
          client.destroy();
          return;
        }
        const remote = connect({ host: to.host, port: to.port, localAddress: to.localAddress, allowHalfOpen: true });
        let connected = false;
        remote.once('error', (e: NodeJS.ErrnoException) => {
          if (!connected) client.end(`error ${e.code ?? 'EIO'} ${e.message}\n`);
        });
        remote.once('connect', () => {
          connected = true;
          client.write('ok\n');
          pipeBoth(client, remote);
          client.resume();
        });
      },
      () => client.destroy(),
    );
  });
  dial.listen(join(dir, `${role}.dial.sock`), () => process.stdout.write('ready\n'));
} else {
  process.stdout.write('ready\n');
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  run(line.trim()).then(
    () => process.stdout.write(`${line.trim()} ok\n`),
    (e: Error) => process.stdout.write(`${line.trim()} error ${e.message}\n`),
  );
});
lines.on('close', () => process.exit(0));
