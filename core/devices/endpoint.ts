/**
 * One registered device plugin (upstream devicemanager `endpoint.go` and
 * `plugin/v1beta1/client.go`): a gRPC connection to `<dir>/<endpoint>`, its
 * `DevicePluginOptions`, and a `ListAndWatch` stream feeding device lists.
 *
 *     connect: dial (10 s) ─► GetDevicePluginOptions ─► RUNNING
 *     RUNNING ── ListAndWatch response ─► listener.devices(list)
 *     RUNNING ── stream error/end, stop() ─► STOPPED (stopTime = now; listener.stopped)
 *     STOPPED ── now > stopTime + grace ─► EXPIRED (the manager drops the resource)
 *
 * There is no redial: a plugin re-registers itself (kubelet.sock re-created,
 * or its socket in plugins_registry re-created), which makes a new endpoint.
 * An endpoint restored from the checkpoint starts STOPPED (upstream
 * `newStoppedEndpointImpl`).
 */
import type * as grpc from '@grpc/grpc-js';
import { clientOn, deadlineIn, dialUnix, grpcErrorText } from '../../sockets/dial.ts';
import { errorDetail, nodeletError } from '../errors/index.ts';
import {
  KUBELET_PRE_START_CONTAINER_RPC_TIMEOUT_SECS,
  loadDevicePlugin,
  type AllocateResponse__Output,
  type Device__Output,
  type DevicePluginClient,
  type DevicePluginOptions__Output,
  type ListAndWatchResponse__Output,
  type PreferredAllocationResponse__Output,
} from '../../sockets/deviceplugin.ts';

/** Upstream's dial timeout for device plugins. */
export const DIAL_TIMEOUT_MS = 10_000;
/**
 * Deadline for GetDevicePluginOptions, GetPreferredAllocation and Allocate.
 * Upstream sets none; nodelet bounds them so a hung plugin cannot hold a pod
 * in admission forever.
 */
const PLUGIN_CALL_TIMEOUT_MS = 120_000;

/** What an endpoint reports to its manager. */
export interface EndpointListener {
  devices(endpoint: DeviceEndpoint, devices: Device__Output[]): void;
  stopped(endpoint: DeviceEndpoint, reason: string): void;
}

type Unary<Req, Res> = (req: Req, options: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: Res) => void) => unknown;

function call<Req, Res>(fn: Unary<Req, Res>, req: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn(req, { deadline: deadlineIn(timeoutMs) }, (err, res) =>
      err || res === undefined ? reject(nodeletError('NDL_DEVICE_PLUGIN_RPC', grpcErrorText(err), err)) : resolve(res),
    );
  });
}

/** A device plugin endpoint. */
export class DeviceEndpoint {
  private client?: DevicePluginClient;
  private stream?: grpc.ClientReadableStream<ListAndWatchResponse__Output>;
  private _stopTime?: number;

  private constructor(
    readonly resourceName: string,
    readonly socketPath: string,
    readonly options: DevicePluginOptions__Output | undefined,
    client?: DevicePluginClient,
  ) {
    this.client = client;
  }

  /** Dials the plugin and reads its options; rejects with upstream-worded errors. */
  static async connect(resourceName: string, socketPath: string, signal?: AbortSignal, dialTimeoutMs = DIAL_TIMEOUT_MS): Promise<DeviceEndpoint> {
    let channel: grpc.Channel;
    try {
      channel = await dialUnix(socketPath, dialTimeoutMs, signal);
    } catch (e) {
      throw nodeletError('NDL_PLUGIN_DIAL', `failed to dial device plugin: ${errorDetail(e)}`, e);
    }
    const client = clientOn((await loadDevicePlugin()).DevicePlugin, channel);
    try {
      const options = await call(client.GetDevicePluginOptions.bind(client) as Unary<object, DevicePluginOptions__Output>, {}, PLUGIN_CALL_TIMEOUT_MS);
      return new DeviceEndpoint(resourceName, socketPath, options, client);
    } catch (e) {
      client.close();
      throw nodeletError('NDL_DEVICE_PLUGIN_RPC', `failed to get device plugin options: ${errorDetail(e)}`, e);
    }
  }

  /** An endpoint for a resource known from the checkpoint whose plugin has not registered yet. */
  static stopped(resourceName: string, now = Date.now()): DeviceEndpoint {
    const e = new DeviceEndpoint(resourceName, '', undefined);
    e._stopTime = now;
    return e;
  }

  /** Opens the ListAndWatch stream; responses and the stream's end go to `listener`. */
  run(listener: EndpointListener): void {
    const client = this.client;
    if (!client || this.isStopped()) return;
    const stream = client.ListAndWatch({});
    this.stream = stream;
    stream.on('data', (r: ListAndWatchResponse__Output) => {
      if (!this.isStopped()) listener.devices(this, r.devices);
    });
    let ended = false;
    const end = (why: string) => {
      if (ended) return;
      ended = true;
      const wasRunning = !this.isStopped();
      this.stop();
      if (wasRunning) listener.stopped(this, why);
    };
    stream.on('error', (err) => end(`ListAndWatch ended unexpectedly for device plugin ${this.resourceName}: ${grpcErrorText(err)}`));
    stream.on('end', () => end(`ListAndWatch ended for device plugin ${this.resourceName}`));
  }

  /** Cancels the stream and closes the connection; marks the stop time (once). */
  stop(now = Date.now()): void {
    this._stopTime ??= now;
    const stream = this.stream;
    this.stream = undefined;
    stream?.cancel();
    this.client?.close();
    this.client = undefined;
  }

  isStopped(): boolean {
    return this._stopTime !== undefined;
  }

  /** When the endpoint stopped (ms since epoch), if it did. */
  get stopTime(): number | undefined {
    return this._stopTime;
  }

  /** Upstream `stopGracePeriodExpired`. */
  graceExpired(graceMs: number, now = Date.now()): boolean {
    return this._stopTime !== undefined && now - this._stopTime > graceMs;
  }

  private api(): DevicePluginClient {
    if (this.isStopped() || !this.client) throw nodeletError('NDL_DEVICE_PLUGIN_RPC', `endpoint ${this.resourceName} (${this.socketPath}) has been stopped`);
    return this.client;
  }

  /** `GetPreferredAllocation` for one container. */
  async getPreferredAllocation(available: string[], mustInclude: string[], size: number): Promise<PreferredAllocationResponse__Output> {
    const api = this.api();
    const req = { container_requests: [{ available_deviceIDs: available, must_include_deviceIDs: mustInclude, allocation_size: size }] };
    return call(api.GetPreferredAllocation.bind(api) as Unary<typeof req, PreferredAllocationResponse__Output>, req, PLUGIN_CALL_TIMEOUT_MS);
  }

  /** `Allocate` for one container. */
  async allocate(deviceIds: string[]): Promise<AllocateResponse__Output> {
    const api = this.api();
    const req = { container_requests: [{ devices_ids: deviceIds }] };
    return call(api.Allocate.bind(api) as Unary<typeof req, AllocateResponse__Output>, req, PLUGIN_CALL_TIMEOUT_MS);
  }

  /** `PreStartContainer` with upstream's 30 s deadline. */
  async preStartContainer(deviceIds: string[]): Promise<void> {
    const api = this.api();
    const req = { devices_ids: deviceIds };
    await call(api.PreStartContainer.bind(api) as Unary<typeof req, object>, req, KUBELET_PRE_START_CONTAINER_RPC_TIMEOUT_SECS * 1000);
  }
}
