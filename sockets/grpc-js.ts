/**
 * @grpc/grpc-js, required on first use rather than imported when a module loads.
 *
 * grpc-js is 0.7 MB of source, which an idle node never runs: it dials plugins only
 * once one registers, and its own gRPC servers (device-plugin registration,
 * podresources) load it on their first connection (lazy-server.ts). The modules that
 * are loaded at start (dial.ts, load.ts, the servers' handlers) import grpc-js's types
 * only and call this when they need a value. grpc-js is a CommonJS package, so a
 * synchronous require works where the callers are synchronous (clientOn, loadProto).
 */
import { createRequire } from 'node:module';
import type * as Grpc from '@grpc/grpc-js';

const require = createRequire(import.meta.url);

/** The @grpc/grpc-js module (loaded by the first call). */
export function grpcJs(): typeof Grpc {
  return require('@grpc/grpc-js') as typeof Grpc;
}
