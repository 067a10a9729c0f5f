// A tiny plugin for unit tests: serves pluginregistration v1 `Registration`
// on a unix socket and records what the kubelet side tells it.
import { rm } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { unixTarget } from '../../../sockets/dial.ts';
import { loadPluginRegistration, type RegistrationHandlers, type RegistrationStatus__Output } from '../../../sockets/pluginregistration.ts';

export interface FakePluginInfo {
  type: string;
  name: string;
  endpoint?: string;
  versions: string[];
}

export interface FakeRegistrationServer {
  readonly socketPath: string;
  /** Every NotifyRegistrationStatus received, in order. */
  readonly statuses: RegistrationStatus__Output[];
  /** Number of GetInfo calls received. */
  getInfoCalls: number;
  /** Stops serving and removes the socket file. */
  stop(): Promise<void>;
}

export async function startFakePlugin(socketPath: string, info: FakePluginInfo): Promise<FakeRegistrationServer> {
  const server = new grpc.Server();
  const fake: FakeRegistrationServer = {
    socketPath,
    statuses: [],
    getInfoCalls: 0,
    async stop() {
      await new Promise<void>((done) => server.tryShutdown(() => done()));
      await rm(socketPath, { force: true });
    },
  };
  const handlers: RegistrationHandlers = {
    GetInfo(_call, callback) {
      fake.getInfoCalls++;
      callback(null, { type: info.type, name: info.name, endpoint: info.endpoint ?? '', supported_versions: info.versions });
    },
    NotifyRegistrationStatus(call, callback) {
      fake.statuses.push(call.request);
      callback(null, {});
    },
  };
  server.addService((await loadPluginRegistration()).Registration.service, handlers);
  await new Promise<void>((done, fail) =>
    server.bindAsync(unixTarget(socketPath), grpc.ServerCredentials.createInsecure(), (err) => (err ? fail(err) : done())),
  );
  return fake;
}
