/** A small in-process DevicePlugin server on a unix socket, for unit tests. */
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { unixTarget, clientOn, dialUnix } from '../../../sockets/dial.ts';
import { loadDevicePlugin, type ContainerAllocateResponse__Output } from '../../../sockets/deviceplugin.ts';

export interface FakeDevice {
  ID: string;
  health: 'Healthy' | 'Unhealthy';
  numa?: number;
}

export interface FakePluginOptions {
  devices: FakeDevice[];
  preStartRequired?: boolean;
  preferred?: (available: string[], size: number) => string[];
  allocate?: (ids: string[]) => Partial<ContainerAllocateResponse__Output>;
  failAllocate?: string;
}

/** Calls made to the fake. */
export interface FakeCalls {
  allocate: string[][];
  preferred: Array<{ available: string[]; mustInclude: string[]; size: number }>;
  preStart: string[][];
  listAndWatch: number;
}

export class FakeDevicePlugin {
  readonly calls: FakeCalls = { allocate: [], preferred: [], preStart: [], listAndWatch: 0 };
  private readonly streams = new Set<grpc.ServerWritableStream<object, object>>();
  private server?: grpc.Server;

  constructor(
    readonly socketPath: string,
    readonly o: FakePluginOptions,
  ) {}

  wire(d: FakeDevice) {
    return { ID: d.ID, health: d.health, topology: d.numa === undefined ? null : { nodes: [{ ID: d.numa }] } };
  }

  async start(): Promise<void> {
    const server = new grpc.Server();
    server.addService((await loadDevicePlugin()).DevicePlugin.service, {
      GetDevicePluginOptions: (_c: unknown, cb: grpc.sendUnaryData<object>) =>
        cb(null, { pre_start_required: !!this.o.preStartRequired, get_preferred_allocation_available: !!this.o.preferred }),
      ListAndWatch: (call: grpc.ServerWritableStream<object, object>) => {
        this.calls.listAndWatch++;
        this.streams.add(call);
        call.on('cancelled', () => this.streams.delete(call));
        call.write({ devices: this.o.devices.map((d) => this.wire(d)) });
      },
      GetPreferredAllocation: (
        call: grpc.ServerUnaryCall<
          { container_requests: Array<{ available_deviceIDs: string[]; must_include_deviceIDs: string[]; allocation_size: number }> },
          object
        >,
        cb: grpc.sendUnaryData<object>,
      ) => {
        const r = call.request.container_requests[0]!;
        this.calls.preferred.push({ available: r.available_deviceIDs, mustInclude: r.must_include_deviceIDs, size: r.allocation_size });
        cb(null, { container_responses: [{ deviceIDs: this.o.preferred!(r.available_deviceIDs, r.allocation_size) }] });
      },
      Allocate: (call: grpc.ServerUnaryCall<{ container_requests: Array<{ devices_ids: string[] }> }, object>, cb: grpc.sendUnaryData<object>) => {
        const ids = call.request.container_requests[0]!.devices_ids;
        this.calls.allocate.push(ids);
        if (this.o.failAllocate) return cb({ code: grpc.status.INTERNAL, details: this.o.failAllocate });
        const resp = this.o.allocate?.(ids) ?? {
          envs: { DEVICES: ids.join(',') },
          mounts: ids.map((id) => ({ container_path: `/dev-${id}`, host_path: `/tmp/${id}`, read_only: true })),
        };
        cb(null, { container_responses: [resp] });
      },
      PreStartContainer: (call: grpc.ServerUnaryCall<{ devices_ids: string[] }, object>, cb: grpc.sendUnaryData<object>) => {
        this.calls.preStart.push(call.request.devices_ids);
        cb(null, {});
      },
    });
    await new Promise<void>((res, rej) => server.bindAsync(unixTarget(this.socketPath), grpc.ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())));
    this.server = server;
  }

  /** Sends a new device list on every open stream. */
  update(devices: FakeDevice[]): void {
    this.o.devices = devices;
    for (const s of this.streams) s.write({ devices: devices.map((d) => this.wire(d)) });
  }

  /** Ends the ListAndWatch streams and stops serving. */
  stop(): void {
    for (const s of this.streams) s.end();
    this.streams.clear();
    this.server?.forceShutdown();
    this.server = undefined;
  }
}

/** Calls Register on a kubelet.sock the way a plugin does; resolves with the error text, or '' on success. */
export async function registerWithKubelet(kubeletSock: string, req: { version?: string; endpoint: string; resource_name: string }): Promise<string> {
  const channel = await dialUnix(kubeletSock, 5000);
  const client = clientOn((await loadDevicePlugin()).Registration, channel);
  try {
    return await new Promise<string>((resolve) => client.Register({ version: 'v1beta1', ...req, options: {} }, (err) => resolve(err ? err.details : '')));
  } finally {
    client.close();
  }
}

export const sockIn = (dir: string, name: string) => join(dir, name);
