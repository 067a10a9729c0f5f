/**
 * The gRPC check (upstream pkg/probe/grpc): `grpc.health.v1.Health/Check`
 * over an insecure channel, connected and answered within the timeout;
 * `SERVING` is a success, anything else a failure with upstream's text.
 *
 * Hand-written codec, on purpose: the two messages have one field each
 * (`HealthCheckRequest.service` string #1, `HealthCheckResponse.status` enum
 * #1), so a dozen lines replace a .proto file and a loader at run time.
 * @grpc/grpc-js does the transport. A channel per check (closed after it):
 * gRPC probes are rare next to HTTP ones and a channel is cheap to open.
 * grpc-js loads with the first gRPC check (sockets/grpc-js.ts).
 */
import type { ServiceError } from '@grpc/grpc-js';
import { grpcJs } from '../../sockets/grpc-js.ts';
import type { CheckOutcome } from './probe-types.ts';

const STATUS_NAMES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

/** Encodes a `HealthCheckRequest` (field 1: service). */
export function encodeHealthRequest(service: string): Buffer {
  const s = Buffer.from(service, 'utf8');
  if (s.length === 0) return Buffer.alloc(0);
  const len: number[] = [];
  let n = s.length;
  while (n > 0x7f) {
    len.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  len.push(n);
  return Buffer.concat([Buffer.from([0x0a, ...len]), s]);
}

/** Decodes a `HealthCheckResponse`'s status (field 1, varint; other fields skipped). */
export function decodeHealthStatus(b: Buffer): number {
  let i = 0;
  const varint = () => {
    let v = 0,
      shift = 0;
    while (i < b.length) {
      const x = b[i++]!;
      v += (x & 0x7f) * 2 ** shift;
      if (!(x & 0x80)) break;
      shift += 7;
    }
    return v;
  };
  let st = 0;
  while (i < b.length) {
    const tag = varint();
    const wire = tag & 7;
    if (tag >>> 3 === 1 && wire === 0) st = varint();
    else if (wire === 0) varint();
    else if (wire === 2) i += varint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else break;
  }
  return st;
}

/** Runs one health check of `service` at `host:port` within `timeoutMs`. */
export function grpcCheck(host: string, port: number, service: string, timeoutMs: number): Promise<CheckOutcome> {
  const addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const secs = `${timeoutMs / 1000}s`;
  const { Client, credentials, Metadata, status: Status } = grpcJs();
  const client = new Client(addr, credentials.createInsecure());
  const deadline = Date.now() + timeoutMs;
  return new Promise<CheckOutcome>((resolve) => {
    client.waitForReady(deadline, (err) => {
      if (err) return resolve({ result: 'failure', output: `timeout: failed to connect service "${addr}" within ${secs}: ${err.message}` });
      client.makeUnaryRequest(
        '/grpc.health.v1.Health/Check',
        (s: string) => encodeHealthRequest(s),
        (b: Buffer) => decodeHealthStatus(b),
        service,
        new Metadata(),
        { deadline },
        (e: ServiceError | null, st?: number) => {
          if (e) {
            if (e.code === Status.UNIMPLEMENTED)
              return resolve({ result: 'failure', output: `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${e.details}` });
            if (e.code === Status.DEADLINE_EXCEEDED) return resolve({ result: 'failure', output: `timeout: health rpc did not complete within ${secs}` });
            return resolve({ result: 'failure', output: `error: health rpc probe failed: ${e.message}` });
          }
          if (st !== 1) return resolve({ result: 'failure', output: `service unhealthy (responded with "${STATUS_NAMES[st ?? 0] ?? String(st)}")` });
          resolve({ result: 'success', output: 'service is serving' });
        },
      );
    });
  }).finally(() => client.close());
}
