/**
 * The node's heartbeat survives connections that stop answering, against the real
 * apiserver. nodelet reaches the apiserver through a TCP relay. The relay then
 * black-holes every connection it has (and every one opened in the next 6 s): bytes
 * go in and nothing comes back, as after a NAT or load-balancer failover.
 *
 * The Lease must be renewed again once new connections work. Before the heartbeat
 * timeout, the renewal in flight waited for an answer for undici's 300 s and the
 * Lease expired behind it. Now the request is given up after the heartbeat timeout
 * (`nodeStatusUpdateFrequency`, at most the lease duration), as upstream's
 * heartbeat client does, and tried again on a new connection.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { issueNodeCredentials } from '../cluster/control-plane.ts';
import { adminClients, eventually, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

/** A TCP relay to `target` whose connections can be black-holed. */
class Relay {
  readonly server: net.Server;
  private readonly conns = new Set<{ client: net.Socket; up: net.Socket; dead: boolean }>();
  /** Connections accepted before this time are black-holed once {@link blackHole} is called. */
  private deadUntil = 0;

  constructor(target: { host: string; port: number }) {
    this.server = net.createServer((client) => {
      const up = net.connect(target.port, target.host);
      const c = { client, up, dead: Date.now() < this.deadUntil };
      this.conns.add(c);
      const relay = (from: net.Socket, to: net.Socket) => from.on('data', (d) => void (c.dead || to.write(d)));
      relay(client, up);
      relay(up, client);
      const end = () => {
        this.conns.delete(c);
        client.destroy();
        up.destroy();
      };
      client.on('close', end).on('error', end);
      up.on('close', end).on('error', end);
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as net.AddressInfo).port;
  }

  /** From now on every open connection, and every one accepted in the next `ms`, forwards nothing. */
  blackHole(ms: number): number {
    this.deadUntil = Date.now() + ms;
    for (const c of this.conns) c.dead = true;
    return this.conns.size;
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.client.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

describe('heartbeat timeout', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const coordination = k.kc.makeApiClient(k8s.CoordinationV1Api);
  const nodeName = 'heartbeat-n1';
  let nodelet: NodeletProcess;
  let relay: Relay;

  beforeAll(async () => {
    const server = new URL(info.server);
    relay = new Relay({ host: server.hostname, port: Number(server.port) });
    const port = await relay.listen();
    const creds = issueNodeCredentials(info, nodeName);
    const relayed = `${creds.kubeconfig}.relayed`;
    writeFileSync(relayed, readFileSync(creds.kubeconfig, 'utf8').replaceAll(info.server, `https://127.0.0.1:${port}`));
    // Lease of 8 s renewed every 2 s; status every 4 s: the heartbeat timeout is 4 s.
    nodelet = await startNodelet(info, nodeName, [`--kubeconfig=${relayed}`, '--node-lease-duration-seconds=8', '--node-status-update-frequency=4s']);
    await waitNodeReady(k.core, nodeName);
  }, 120_000);

  afterAll(async () => {
    await nodelet?.dispose();
    await relay?.close();
  });

  const renewTime = async () => {
    const lease = await coordination.readNamespacedLease({ name: nodeName, namespace: 'kube-node-lease' });
    return new Date(lease.spec!.renewTime!).getTime();
  };

  it('renews the Lease on a new connection after the one in use stops answering', async () => {
    // The node is Ready from its registration on; its Lease is created just after.
    const lease = await eventually('the node Lease', () => coordination.readNamespacedLease({ name: nodeName, namespace: 'kube-node-lease' }), 20_000);
    expect(lease.spec?.leaseDurationSeconds).toBe(8);
    // The node's requests reach the apiserver through the relay only.
    await eventually('a renewal through the relay', async () => Date.now() - (await renewTime()) < 2_500, 20_000);
    const deadFor = 6_000;
    const dead = relay.blackHole(deadFor);
    expect(dead, 'connections black-holed').toBeGreaterThan(0);
    const healed = Date.now() + deadFor;
    // Renewed again after the relay takes new connections: 4 s timeout, then a fresh connection.
    await eventually('the Lease renewed after the black hole', async () => (await renewTime()) > healed, 30_000, 500);
    const log = readFileSync(nodelet.logFile, 'utf8');
    expect(log).toContain(
      `"err":"PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${nodeName}: no answer within 4000 ms; the request was cancelled"`,
    );
    // The node never went NotReady: its Lease did not expire.
    const node = await k.core.readNode({ name: nodeName });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });
});
