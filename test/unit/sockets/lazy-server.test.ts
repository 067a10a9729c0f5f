/**
 * sockets/lazy-server.ts: a unix-socket gRPC server that listens at once and builds its
 * grpc-js server on the first connection. Calls are served through grpc-js's connection
 * injector as by a bound server; a failing build ends that connection only (logged), the
 * next connection builds again; stop() ends open connections.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPodResources, type PodResourcesListerClient } from '../../../sockets/podresources.ts';
import { unixTarget } from '../../../sockets/dial.ts';
import { listenGrpcLazily, type LazyGrpcServer } from '../../../sockets/lazy-server.ts';
import { memLogger } from '../devices/helpers.ts';

let dir: string;
let server: LazyGrpcServer | undefined;
const clients: grpc.Client[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ndl-lazy-grpc-'));
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  server?.stop();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A client with its own connection (grpc-js otherwise shares one, in backoff after a failure, between clients of a target). */
async function client(path: string): Promise<PodResourcesListerClient> {
  const c = new (await loadPodResources()).PodResourcesLister(unixTarget(path), grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  clients.push(c);
  return c;
}

function list(c: PodResourcesListerClient): Promise<string> {
  return new Promise((resolve) =>
    c.List({}, { deadline: Date.now() + 5000 }, (e, r) => resolve(e ? `error ${e.code}: ${e.details}` : JSON.stringify(r?.pod_resources.map((p) => p.name)))),
  );
}

const handlers = (name: string) => ({
  List: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { pod_resources: [{ name, namespace: 'ns', containers: [] }] }),
  GetAllocatableResources: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb(null, {}),
  Get: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb({ code: grpc.status.UNKNOWN, details: 'not here' }),
});

describe('listenGrpcLazily', () => {
  it('builds the server on the first connection, once, and serves every connection on it', async () => {
    const path = join(dir, 'kubelet.sock');
    let builds = 0;
    server = await listenGrpcLazily(
      path,
      async (s) => {
        builds++;
        s.addService((await loadPodResources()).PodResourcesLister.service, handlers('p1'));
      },
      memLogger(),
    );
    expect(builds).toBe(0);
    expect(await list(await client(path))).toBe('["p1"]');
    expect(await list(await client(path))).toBe('["p1"]');
    expect(builds).toBe(1);
  });

  it('ends the connection of a failed build, logs it, and builds again for the next one', async () => {
    const path = join(dir, 'kubelet.sock');
    const log = memLogger();
    let builds = 0;
    server = await listenGrpcLazily(
      path,
      async (s) => {
        if (++builds === 1) throw new Error('no code');
        s.addService((await loadPodResources()).PodResourcesLister.service, handlers('p2'));
      },
      log,
    );
    expect(await list(await client(path))).toMatch(/^error 14: /); // UNAVAILABLE: the connection was closed
    expect(log.lines.some((l) => l.level === 'error' && /no code/.test(JSON.stringify(l.obj)))).toBe(true);
    expect(await list(await client(path))).toBe('["p2"]');
  });

  it('stop() ends the open connections and stops listening', async () => {
    const path = join(dir, 'kubelet.sock');
    server = await listenGrpcLazily(path, async (s) => s.addService((await loadPodResources()).PodResourcesLister.service, handlers('p3')), memLogger());
    const c = await client(path);
    expect(await list(c)).toBe('["p3"]');
    server.stop();
    expect(await list(c)).toMatch(/^error 14: /);
  });
});
