// Publishing modules as CNCF Wasm artifacts (library and the `nodelet push` / `nodelet pull`
// commands) against real docker-registries, anonymous and with htpasswd basic auth.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageRequest } from '@nodelet/plugin-api/v1';
import { dockerConfigCredentials } from '../../../core/images/docker-config.ts';
import { OciImageService } from '../../../core/images/image-service.ts';
import { WASM_LAYER_TYPES } from '../../../core/images/manifest.ts';
import { parseReference } from '../../../core/images/reference.ts';
import { pushWasmModule, type PushProgress } from '../../../core/images/registry-push.ts';
import { sha256, tinyModule } from '../../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../../harness/registry.ts';
import { nodeBinary } from '../../harness/node-binary.ts';

const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet.mjs');
const AUTH = { username: 'pusher', password: 'p4ss' };
let reg: TestRegistry;
let secured: TestRegistry;
const dirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'nodelet-push-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  [reg, secured] = await Promise.all([startRegistry(), startRegistry({ auth: AUTH })]);
});
afterAll(async () => {
  await Promise.all([reg?.stop(), secured?.stop()]);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const req: ImageRequest = { pullPolicy: 'Always', credentials: [], acceptLayerTypes: WASM_LAYER_TYPES };
async function manifestOf(host: string, repo: string, tag: string, auth?: typeof AUTH) {
  const headers: Record<string, string> = { Accept: 'application/vnd.oci.image.manifest.v1+json' };
  if (auth) headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return (await fetch(`http://${host}/v2/${repo}/manifests/${tag}`, { headers })).json() as Promise<Record<string, unknown>>;
}

describe('pushWasmModule', () => {
  it('publishes a CNCF Wasm artifact that the image service pulls back byte for byte', async () => {
    const mod = tinyModule('pushed');
    const r = await pushWasmModule(parseReference(`${reg.host}/pub/hello:v1`), mod);
    expect(r.moduleDigest).toBe(sha256(mod));
    const m = await manifestOf(reg.host, 'pub/hello', 'v1');
    expect(m).toMatchObject({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      artifactType: 'application/vnd.wasm.config.v0+json',
      config: { mediaType: 'application/vnd.wasm.config.v0+json' },
      layers: [{ mediaType: 'application/wasm', digest: sha256(mod), size: mod.length }],
    });
    const root = await tmp();
    const img = await (await OciImageService.open({ rootDir: root })).pull(`${reg.host}/pub/hello:v1`, req);
    expect(img.digest).toBe(r.digest);
    expect(await readFile(img.path)).toEqual(mod);
  });

  it('marks a WASI 0.2 component os wasip2 in its config (a core module wasip1), as wkg does', async () => {
    const component = Buffer.concat([Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]), Buffer.from('component')]);
    await pushWasmModule(parseReference(`${reg.host}/pub/comp:v1`), component);
    await pushWasmModule(parseReference(`${reg.host}/pub/mod:v1`), tinyModule('module'));
    const configOf = async (repo: string) => {
      const m = (await manifestOf(reg.host, repo, 'v1')) as { config: { digest: string } };
      return (await fetch(`http://${reg.host}/v2/${repo}/blobs/${m.config.digest}`)).json();
    };
    expect(await configOf('pub/comp')).toEqual({ architecture: 'wasm', os: 'wasip2', layerDigests: [sha256(component)] });
    expect(await configOf('pub/mod')).toMatchObject({ os: 'wasip1' });
  });

  it('uploads a large module in chunks with progress, and skips blobs the registry already has', async () => {
    const mod = Buffer.concat([tinyModule(), Buffer.alloc(10_000, 7)]);
    const progress: PushProgress[] = [];
    const before = (await reg.requests()).length;
    const r = await pushWasmModule(parseReference(`${reg.host}/pub/big:v1`), mod, { chunkBytes: 4096, onProgress: (p) => progress.push(p) });
    expect(progress.map((p) => p.sentBytes)).toEqual([4096, 8192, mod.length]);
    expect(progress.every((p) => p.totalBytes === mod.length && p.digest === sha256(mod))).toBe(true);
    const patches = (await reg.requests()).slice(before).filter((e) => e.method === 'PATCH');
    expect(patches).toHaveLength(3);
    expect(r.skipped).toEqual([]);
    const again = await pushWasmModule(parseReference(`${reg.host}/pub/big:v2`), mod, { chunkBytes: 4096 });
    expect(again.skipped).toHaveLength(2);
    expect(again.digest).toBe(r.digest);
  });

  it('refuses a file that is not Wasm, and a pinned digest that does not match', async () => {
    await expect(pushWasmModule(parseReference(`${reg.host}/pub/x:v1`), Buffer.from('#!/bin/sh'))).rejects.toThrow(/not a WebAssembly module/);
    await expect(pushWasmModule(parseReference(`${reg.host}/pub/x@sha256:${'0'.repeat(64)}`), tinyModule())).rejects.toThrow(
      /the manifest to push has digest sha256:/,
    );
  });

  it("uses basic auth, and without credentials fails with the registry's reason", async () => {
    const ref = parseReference(`${secured.host}/team/app:v1`);
    await expect(pushWasmModule(ref, tinyModule())).rejects.toThrow(/^unauthorized: authentication required \(HEAD blobs\/sha256:[0-9a-f]{64}: HTTP 401\)$/);
    const r = await pushWasmModule(ref, tinyModule('secured'), { credential: { registry: secured.host, ...AUTH } });
    expect((await manifestOf(secured.host, 'team/app', 'v1', AUTH)).layers).toEqual([
      { mediaType: 'application/wasm', digest: sha256(tinyModule('secured')), size: tinyModule('secured').length },
    ]);
    expect(r.imageID).toBe(`${secured.host}/team/app@${r.digest}`);
  });
});

describe('docker config credentials', () => {
  it('reads auths from $DOCKER_CONFIG/config.json: auth base64 and username/password', async () => {
    const dir = await tmp();
    await writeFile(
      join(dir, 'config.json'),
      JSON.stringify({
        auths: {
          'a.example:5000': { auth: Buffer.from('u1:p:1').toString('base64') },
          'https://index.docker.io/v1/': { username: 'u2', password: 'p2' },
        },
      }),
    );
    expect(await dockerConfigCredentials({ DOCKER_CONFIG: dir })).toEqual([
      { registry: 'a.example:5000', username: 'u1', password: 'p:1', token: undefined },
      { registry: 'docker.io', username: 'u2', password: 'p2', token: undefined },
    ]);
    expect(await dockerConfigCredentials({ DOCKER_CONFIG: join(dir, 'none') })).toEqual([]);
    await writeFile(join(dir, 'config.json'), '{');
    await expect(dockerConfigCredentials({ DOCKER_CONFIG: dir })).rejects.toThrow(/config.json is not valid JSON/);
  });
});

describe('nodelet push / nodelet pull', () => {
  const run = (args: string[], env: Record<string, string>) =>
    promisify(execFile)(nodeBinary(), [BIN, ...args], { env: { ...process.env, ...env } }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it('pushes with ~/.docker credentials showing chunk progress, then pulls into a root dir printing the same digest', async () => {
    const cfg = await tmp();
    await writeFile(
      join(cfg, 'config.json'),
      JSON.stringify({ auths: { [secured.host]: { auth: Buffer.from(`${AUTH.username}:${AUTH.password}`).toString('base64') } } }),
    );
    const file = join(cfg, 'm.wasm');
    const mod = Buffer.concat([tinyModule('cli'), Buffer.alloc(3000, 1)]);
    await writeFile(file, mod);
    const ref = `${secured.host}/cli/mod:v1`;
    const push = await run(['push', file, ref, '--chunk-size=1024'], { DOCKER_CONFIG: cfg });
    const progress = push.stderr.split('\n').filter((l) => l.startsWith('pushing '));
    const pct = (n: number) => Math.floor((n * 100) / mod.length);
    expect(progress).toEqual(
      [
        [1024, '1.0'],
        [2048, '2.0'],
        [mod.length, '2.9'],
      ].map(([n, k]) => `pushing ${sha256(mod).slice(0, 19)}: ${k} KiB / 2.9 KiB (${pct(n as number)}%)`),
    );
    expect(push.stderr).toContain(`pushed ${ref} (${mod.length} bytes)`);
    expect(push.code).toBe(0);
    const digest = push.stdout.trim();
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const root = await tmp();
    const pull = await run(['pull', ref, `--root-dir=${root}`], { DOCKER_CONFIG: cfg });
    expect(pull.code).toBe(0);
    expect(pull.stdout.trim()).toBe(digest);
    expect(
      pull.stderr
        .split('\n')
        .filter((l) => l.startsWith('pulling '))
        .at(-1),
    ).toBe(`pulling ${sha256(mod).slice(0, 19)}: 2.9 KiB / 2.9 KiB (100%)`);
    expect(await readFile(join(root, 'images', 'blobs', 'sha256', sha256(mod).slice(7)))).toEqual(mod);

    // On a TTY (util-linux `script` gives the command a pseudo-terminal) progress is one line rewritten in place.
    const ttyRoot = await tmp();
    const cmd = [nodeBinary(), BIN, 'pull', ref, `--root-dir=${ttyRoot}`].map((a) => `'${a}'`).join(' ');
    const tty = await promisify(execFile)('script', ['-qefc', cmd, '/dev/null'], { env: { ...process.env, DOCKER_CONFIG: cfg } });
    expect(tty.stdout).toMatch(new RegExp(`\\rpulling ${sha256(mod).slice(0, 19)}: [0-9.]+ KiB / 2\\.9 KiB \\(100%\\)\\r?\\n`));
    expect(tty.stdout).toContain(digest);
  });

  it('push --help and pull --help print usage and exit 0; an unknown flag names itself and exits 2', async () => {
    for (const cmd of ['push', 'pull']) {
      const help = await run([cmd, '--help'], {});
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: nodelet ${cmd} `));
      expect(help.stdout).toContain('--insecure');
      expect((await run([cmd, '-h'], {})).stdout).toBe(help.stdout);
      const bad = await run([cmd, '--bogus'], {});
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(`nodelet ${cmd}: unexpected argument: Unknown option '--bogus'`);
      expect(bad.stderr).toContain(`Run "nodelet ${cmd} --help" for usage.`);
    }
  });

  it("fails with exit 1 and the registry's reason without credentials; bad usage exits 2", async () => {
    const empty = await tmp();
    const pull = await run(['pull', `${secured.host}/cli/mod:v1`, `--root-dir=${empty}`], { DOCKER_CONFIG: empty });
    expect(pull.code).toBe(1);
    expect(pull.stderr).toContain(`nodelet pull: failed to pull image "${secured.host}/cli/mod:v1": unauthorized: authentication required`);
    const usage = await run(['push', 'only-one-arg'], { DOCKER_CONFIG: empty });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: nodelet push <module.wasm> <ref>');
  });
});
