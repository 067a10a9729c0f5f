import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { loadServingCert, selfSignedCert } from '../../../core/server/serving-cert.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'servingcert-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('serving certificate', () => {
  it('generates kubelet.crt/.key for the node name and addresses, then reuses them', async () => {
    const first = await loadServingCert({ certDir: dir, nodeName: 'node-1', addresses: ['10.0.0.5', 'node-1.example'] });
    expect(first.generated).toBe(true);
    expect(first.certFile).toBe(path.join(dir, 'kubelet.crt'));
    expect(first.keyFile).toBe(path.join(dir, 'kubelet.key'));
    const x = new X509Certificate(first.cert);
    expect(x.subjectAltName).toContain('DNS:node-1');
    expect(x.subjectAltName).toContain('DNS:node-1.example');
    expect(x.subjectAltName).toContain('IP Address:10.0.0.5');
    expect(x.checkHost('node-1')).toBe('node-1');
    expect(x.checkIP('10.0.0.5')).toBe('10.0.0.5');
    expect(x.checkPrivateKey(createPrivateKey(first.key))).toBe(true);
    expect((await stat(first.keyFile)).mode & 0o777).toBe(0o600);
    const again = await loadServingCert({ certDir: dir, nodeName: 'node-1' });
    expect(again.generated).toBe(false);
    expect(again.cert).toBe(first.cert);
  });

  it('is made like upstream certutil.GenerateSelfSignedCertKey: UTF8String CN host@<unix time>, leaf + one-off CA, PKCS#1 key', async () => {
    const now = new Date('2026-05-01T12:00:00Z');
    const { cert, key } = await selfSignedCert('node-1', ['10.0.0.5'], now);
    const blocks = cert.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)!;
    expect(blocks).toHaveLength(2);
    const [leaf, ca] = blocks.map((b) => new X509Certificate(b));
    const unix = Math.floor(now.getTime() / 1000);
    expect(leaf!.subject).toBe(`CN=node-1@${unix}`);
    expect(leaf!.issuer).toBe(`CN=node-1-ca@${unix}`);
    expect(ca!.ca).toBe(true);
    expect(leaf!.ca).toBe(false);
    expect(leaf!.verify(ca!.publicKey)).toBe(true);
    expect(leaf!.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(Date.parse(leaf!.validFrom)).toBe(now.getTime() - 3600_000);
    expect(Date.parse(leaf!.validTo)).toBe(now.getTime() - 3600_000 + 365 * 24 * 3600_000);
    // The CN is a UTF8String (tag 0x0c): '@' is not allowed in a PrintableString and Go refuses one holding it.
    const cn = Buffer.from(`node-1@${unix}`);
    expect(leaf!.raw.includes(Buffer.concat([Buffer.from([0x0c, cn.length]), cn]))).toBe(true);
    expect(key).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(leaf!.checkPrivateKey(createPrivateKey(key))).toBe(true);
  });

  it('replaces an expired generated certificate', async () => {
    const old = await loadServingCert({ certDir: dir, nodeName: 'node-1', now: new Date('2020-01-01T00:00:00Z') });
    const fresh = await loadServingCert({ certDir: dir, nodeName: 'node-1' });
    expect(fresh.generated).toBe(true);
    expect(fresh.cert).not.toBe(old.cert);
  });

  it('loads --tls-cert-file/--tls-private-key-file and checks they match', async () => {
    const a = await selfSignedCert('a', []);
    const b = await selfSignedCert('b', []);
    await writeFile(path.join(dir, 'a.crt'), a.cert);
    await writeFile(path.join(dir, 'a.key'), a.key);
    await writeFile(path.join(dir, 'b.key'), b.key);
    const got = await loadServingCert({ certDir: dir, nodeName: 'n', certFile: path.join(dir, 'a.crt'), keyFile: path.join(dir, 'a.key') });
    expect(got).toMatchObject({ cert: a.cert, key: a.key, generated: false });
    const mismatch = loadServingCert({ certDir: dir, nodeName: 'n', certFile: path.join(dir, 'a.crt'), keyFile: path.join(dir, 'b.key') });
    await expect(mismatch).rejects.toThrow(/does not match/);
    const missing = await loadServingCert({ certDir: dir, nodeName: 'n', certFile: path.join(dir, 'x.crt'), keyFile: path.join(dir, 'a.key') }).catch((e) => e);
    expect(isNodeletError(missing, 'NDL_API_SERVING_CERT')).toBe(true);
    await expect(loadServingCert({ certDir: dir, nodeName: 'n', certFile: path.join(dir, 'a.crt') })).rejects.toThrow(/together/);
  });
});
