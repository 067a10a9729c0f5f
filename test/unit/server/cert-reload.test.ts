import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { pino } from 'pino';
import { createKubeletServer, type KubeletServer } from '../../../core/server/kubelet-server.ts';
import { watchServingCert } from '../../../core/server/cert-reloader.ts';
import { alwaysAllow } from '../../../core/server/authz.ts';
import { selfSignedCert } from '../../../core/server/serving-cert.ts';
import { until } from '../../harness/until.ts';
import { makeCa, makeClientCert, type Pem } from './test-pki.ts';

let dir: string;
let server: KubeletServer;
let port: number;
let stop: () => void;
let client: Pem;
let ca: string;
const log = pino({ level: 'silent' });

/** The CN of the certificate a new TLS connection is served (undefined when the handshake fails). */
function servedCn(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, cert: client.cert, key: client.key }, () => {
      const cn = s.getPeerX509Certificate()?.subject.replace(/^CN=/, '');
      s.end();
      resolve(cn);
    });
    s.on('error', () => resolve(undefined));
  });
}

/** The reloader's log lines (JSON): a refused pair shows as its warning. */
const reloaderLines: string[] = [];
const reloaderLog = pino({ level: 'info' }, { write: (line: string) => void reloaderLines.push(line) });
const refusals = () => reloaderLines.filter((l) => l.includes('cannot be used; keeping the current one')).length;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'reload-'));
  const caPair = await makeCa('client-ca');
  ca = caPair.cert;
  client = await makeClientCert(caPair, 'someone');
  const first = await selfSignedCert('first', []);
  await writeFile(path.join(dir, 'tls.crt'), first.cert);
  await writeFile(path.join(dir, 'tls.key'), first.key, { mode: 0o600 });
  server = createKubeletServer({
    nodeName: 'n',
    log,
    pods: { listPods: () => [], findContainer: () => undefined },
    tls: { cert: first.cert, key: first.key, ca },
    address: '127.0.0.1',
    port: 0,
    healthzAddress: '127.0.0.1',
    healthzPort: null,
    authorizer: alwaysAllow,
  });
  port = (await server.start()).port;
  stop = watchServingCert({
    certFile: path.join(dir, 'tls.crt'),
    keyFile: path.join(dir, 'tls.key'),
    initial: first,
    log: reloaderLog,
    onChange: (p) => server.updateTls({ ...p, ca }),
  });
});
afterAll(async () => {
  stop?.();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('serving certificate reload', () => {
  it('serves a certificate replaced on disk to new connections, without a restart', async () => {
    expect(await servedCn()).toMatch(/^first@\d+$/);
    const second = await selfSignedCert('second', []);
    // Replaced the way secret volumes and cert tools do it: written aside, renamed over.
    await writeFile(path.join(dir, 'tls.key.new'), second.key);
    await writeFile(path.join(dir, 'tls.crt.new'), second.cert);
    await rename(path.join(dir, 'tls.key.new'), path.join(dir, 'tls.key'));
    await rename(path.join(dir, 'tls.crt.new'), path.join(dir, 'tls.crt'));
    await until('the second certificate served', async () => (await servedCn())?.startsWith('second@') ?? false, 5000);
  });

  it('keeps the last good certificate when the new files do not match', async () => {
    const before = await servedCn();
    const third = await selfSignedCert('third', []);
    const refused = refusals();
    await writeFile(path.join(dir, 'tls.crt'), third.cert);
    // The reloader read the mismatched pair and refused it: the old certificate is still served.
    await until('the mismatched pair refused', () => refusals() > refused, 5000);
    expect(await servedCn()).toBe(before);
    // and recovers once the key matches
    await writeFile(path.join(dir, 'tls.key'), third.key);
    await until('the third certificate served', async () => (await servedCn())?.startsWith('third@') ?? false, 5000);
  });

  it('fails handshakes while there is no serving certificate, then serves one once it is set (serverTLSBootstrap)', async () => {
    const waiting = createKubeletServer({
      nodeName: 'n',
      log,
      pods: { listPods: () => [], findContainer: () => undefined },
      tls: { ca },
      address: '127.0.0.1',
      port: 0,
      healthzAddress: '127.0.0.1',
      healthzPort: null,
      authorizer: alwaysAllow,
    });
    const saved = port;
    port = (await waiting.start()).port;
    try {
      expect(await servedCn()).toBeUndefined();
      const issued = await selfSignedCert('issued', []);
      waiting.updateTls({ ...issued, ca });
      const cn = await servedCn();
      expect(cn).toMatch(/^issued@/);
      expect(new X509Certificate(issued.cert).subject).toBe(`CN=${cn}`);
    } finally {
      await waiting.close();
      port = saved;
    }
  });
});
