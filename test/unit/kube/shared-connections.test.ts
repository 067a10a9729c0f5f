/** API calls and watches through createKubeClients share one keep-alive connection per apiserver. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClients } from '../../../core/kube/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'kube-client-'));
let server: https.Server;
let tlsConnections = 0;
let kubeconfig = '';

beforeAll(async () => {
  // A self-signed serving cert for 127.0.0.1 (openssl is one of CI's apt packages).
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=apiserver',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const cert = readFileSync(join(dir, 'cert.pem'));
  server = https.createServer({ cert, key: readFileSync(join(dir, 'key.pem')) }, (req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url?.includes('watch=true')) {
      res.end(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Node', apiVersion: 'v1', metadata: { name: 'n1' } } })}\n`);
      return;
    }
    res.end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: [] }));
  });
  server.keepAliveTimeout = 30_000;
  server.on('secureConnection', () => {
    tlsConnections++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: ${cert.toString('base64')}}}]
users: [{name: u, user: {token: t0ken}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
  );
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** TLS connections opened by 5 calls, then by a watch (which ends its connection) and 3 more calls. */
async function callsAndWatch(clients: ReturnType<typeof createKubeClients>): Promise<[number, number]> {
  const before = tlsConnections;
  for (let i = 0; i < 5; i++) await clients.core.listNode();
  const calls = tlsConnections - before;
  await new Promise<void>((resolve, reject) => {
    void clients.transport.watch(
      '/api/v1/nodes',
      {},
      () => undefined,
      (err) => (err ? reject(err) : resolve()),
    );
  });
  for (let i = 0; i < 3; i++) await clients.core.listNode();
  return [calls, tlsConnections - before - calls];
}

describe('createKubeClients', () => {
  it('reuses its keep-alive TLS connections: 9 requests including a watch open at most 2', async () => {
    const [calls, after] = await callsAndWatch(createKubeClients(kubeconfig));
    expect(calls + after).toBeLessThanOrEqual(2);
  });
});
