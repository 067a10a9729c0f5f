// Registry authentication: basic auth against a real docker-registry with htpasswd,
// and the bearer token flow against a small fake registry + token server.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProviderError, type ImageRequest, type RegistryCredential } from '@nodelet/plugin-api/v1';
import { OciImageService } from '../../../core/images/image-service.ts';
import { parseChallenge } from '../../../core/images/registry-auth.ts';
import { WASM_LAYER_TYPES } from '../../../core/images/manifest.ts';
import { startRegistry, type TestRegistry } from '../../harness/registry.ts';
import { pushWasmArtifact, sha256, tinyModule } from '../../harness/oci-push.ts';

const roots: string[] = [];
afterAll(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

async function newService(): Promise<OciImageService> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-images-auth-'));
  roots.push(root);
  return OciImageService.open({ rootDir: root });
}

const req = (credentials: RegistryCredential[]): ImageRequest => ({ pullPolicy: 'Always', credentials, acceptLayerTypes: WASM_LAYER_TYPES });

async function failure(p: Promise<unknown>): Promise<Error & { reason: string }> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isProviderError(e)).toBe(true);
  return e as Error & { reason: string };
}

describe('basic auth (real docker-registry with htpasswd)', () => {
  const auth = { username: 'puller', password: 's3cret' };
  let reg: TestRegistry;
  let image: string;
  const mod = tinyModule('private');

  beforeAll(async () => {
    reg = await startRegistry({ auth });
    await pushWasmArtifact(reg.host, 'private/app', 'v1', mod, { auth });
    image = `${reg.host}/private/app:v1`;
  });
  afterAll(() => reg?.stop());

  it('pulls with the right credentials', async () => {
    const img = await (await newService()).pull(image, req([{ registry: reg.host, ...auth }]));
    expect(await readFile(img.path)).toEqual(mod);
  });

  it('fails with the registry reason without credentials', async () => {
    const err = await failure((await newService()).pull(image, req([])));
    expect(err.reason).toBe('ErrImagePull');
    expect(err.message).toMatch(new RegExp(`^failed to pull image "${image}": unauthorized: authentication required`));
  });

  it('fails with wrong credentials', async () => {
    const err = await failure((await newService()).pull(image, req([{ registry: reg.host, username: 'puller', password: 'wrong' }])));
    expect(err.message).toContain('unauthorized: authentication required');
    expect(err.message).toContain('HTTP 401');
  });

  it('tries each matching credential, most specific first, until one is accepted', async () => {
    const creds = [
      { registry: reg.host, ...auth },
      { registry: `http://${reg.host}/private/app`, username: 'nobody', password: 'x' },
      { registry: 'other.example.com', username: 'u', password: 'p' },
    ];
    const img = await (await newService()).pull(image, req(creds));
    expect(img.size).toBe(mod.length);
  });

  it('ignores credentials for other registries', async () => {
    const err = await failure((await newService()).pull(image, req([{ registry: 'example.com', ...auth }])));
    expect(err.message).toContain('unauthorized');
  });
});

/** A fake registry on plain HTTP whose API wants a bearer token from its own /token endpoint. */
function fakeTokenRegistry(mod: Buffer) {
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.wasm.config.v0+json', digest: sha256(Buffer.from('{}')), size: 2 },
      layers: [{ mediaType: 'application/wasm', digest: sha256(mod), size: mod.length }],
    }),
  );
  const seen: { path: string; auth?: string; query?: string }[] = [];
  const server: Server = createServer((r: IncomingMessage, res) => {
    const url = new URL(r.url!, 'http://x');
    seen.push({ path: url.pathname, auth: r.headers.authorization, query: url.search });
    const port = (server.address() as { port: number }).port;
    if (url.pathname === '/token') {
      const ok = r.headers.authorization === `Basic ${Buffer.from('robot:pw').toString('base64')}`;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify(ok ? { token: `tok-${url.searchParams.get('scope')}`, expires_in: 300 } : { errors: [{ code: 'UNAUTHORIZED', message: 'bad robot' }] }),
      );
    }
    if (r.headers.authorization !== 'Bearer tok-repository:app:pull') {
      res.writeHead(401, {
        'www-authenticate': `Bearer realm="http://127.0.0.1:${port}/token",service="fake",scope="repository:app:pull"`,
        'content-type': 'application/json',
      });
      return res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }));
    }
    if (url.pathname === '/v2/app/manifests/v1') {
      res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json', 'docker-content-digest': sha256(manifest) });
      return res.end(r.method === 'HEAD' ? undefined : manifest);
    }
    if (url.pathname === `/v2/app/blobs/${sha256(mod)}`) return res.writeHead(200).end(mod);
    res.writeHead(404).end();
  });
  return { server, seen };
}

describe('bearer token flow (fake registry)', () => {
  const mod = tinyModule('bearer');
  const fake = fakeTokenRegistry(mod);
  let host: string;

  beforeAll(async () => {
    await new Promise<void>((r) => fake.server.listen(0, '127.0.0.1', () => r()));
    host = `127.0.0.1:${(fake.server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => fake.server.close(() => r())));

  it('gets a token with the credential, retries, and reuses the token', async () => {
    const svc = await newService();
    const creds = [{ registry: host, username: 'robot', password: 'pw' }];
    const img = await svc.pull(`${host}/app:v1`, req(creds));
    expect(await readFile(img.path)).toEqual(mod);
    const tokenCalls = fake.seen.filter((s) => s.path === '/token');
    expect(tokenCalls).toHaveLength(1);
    expect(tokenCalls[0]!.query).toContain('service=fake');
    expect(tokenCalls[0]!.query).toContain('scope=repository%3Aapp%3Apull');
    const blob = fake.seen.find((s) => s.path.includes('/blobs/'));
    expect(blob?.auth).toBe('Bearer tok-repository:app:pull');
    fake.seen.length = 0;
    await svc.pull(`${host}/app:v1`, req(creds));
    expect(fake.seen.map((s) => s.path)).toEqual(['/v2/app/manifests/v1']);
  });

  it('reports a refused token request', async () => {
    const err = await failure((await newService()).pull(`${host}/app:v1`, req([{ registry: host, username: 'robot', password: 'no' }])));
    expect(err.message).toContain('unauthorized: bad robot');
  });
});

describe('parseChallenge', () => {
  it('reads scheme and quoted parameters', () => {
    expect(parseChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/nginx:pull' },
    });
    expect(parseChallenge('Basic realm="Registry Realm"')).toEqual({ scheme: 'basic', params: { realm: 'Registry Realm' } });
    expect(parseChallenge(undefined)).toBeUndefined();
  });
});
