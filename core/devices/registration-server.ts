/**
 * The `v1beta1.Registration` gRPC server on `<root>/device-plugins/kubelet.sock`
 * (upstream devicemanager `plugin/v1beta1/server.go`). At start it removes
 * every socket left in the directory (as upstream `CleanupPluginDirectory`,
 * the checkpoint and other files stay) and listens afresh; plugins that
 * watch the directory see kubelet.sock re-created and register again.
 *
 * Register: version must be `v1beta1`, the resource name an extended resource
 * name, the endpoint a socket inside the directory; then the device manager
 * dials `<dir>/<endpoint>` before the call returns (a failure is returned to
 * the plugin). A second registration of a resource replaces the first.
 */
import { lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '@nodelet/plugin-api/v1';
import { loadDevicePlugin, SUPPORTED_VERSIONS, type RegisterRequest__Output } from '../../sockets/deviceplugin.ts';
import { listenGrpcLazily, type LazyGrpcServer } from '../../sockets/lazy-server.ts';
import { isWithin } from '../paths/index.ts';
import type { DeviceManager } from './device-manager.ts';
import { isExtendedResourceName } from './resource-name.ts';
import { isNodeletError, nodeletError } from '../errors/index.ts';

/** The socket's file name (upstream `KubeletSocket`'s base name). */
const KUBELET_SOCKET_NAME = 'kubelet.sock';

/** Upstream `isVersionCompatibleWithPlugin`. */
export function isSupportedVersion(...versions: readonly string[]): boolean {
  return versions.some((v) => SUPPORTED_VERSIONS.includes(v));
}

/** Go's `%q` of a string slice, for upstream's messages. */
function goQuoteList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

/** Checks a RegisterRequest; returns upstream's error text, or undefined when it is acceptable. */
function validateRegisterRequest(dir: string, r: Pick<RegisterRequest__Output, 'version' | 'resource_name' | 'endpoint'>): string | undefined {
  if (!isSupportedVersion(r.version)) {
    return `requested API version ${JSON.stringify(r.version)} is not supported by kubelet. Supported version is ${goQuoteList(SUPPORTED_VERSIONS)}`;
  }
  if (!isExtendedResourceName(r.resource_name)) return `the ResourceName ${JSON.stringify(r.resource_name)} is invalid`;
  const path = join(dir, r.endpoint);
  if (r.endpoint === '' || !isWithin(dir, path) || path === join(dir, KUBELET_SOCKET_NAME)) {
    return `the endpoint ${JSON.stringify(r.endpoint)} must name a socket inside ${dir}`;
  }
  return undefined;
}

/** Removes every unix socket directly in `dir` (not files, not directories). */
function removeSockets(dir: string, log: Logger): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    try {
      if (lstatSync(p).isSocket()) rmSync(p, { force: true });
    } catch (e) {
      log.warn({ path: p, err: String(e) }, 'Failed to remove file');
    }
  }
}

/** The running Registration server. */
export class RegistrationServer {
  private server?: LazyGrpcServer;

  constructor(
    private readonly dir: string,
    private readonly manager: DeviceManager,
    private readonly log: Logger,
  ) {}

  /** The socket path. */
  get socketPath(): string {
    return join(this.dir, KUBELET_SOCKET_NAME);
  }

  /** Cleans the directory of sockets and listens on kubelet.sock (gRPC loads on the first connection: sockets/lazy-server.ts). */
  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o750 });
    removeSockets(this.dir, this.log);
    this.server = await listenGrpcLazily(
      this.socketPath,
      async (server, grpc) => {
        server.addService((await loadDevicePlugin()).Registration.service, {
          Register: (call: grpc.ServerUnaryCall<RegisterRequest__Output, object>, cb: grpc.sendUnaryData<object>) => {
            this.register(call.request).then(
              () => cb(null, {}),
              (e: Error) => cb({ code: grpc.status.UNKNOWN, details: isNodeletError(e) ? e.detail : e.message }),
            );
          },
        });
      },
      this.log,
    );
    this.log.info({ socket: this.socketPath }, 'Starting device plugin registration server');
  }

  private async register(r: RegisterRequest__Output): Promise<void> {
    this.log.info({ resourceName: r.resource_name, endpoint: r.endpoint, version: r.version }, 'Got registration request from device plugin with resource');
    const bad = validateRegisterRequest(this.dir, r);
    if (bad) {
      this.log.error({ resourceName: r.resource_name, err: bad }, 'Bad registration request from device plugin');
      throw nodeletError('NDL_PLUGIN_VALIDATION', bad);
    }
    try {
      await this.manager.registerEndpoint(r.resource_name, join(this.dir, r.endpoint));
    } catch (e) {
      this.log.error({ resourceName: r.resource_name, err: (e as Error).message }, 'Error connecting to device plugin client');
      throw e;
    }
  }

  /** Stops listening (in-flight calls are cancelled) and removes the socket. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.stop();
    rmSync(this.socketPath, { force: true });
  }
}
