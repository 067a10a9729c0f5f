// A tiny CSI Node service on a unix socket for unit tests: records every call,
// answers from settable state, and "publishes" by creating the target dir
// (no real mounts).
import { mkdir, rm } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { loadCsi, type NodeHandlers } from '../../../sockets/csi.ts';
import { unixTarget } from '../../../sockets/dial.ts';

export interface FakeCall {
  method: string;
  request: Record<string, unknown>;
}

export interface FakeCsiNode {
  readonly socketPath: string;
  readonly calls: FakeCall[];
  nodeID: string;
  maxVolumes: number;
  topology: Record<string, string>;
  capabilities: string[];
  /** method → gRPC error to answer with (once set, every call of that method fails). */
  failures: Map<string, { code: grpc.status; details: string }>;
  callsOf(method: string): Record<string, unknown>[];
  stop(): Promise<void>;
}

export async function startFakeCsiNode(socketPath: string): Promise<FakeCsiNode> {
  const server = new grpc.Server();
  const fake: FakeCsiNode = {
    socketPath,
    calls: [],
    nodeID: 'fake-node-id',
    maxVolumes: 0,
    topology: {},
    capabilities: ['STAGE_UNSTAGE_VOLUME'],
    failures: new Map(),
    callsOf: (m) => fake.calls.filter((c) => c.method === m).map((c) => c.request),
    async stop() {
      await new Promise<void>((done) => server.tryShutdown(() => done()));
      await rm(socketPath, { force: true });
    },
  };
  const unary =
    <Req, Res>(method: string, answer: (req: Req) => Promise<Res> | Res): grpc.handleUnaryCall<Req, Res> =>
    (call, callback) => {
      fake.calls.push({ method, request: call.request as Record<string, unknown> });
      const failure = fake.failures.get(method);
      if (failure) return callback({ code: failure.code, details: failure.details } as grpc.ServiceError, null);
      Promise.resolve(answer(call.request)).then(
        (res) => callback(null, res),
        (e: Error) => callback({ code: grpc.status.INTERNAL, details: e.message } as grpc.ServiceError, null),
      );
    };
  const handlers: NodeHandlers = {
    NodeGetInfo: unary('NodeGetInfo', () => ({
      node_id: fake.nodeID,
      max_volumes_per_node: fake.maxVolumes,
      accessible_topology: Object.keys(fake.topology).length > 0 ? { segments: fake.topology } : null,
    })),
    NodeGetCapabilities: unary('NodeGetCapabilities', () => ({ capabilities: fake.capabilities.map((type) => ({ rpc: { type: type as never } })) })),
    NodeStageVolume: unary('NodeStageVolume', () => ({})),
    NodeUnstageVolume: unary('NodeUnstageVolume', () => ({})),
    NodePublishVolume: unary('NodePublishVolume', async (req: { target_path: string }) => {
      await mkdir(req.target_path, { recursive: true });
      return {};
    }),
    NodeUnpublishVolume: unary('NodeUnpublishVolume', async (req: { target_path: string }) => {
      await rm(req.target_path, { recursive: true, force: true });
      return {};
    }),
    NodeGetVolumeStats: unary('NodeGetVolumeStats', () => ({ usage: [] })),
    NodeExpandVolume: unary('NodeExpandVolume', () => ({})),
  };
  server.addService(loadCsi().Node.service, handlers);
  await new Promise<void>((done, fail) =>
    server.bindAsync(unixTarget(socketPath), grpc.ServerCredentials.createInsecure(), (err) => (err ? fail(err) : done())),
  );
  return fake;
}
