import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createKubeClients } from '../../../core/kube/client.ts';
import { makeCa, makeClientCert, type Pem } from '../server/test-pki.ts';

// A real HTTPS server standing in for the apiserver's transport: it answers /api/v1/namespaces/default
// with a Namespace and records, per request, the client certificate CN and the TLS connection it came on.
let dir: string;
let server: https.Server;
let url: string;
const seen: { cn: string; socket: TLSSocket }[] = [];
let caPem: string;
let a: Pem;
let b: Pem;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'client-rot-'));
  const ca = await makeCa('cluster-ca');
  caPem = ca.cert;
  const serving = await makeClientCert(ca, 'apiserver', [], 'server');
  a = await makeClientCert(ca, 'system:node:a', ['system:nodes']);
  b = await makeClientCert(ca, 'system:node:b', ['system:nodes']);
  server = https.createServer({ cert: serving.cert, key: serving.key, ca: caPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const socket = req.socket as TLSSocket;
    seen.push({ cn: String(socket.getPeerCertificate().subject?.CN), socket });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function kubeconfig(certFile: string): Promise<string> {
  const file = path.join(dir, `kc-${Math.random()}.yaml`);
  await writeFile(path.join(dir, 'ca.crt'), caPem);
  await writeFile(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: c',
      `clusters: [{name: c, cluster: {server: "${url}", certificate-authority: "${path.join(dir, 'ca.crt')}", tls-server-name: apiserver}}]`,
      `users: [{name: u, user: {client-certificate: "${certFile}", client-key: "${certFile}"}}]`,
      'contexts: [{name: c, context: {cluster: c, user: u}}]',
      '',
    ].join('\n'),
  );
  return file;
}

describe('API clients and a rotating client certificate', () => {
  it("switch to a new connection when the kubeconfig's certificate file is swapped, and close the old ones", async () => {
    seen.length = 0;
    const pem = path.join(dir, 'kubelet-client-current.pem');
    await writeFile(pem, a.cert + a.key);
    const c = createKubeClients(await kubeconfig(pem));
    for (let i = 0; i < 3; i++) await c.core.readNamespace({ name: 'default' });
    expect(seen.map((s) => s.cn)).toEqual(['system:node:a', 'system:node:a', 'system:node:a']);
    // Keep-alive: three calls do not need three connections (shared-connections.test.ts counts them).
    expect(new Set(seen.map((s) => s.socket)).size).toBeLessThan(3);
    await writeFile(pem, b.cert + b.key);
    await c.core.readNamespace({ name: 'default' });
    expect(seen[3]!.cn).toBe('system:node:b');
    expect(seen.slice(0, 3).map((s) => s.socket)).not.toContain(seen[3]!.socket);
    // The old connections are closed, not left to be reused with an expiring certificate.
    await expect.poll(() => seen.slice(0, 3).every((s) => s.socket.destroyed)).toBe(true);
  });

  it("take the certificate from a credentials source (the certificate manager) over the kubeconfig's", async () => {
    seen.length = 0;
    const pem = path.join(dir, 'fixed.pem');
    await writeFile(pem, a.cert + a.key);
    let current: Pem | undefined;
    const c = createKubeClients(await kubeconfig(pem), () => current);
    await c.core.readNamespace({ name: 'default' });
    current = b;
    await c.core.readNamespace({ name: 'default' });
    const ns = await c.core.readNamespace({ name: 'default' });
    expect(ns.metadata?.name).toBe('default');
    expect(seen.map((s) => s.cn)).toEqual(['system:node:a', 'system:node:b', 'system:node:b']);
  });
});
