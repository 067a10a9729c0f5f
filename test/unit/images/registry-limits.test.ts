// A hostile registry (a node http server) against the image service: huge token and
// manifest bodies, stalled bodies, a token endpoint that never answers and error
// bodies with megabyte messages. Each ends the pull with a precise ErrImagePull;
// memory stays bounded because nodelet stops reading at its cap (asserted on the
// error and on how much the server managed to send before the client hung up).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type ServerResponse, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProviderError, type ImageRequest } from '@nodelet/plugin-api/v1';
import { OciImageService } from '../../../core/images/image-service.ts';
import { WASM_LAYER_TYPES } from '../../../core/images/manifest.ts';
import { sha256, tinyModule } from '../../harness/oci-push.ts';

const listen = (s: Server) => new Promise<string>((r) => s.listen(0, '127.0.0.1', () => r(`127.0.0.1:${(s.address() as { port: number }).port}`)));
const close = (s: Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });

const mod = tinyModule('limits');
const config = Buffer.from('{}');
const manifest = Buffer.from(
  JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.wasm.config.v0+json', digest: sha256(config), size: config.length },
    layers: [{ mediaType: 'application/wasm', digest: sha256(mod), size: mod.length }],
  }),
);

/** Bytes the server got out before the client stopped reading, per scenario. */
const sent = new Map<string, number>();

/** Streams `total` bytes (`head`, then filler) in 64 KiB chunks with back-pressure; stops when the client goes away. */
function stream(res: ServerResponse, key: string, head: string, total: number, filler = 0x61): void {
  let n = 0;
  const chunk = Buffer.alloc(64 * 1024, filler);
  const pump = () => {
    while (n < total && !res.destroyed) {
      const part = n === 0 ? Buffer.concat([Buffer.from(head), chunk]) : chunk;
      n += part.length;
      sent.set(key, n);
      if (!res.write(part)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end();
  };
  res.on('close', () => sent.set(key, n));
  pump();
}

let host = '';
const server = createServer((req, res) => {
  const url = new URL(req.url!, 'http://x');
  const [, , repo, , kind, ref] = url.pathname.split('/');
  if (url.pathname === '/token-huge') return stream(res.writeHead(200, { 'content-type': 'application/json' }), 'token', '{"token":"', 200 << 20);
  if (url.pathname === '/token-silent') return; // never answers
  if (url.pathname === '/token-stall') return void res.writeHead(200, { 'content-type': 'application/json' }).write('{"tok');
  if (repo === 'huge-token' || repo === 'silent-token' || repo === 'stall-token') {
    if (req.headers.authorization) return res.writeHead(200).end();
    const realm = { 'huge-token': 'token-huge', 'silent-token': 'token-silent', 'stall-token': 'token-stall' }[repo];
    return res.writeHead(401, { 'www-authenticate': `Bearer realm="http://${host}/${realm}",service="x"` }).end();
  }
  if (repo === 'huge-manifest' && kind === 'manifests') {
    return stream(
      res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }),
      'manifest',
      '{"schemaVersion":2,"x":"',
      200 << 20,
      0x20,
    );
  }
  if (repo === 'big-error') {
    const size = ref === 'mb' ? 2 << 20 : 10_000;
    return res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'DENIED', message: 'm'.repeat(size) }] }));
  }
  if (kind === 'manifests') return res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }).end(manifest);
  if (kind === 'blobs' && ref === sha256(config)) return res.writeHead(200).end(config);
  if (kind === 'blobs' && repo === 'stall-blob') return void res.writeHead(200, { 'content-length': String(mod.length) }).write(mod.subarray(0, 4));
  if (kind === 'blobs') return res.writeHead(200).end(mod);
  res.writeHead(404).end();
});

const roots: string[] = [];
beforeAll(async () => {
  host = await listen(server);
});
afterAll(async () => {
  await close(server);
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

async function service(): Promise<OciImageService> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-limits-'));
  roots.push(root);
  return OciImageService.open({ rootDir: root, noProgressTimeoutMs: 300, headersTimeoutMs: 300 });
}
const req: ImageRequest = { pullPolicy: 'IfNotPresent', credentials: [], acceptLayerTypes: WASM_LAYER_TYPES };
const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isProviderError(e)).toBe(true);
  return e as Error & { reason: string };
};

describe('registry bodies nodelet reads into memory are capped', () => {
  it('refuses a 200 MB token response at 1 MiB', async () => {
    const e = await failure((await service()).pull(`${host}/huge-token/app:v1`, req));
    expect(e.reason).toBe('ErrImagePull');
    expect(e.message).toContain(`token response of http://${host}/token-huge exceeds 1048576 bytes`);
    expect(sent.get('token')).toBeLessThan(32 << 20);
  });

  it('refuses a 200 MB chunked manifest at 4 MiB', async () => {
    const e = await failure((await service()).pull(`${host}/huge-manifest/app:v1`, req));
    expect(e.reason).toBe('ErrImagePull');
    expect(e.message).toContain('manifest v1 exceeds 4194304 bytes');
    expect(sent.get('manifest')).toBeLessThan(32 << 20);
  });

  it('keeps a registry error with a 2 MB (or 10 KB) message short in the pull error', async () => {
    const svc = await service();
    const mb = await failure(svc.pull(`${host}/big-error/app:mb`, req));
    expect(mb.reason).toBe('ErrImagePull');
    expect(mb.message).toBe(`failed to pull image "${host}/big-error/app:mb": unexpected status 400 Bad Request (GET manifests/mb: HTTP 400)`);
    const kb = await failure(svc.pull(`${host}/big-error/app:kb`, req));
    expect(kb.message.length).toBeLessThanOrEqual(1024);
    expect(kb.message).toMatch(/^failed to pull image "[^"]+": denied: m+ \.\.\. \(GET manifests\/kb: HTTP 400\)$/);
  });
});

describe('registry requests that stop making progress fail the pull', () => {
  it('a blob body that stalls', async () => {
    const e = await failure((await service()).pull(`${host}/stall-blob/app:v1`, req));
    expect(e.reason).toBe('ErrImagePull');
    expect(e.message).toContain(`no progress reading ${host}/v2/stall-blob/app/blobs/${sha256(mod)} for 0.3s`);
  });

  it('a token endpoint that never answers, or stalls in its body', async () => {
    const svc = await service();
    const silent = await failure(svc.pull(`${host}/silent-token/app:v1`, req));
    expect(silent.message).toContain(`no response from ${host} within 0.3s`);
    const stalled = await failure(svc.pull(`${host}/stall-token/app:v1`, req));
    expect(stalled.message).toContain(`no progress reading ${host}/token-stall for 0.3s`);
  });

  it('a well-behaved registry still serves the module', async () => {
    const img = await (await service()).pull(`${host}/fine/app:v1`, req);
    expect(img.digest).toBe(sha256(manifest));
    expect(img.size).toBe(mod.length);
  });
});
