/**
 * HTTP upgrades on the kubelet API. Node hands a request carrying
 * `Connection: Upgrade` to the server's `upgrade` event, outside fastify; this
 * feeds it back into fastify's routing (as @fastify/websocket does) with a
 * response bound to the raw socket, so authentication, authorization and the
 * routes apply unchanged. A route then either answers normally (a Status; the
 * socket is closed after it) or takes the socket over with {@link acceptSpdy}:
 *
 *   upgrade event ──► fastify routing ──► onRequest (authn/authz) ──► route
 *        route: refuse ──► plain response, socket closed
 *               accept ──► 101 Switching Protocols (SPDY/3.1, X-Stream-Protocol-Version) ──► SpdySession
 *
 * Protocol negotiation follows upstream's `httpstream.Handshake`: the first of
 * the client's `X-Stream-Protocol-Version` offers that the server supports.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@nodelet/plugin-api/v1';
import { SpdySession, type SpdyStream } from './spdy-session.ts';

// Not an ES import: node:http's namespace loads Node's bundled undici (eslint.config.js says why).
const { ServerResponse } = process.getBuiltinModule('node:http');

const UPGRADE = Symbol('nodelet.upgrade');

type Upgradable = IncomingMessage & { [UPGRADE]?: { socket: Duplex; head: Buffer } };

/** Routes upgrade requests of `app` through its normal routing; `sessions` collects the live SPDY sessions (ended on close). */
export function routeUpgrades(app: FastifyInstance, sessions: Set<SpdySession>): void {
  // The HTTP server no longer tracks these sockets (closeAllConnections misses them): close does.
  const sockets = new Set<Duplex>();
  (app.server as Server).on('upgrade', (req: Upgradable, socket: Duplex, head: Buffer) => {
    req[UPGRADE] = { socket, head };
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as never);
    // A refusal: nothing follows the response, so the socket goes once it is written.
    res.on('finish', () => ((socket as Partial<Socket>).destroySoon ? (socket as Socket).destroySoon() : socket.end()));
    socket.on('error', () => socket.destroy());
    app.routing(req, res);
  });
  app.addHook('preClose', async () => {
    for (const s of sessions) s.close();
    for (const s of sockets) s.destroy();
  });
}

/** The client's protocol offers (`X-Stream-Protocol-Version`, repeated or comma-separated). */
export function protocolOffers(req: IncomingMessage): string[] {
  const raw = req.headersDistinct['x-stream-protocol-version'] ?? [];
  return raw
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** True if `req` asks to upgrade to SPDY/3.1 (and came through the upgrade event). */
export function wantsSpdy(req: FastifyRequest): boolean {
  const upgrade = (req.raw as Upgradable)[UPGRADE];
  // As upstream's upgrader: the header contains SPDY/3.1 (clients may repeat it).
  return upgrade !== undefined && /\bspdy\/3\.1\b/i.test(String(req.headers.upgrade ?? ''));
}

/** The protocol to speak: the first client offer the server supports; undefined if none. */
export function negotiate(offers: readonly string[], supported: readonly string[]): string | undefined {
  return offers.find((o) => supported.includes(o));
}

/**
 * Takes the connection over: answers 101 with `protocol`, starts a SPDY
 * session whose new streams go to `onStream`. Call only when {@link wantsSpdy}.
 */
export function acceptSpdy(
  req: FastifyRequest,
  reply: FastifyReply,
  protocol: string,
  sessions: Set<SpdySession>,
  onStream: (s: SpdyStream, session: SpdySession) => void,
  log?: Logger,
): SpdySession {
  const { socket, head } = (req.raw as Upgradable)[UPGRADE]!;
  reply.hijack();
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\n' + 'Connection: Upgrade\r\n' + 'Upgrade: SPDY/3.1\r\n' + `X-Stream-Protocol-Version: ${protocol}\r\n` + '\r\n',
  );
  const session: SpdySession = new SpdySession(socket, (s) => onStream(s, session), log);
  sessions.add(session);
  void session.closed.then(() => sessions.delete(session));
  session.start(head);
  return session;
}
