import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { loadServingCert, selfSignedCert } from '../../../core/server/serving-cert.ts';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(path.join(tmpdir(), 'servingcert-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('serving certificate', () => {
  it('generates nodelet.crt/.key for the node name and addresses, then reuses them', async () => {
    const first = await loadServingCert({ certDir: dir, nodeName: 'node-1', addresses: ['10.0.0.5', 'node-1.example'] });
    expect(first.generated).toBe(true);
    expect(first.certFile).toBe(path.join(dir, 'nodelet.crt'));
    expect(first.keyFile).toBe(path.join(dir, 'nodelet.key'));
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

  it('replaces an expired generated certificate', async () => {
    const old = await loadServingCert({ certDir: dir, nodeName: 'node-1', now: new Date('2020-01-01T00:00:00Z') });
    const fresh = await loadServingCert({ certDir: dir, nodeName: 'node-1' });
    expect(fresh.generated).toBe(true);
    expect(fresh.cert).not.toBe(old.cert);
  });

  it('loads --tls-cert-file/--tls-private-key-file and checks they match', async () => {
    const a = selfSignedCert('a', []);
    const b = selfSignedCert('b', []);
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
