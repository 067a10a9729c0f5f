/**
 * The TCP check of probes (and of the deprecated `tcpSocket` hook; see
 * lifecycle-hooks.ts): a connection to host:port opened within the timeout
 * is a success and is closed at once (upstream pkg/probe/tcp).
 */
import { connect } from 'node:net';
import type { CheckOutcome } from './probe-types.ts';
import { dialError } from './http-check.ts';

/** Opens and closes one TCP connection to `host:port` within `timeoutMs`. */
export function tcpCheck(host: string, port: number, timeoutMs: number): Promise<CheckOutcome> {
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ result: 'failure', output: `dial tcp ${hostPort}: i/o timeout` });
    }, timeoutMs);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ result: 'success', output: '' });
    });
    sock.once('error', (e) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ result: 'failure', output: dialError(e, hostPort) });
    });
  });
}
