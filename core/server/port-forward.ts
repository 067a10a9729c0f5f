/**
 * `/portForward/{namespace}/{pod}` over SPDY (`portforward.k8s.io`), as
 * upstream's kubelet serves it (k8s.io/cri-streaming portforward/httpstream.go):
 * per forwarded connection the client opens two streams with the same
 * `requestID` — `streamType: error` and `streamType: data` — and a `port`.
 * Once both are there, nodelet dials the pod at `host:port` (the pod's IP, or
 * 127.0.0.1 for hostNetwork pods and pods without one) and copies bytes both
 * ways; a failure is written as text on the error stream and both streams are
 * reset.
 *
 *   data+error streams (same requestID) ──► dial host:port ──ok──► copy both ways ──both ends closed──► close error stream
 *        │ missing partner after 30 s                  └─fail──► "error forwarding port …" on error, reset both
 *        └──► "timed out waiting for streams" on the error stream
 */
import net from 'node:net';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { SpdyStream } from './spdy-session.ts';
import { CATALOGUE } from '../errors/index.ts';
import { RstStatus } from './spdy-frames.ts';

/** The only port-forward subprotocol (upstream `portforward.k8s.io`). */
export const PORT_FORWARD_PROTOCOLS = ['portforward.k8s.io'] as const;

/** Upstream's stream creation timeout. */
const STREAM_CREATION_TIMEOUT_MS = 30_000;

/** Where to forward and what to name in errors. */
export interface PortForwardTarget {
  /** The address the pod listens on. */
  readonly host: string;
  readonly podName: string;
  readonly podUid: string;
  readonly log?: Logger;
}

interface Pair {
  data?: SpdyStream;
  error?: SpdyStream;
  timer: NodeJS.Timeout;
}

/** Handles the streams of one port-forward session: returns the per-stream callback. */
export function portForwardStreams(t: PortForwardTarget): (s: SpdyStream) => void {
  const pairs = new Map<string, Pair>();
  return (s) => {
    const type = s.headers['streamtype'];
    const portText = s.headers['port'] ?? '';
    const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
    if (!(port >= 1 && port <= 65535) || (type !== 'data' && type !== 'error')) {
      s.reset(RstStatus.PROTOCOL_ERROR);
      return;
    }
    s.reply();
    const requestId = s.headers['requestid'] ?? String(type === 'error' ? s.id : s.id - 2);
    let p = pairs.get(requestId);
    if (!p) {
      const pair: Pair = {
        timer: setTimeout(() => {
          pairs.delete(requestId);
          pair.error?.end(`timed out waiting for streams of request ${requestId}`);
          pair.data?.reset();
        }, STREAM_CREATION_TIMEOUT_MS),
      };
      pair.timer.unref();
      pairs.set(requestId, pair);
      p = pair;
    }
    if (p[type]) {
      s.end(`error processing stream for request ${requestId}: ${type} stream already assigned`);
      return;
    }
    p[type] = s;
    if (p.data && p.error) {
      clearTimeout(p.timer);
      pairs.delete(requestId);
      forward(t, port, p.data, p.error);
    }
  };
}

function forward(t: PortForwardTarget, port: number, data: SpdyStream, error: SpdyStream): void {
  error.resume(); // the client half-closes it at once; nothing to read
  const sock = net.connect({ host: t.host, port });
  let failed = false;
  const fail = (e: Error) => {
    if (failed) return;
    failed = true;
    const msg = `${CATALOGUE.NDL_API_PORT_FORWARD} ${port} to pod ${t.podName}, uid ${t.podUid}: ${e.message}`;
    t.log?.debug({ port, pod: t.podName }, msg);
    error.end(msg, () => error.reset());
    data.reset();
    sock.destroy();
  };
  sock.on('error', fail);
  sock.on('connect', () => {
    data.pipe(sock);
    sock.pipe(data);
  });
  data.on('close', () => {
    if (!sock.destroyed) sock.destroy();
  });
  sock.on('close', () => {
    if (failed) return;
    // Ends our side of the data stream (pipe does it on a clean end) and the error stream.
    if (!data.writableEnded) data.end();
    error.end();
  });
}
