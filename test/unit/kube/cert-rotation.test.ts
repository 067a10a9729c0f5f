/** createKubeClients with a rotating client certificate: a new connection pool per certificate, the old one closed. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClients } from '../../../core/kube/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'kube-rotation-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
const read = (f: string) => readFileSync(join(dir, f), 'utf8');
let server: https.Server;
const seen: { cn: string; socket: TLSSocket }[] = [];
let port = 0;

/** A certificate `name` signed by the test CA (`extra`: openssl -addext values). */
function issue(name: string, subj: string, ext: string): { cert: string; key: string } {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', subj, '-keyout', `${name}.key`, '-out', `${name}.csr`);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.crt`,
  );
  return { cert: read(`${name}.crt`), key: read(`${name}.key`) };
}

beforeAll(async () => {
  openssl(
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
    '/CN=test-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  const serving = issue('serving', '/CN=apiserver', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  issue('a', '/O=system:nodes/CN=system:node:a', 'extendedKeyUsage=clientAuth\n');
  issue('b', '/O=system:nodes/CN=system:node:b', 'extendedKeyUsage=clientAuth\n');
  server = https.createServer({ ...serving, ca: read('ca.crt'), requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const socket = req.socket as TLSSocket;
    seen.push({ cn: String(socket.getPeerCertificate().subject?.CN), socket });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfig(pemFile: string): string {
  const file = join(dir, `kc-${Math.random()}.yaml`);
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
current-context: c
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority: "${join(dir, 'ca.crt')}"}}]
users: [{name: u, user: {client-certificate: "${pemFile}", client-key: "${pemFile}"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
`,
  );
  return file;
}

describe('API clients and a rotating client certificate', () => {
  // undici opens a second connection for the second request of a fresh pool, then reuses both:
  // "a pool" below means at most 2 connections for 3 sequential requests.
  it('reuse one pool while the certificate file stays, and a new pool once it is replaced; the old one is closed', async () => {
    seen.length = 0;
    const pem = join(dir, 'kubelet-client-current.pem');
    writeFileSync(pem, read('a.crt') + read('a.key'));
    const c = createKubeClients(kubeconfig(pem));
    for (let i = 0; i < 3; i++) await c.core.readNamespace({ name: 'default' });
    writeFileSync(pem, read('b.crt') + read('b.key'));
    for (let i = 0; i < 3; i++) await c.core.readNamespace({ name: 'default' });
    expect(seen.map((s) => s.cn)).toEqual([...Array(3).fill('system:node:a'), ...Array(3).fill('system:node:b')]);
    const before = new Set(seen.slice(0, 3).map((s) => s.socket));
    const after = new Set(seen.slice(3).map((s) => s.socket));
    expect(before.size).toBeLessThanOrEqual(2);
    expect(after.size).toBeLessThanOrEqual(2);
    for (const s of after) expect(before.has(s)).toBe(false);
    await expect.poll(() => [...before].every((s) => s.destroyed)).toBe(true);
  });

  it("take the certificate from a credentials source over the kubeconfig's", async () => {
    seen.length = 0;
    const pem = join(dir, 'fixed.pem');
    writeFileSync(pem, read('a.crt') + read('a.key'));
    let current: { cert: string; key: string } | undefined;
    const c = createKubeClients(kubeconfig(pem), () => current);
    await c.core.readNamespace({ name: 'default' });
    current = { cert: read('b.crt'), key: read('b.key') };
    await c.core.readNamespace({ name: 'default' });
    expect((await c.core.readNamespace({ name: 'default' })).metadata?.name).toBe('default');
    expect(seen.map((s) => s.cn)).toEqual(['system:node:a', 'system:node:b', 'system:node:b']);
    expect(seen[1]!.socket).not.toBe(seen[0]!.socket);
  });
});
