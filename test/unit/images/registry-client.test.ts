// RegistryClient details that a real docker-registry does not exercise: redirects
// to another origin, registry error bodies, lying manifests, and the HTTP/HTTPS choice.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { RegistryClient } from '../../../core/images/registry-client.ts';
import { RegistryError } from '../../../core/images/registry-error.ts';
import { sha256 } from '../../harness/oci-push.ts';

const listen = (s: Server) => new Promise<string>((r) => s.listen(0, '127.0.0.1', () => r(`127.0.0.1:${(s.address() as { port: number }).port}`)));
const close = (s: Server) => new Promise<void>((r) => s.close(() => r()));

const blob = Buffer.from('\0asm\x01\0\0\0redirected');
const seenAtStorage: (string | undefined)[] = [];
const storage = createServer((r, res) => {
  seenAtStorage.push(r.headers.authorization);
  res.writeHead(200).end(blob);
});
let storageHost = '';
const registry = createServer((r, res) => {
  const path = r.url!;
  if (path === `/v2/app/blobs/${sha256(blob)}`) return res.writeHead(307, { location: `http://${storageHost}/bucket/obj?sig=1` }).end();
  if (path === '/v2/app/manifests/sha256:' + 'a'.repeat(64))
    return res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }).end('{"schemaVersion":2}');
  if (path === '/v2/app/manifests/broken') return res.writeHead(500, { 'content-type': 'text/plain' }).end('oops');
  res
    .writeHead(404, { 'content-type': 'application/json' })
    .end(JSON.stringify({ errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry', detail: {} }] }));
});
let host = '';

beforeAll(async () => {
  storageHost = await listen(storage);
  host = await listen(registry);
});
afterAll(() => Promise.all([close(storage), close(registry)]));

describe('RegistryClient', () => {
  const client = new RegistryClient();
  const target = () => ({ host, repository: 'app', credential: { registry: host, token: 'secret-token' } });

  it('follows a blob redirect to another origin without sending the credential there', async () => {
    const res = await client.getBlob(target(), sha256(blob));
    expect(Buffer.concat(await res.body.toArray())).toEqual(blob);
    expect(seenAtStorage).toEqual([undefined]);
  });

  it("carries the registry's error code and message", async () => {
    const err = await client.getManifest(target(), 'nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect((err as RegistryError).status).toBe(404);
    expect((err as RegistryError).code).toBe('NAME_UNKNOWN');
    expect((err as Error).message).toBe('name unknown: repository name not known to registry (GET manifests/nope: HTTP 404)');
  });

  it('names the status when the body is not a registry error', async () => {
    const err = await client.getManifest(target(), 'broken').catch((e: unknown) => e);
    expect((err as Error).message).toBe('unexpected status 500 Internal Server Error (GET manifests/broken: HTTP 500)');
  });

  it('rejects a manifest that does not hash to the digest asked for', async () => {
    const err = await client.getManifest(target(), `sha256:${'a'.repeat(64)}`).catch((e: unknown) => e);
    expect(isNodeletError(err, 'NDL_IMAGE_DIGEST')).toBe(true);
  });

  it('speaks plain HTTP to loopback and listed registries only', () => {
    const c = new RegistryClient({ insecureRegistries: ['reg.lan:5000', 'plain.lan'] });
    expect(c.isInsecure('localhost:5000')).toBe(true);
    expect(c.isInsecure('127.0.0.2')).toBe(true);
    expect(c.isInsecure('[::1]:5000')).toBe(true);
    expect(c.isInsecure('reg.lan:5000')).toBe(true);
    expect(c.isInsecure('reg.lan:5001')).toBe(false);
    expect(c.isInsecure('plain.lan:443')).toBe(true);
    expect(c.isInsecure('ghcr.io')).toBe(false);
    expect(c.baseUrl({ host: 'ghcr.io', repository: 'a/b' })).toBe('https://ghcr.io/v2/a/b/');
  });
});

describe('RegistryClient on a connection the registry closes', () => {
  it('retries a GET once when the connection closes before any answer (found by npm run fuzz), and no more', async () => {
    let requests = 0;
    let dropFirst = 1;
    const flaky = createServer((r, res) => {
      requests++;
      if (dropFirst-- > 0) return void r.socket.destroy();
      res.writeHead(200).end(blob);
    });
    const flakyHost = await listen(flaky);
    try {
      const client = new RegistryClient();
      const t = { host: flakyHost, repository: 'app' };
      const res = await client.getBlob(t, sha256(blob));
      expect(Buffer.concat(await res.body.toArray())).toEqual(blob);
      expect(requests).toBe(2);
      requests = 0;
      dropFirst = 2;
      await expect(client.getBlob(t, sha256(blob))).rejects.toThrow(/other side closed/);
      expect(requests).toBe(2);
    } finally {
      flaky.closeAllConnections();
      await close(flaky);
    }
  });
});
