/**
 * A gRPC server on a unix socket that listens at once but loads gRPC on its first
 * connection.
 *
 * The kubelet's own gRPC servers (device-plugin registration on
 * device-plugins/kubelet.sock, podresources on pod-resources/kubelet.sock) must listen
 * from the start, but most nodes never get a call on them. Here a plain `net` server
 * holds the socket; the first connection loads @grpc/grpc-js and the service code
 * (`build`), and every connection is then handed to one grpc-js server through its
 * connection injector (`Server.createConnectionInjector`), which serves it exactly as
 * a server bound with `bindAsync` would. Bytes a client sends before that (its HTTP/2
 * preface) wait in the socket and are read by the HTTP/2 session it is handed to.
 */
import { createServer, type Socket } from 'node:net';
import type * as Grpc from '@grpc/grpc-js';
import type { Logger } from '@nodelet/plugin-api/v1';
import { grpcJs } from './grpc-js.ts';

/** A listening {@link listenGrpcLazily} server. */
export interface LazyGrpcServer {
  /** Stops listening and ends every connection (in-flight calls are cancelled), as grpc-js's `forceShutdown`. */
  stop(): void;
}

/**
 * Listens on `socketPath` (which must not exist); on the first connection, makes a grpc-js
 * server, lets `build` add its services (loading their code), then serves every connection
 * on it. A failing `build` is logged and ends that connection; the next one tries again.
 */
export async function listenGrpcLazily(
  socketPath: string,
  build: (server: Grpc.Server, grpc: typeof Grpc) => Promise<void>,
  log: Logger,
): Promise<LazyGrpcServer> {
  let server: Grpc.Server | undefined;
  let injector: Promise<Grpc.ConnectionInjector> | undefined;
  let stopped = false;
  const waiting = new Set<Socket>();
  const load = async (): Promise<Grpc.ConnectionInjector> => {
    const grpc = grpcJs();
    const s = new grpc.Server();
    await build(s, grpc);
    server = s;
    if (stopped) s.forceShutdown();
    return s.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  };
  const listener = createServer((socket) => {
    waiting.add(socket);
    injector ??= load();
    injector.then(
      (inject) => {
        if (!waiting.delete(socket)) return; // ended while gRPC loaded
        inject.injectConnection(socket);
      },
      (e: unknown) => {
        injector = undefined;
        waiting.delete(socket);
        socket.destroy();
        log.error({ socket: socketPath, err: String(e) }, 'Failed to start the gRPC server of a connection');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(socketPath, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  listener.on('error', (e) => log.warn({ socket: socketPath, err: String(e) }, 'gRPC socket error'));
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      listener.close();
      for (const s of waiting) s.destroy();
      waiting.clear();
      server?.forceShutdown();
    },
  };
}
