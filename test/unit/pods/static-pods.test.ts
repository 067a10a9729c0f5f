import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isImagePull, isProviderError } from '../../../plugin-api/v1/index.ts';
import { readStaticPod, readStaticPods } from '../../../core/pods/sources/static-pod-source.ts';
import { openImageService } from '../../../core/images/local-images.ts';
import type { NodeletOptions } from '../../../core/config/options.ts';
import { memoryLogger } from './fakes.ts';

const base = mkdtempSync(join(tmpdir(), 'nodelet-static-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const freshDir = () => { const d = join(base, `m${n++}`); mkdirSync(d); return d; };

const manifest = (name: string, image = 'registry.test/app:v1', extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
${extra}spec:
  containers:
  - name: main
    image: ${image}
`;

describe('readStaticPod', () => {
  it('suffixes the name with the node, defaults the namespace and fills upstream defaults', () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'web.yaml'), manifest('web'));
    const p = readStaticPod(join(dir, 'web.yaml'), 'node-a');
    expect(p.metadata).toMatchObject({ name: 'web-node-a', namespace: 'default', annotations: { 'kubernetes.io/config.source': 'file' } });
    expect(p.metadata!.annotations!['kubernetes.io/config.hash']).toMatch(/^[0-9a-f]{32}$/);
    expect(p.spec).toMatchObject({ nodeName: 'node-a', restartPolicy: 'Always', terminationGracePeriodSeconds: 30 });
  });

  it('keeps a namespace and a restart policy given in the manifest', () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'a.yaml'), manifest('a', 'x:v1', '  namespace: tools\n').replace('spec:\n', 'spec:\n  restartPolicy: Never\n'));
    const p = readStaticPod(join(dir, 'a.yaml'), 'n');
    expect(p.metadata!.namespace).toBe('tools');
    expect(p.spec!.restartPolicy).toBe('Never');
  });

  it('derives a stable UID from file and content that changes when the content does', () => {
    const dir = freshDir();
    const f = join(dir, 'web.yaml');
    writeFileSync(f, manifest('web'));
    const a = readStaticPod(f, 'node-a').metadata!.uid;
    expect(readStaticPod(f, 'node-a').metadata!.uid).toBe(a);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    writeFileSync(f, manifest('web', 'registry.test/app:v2'));
    expect(readStaticPod(f, 'node-a').metadata!.uid).not.toBe(a);
    const g = join(dir, 'copy.yaml');
    writeFileSync(g, manifest('web'));
    expect(readStaticPod(g, 'node-a').metadata!.uid).not.toBe(a);
  });

  it('resolves relative file: images against the manifest directory and leaves others alone', () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'p.yaml'), `kind: Pod
metadata: {name: p}
spec:
  initContainers: [{name: i, image: "file:init.wasm"}]
  containers:
  - {name: a, image: "file:mods/a.wasm"}
  - {name: b, image: "file:///opt/b.wasm"}
  - {name: c, image: "registry.test/c:v1"}
`);
    const p = readStaticPod(join(dir, 'p.yaml'), 'n');
    expect(p.spec!.containers.map((c) => c.image)).toEqual([`file://${dir}/mods/a.wasm`, 'file:///opt/b.wasm', 'registry.test/c:v1']);
    expect(p.spec!.initContainers![0]!.image).toBe(`file://${dir}/init.wasm`);
  });

  it('reads JSON manifests', () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'j.json'), JSON.stringify({ kind: 'Pod', metadata: { name: 'j' }, spec: { containers: [{ name: 'm', image: 'x:v1' }] } }));
    expect(readStaticPod(join(dir, 'j.json'), 'n').metadata!.name).toBe('j-n');
  });

  it.each([
    ['not a pod', 'kind: Service\nmetadata: {name: s}\n'],
    ['no name', 'kind: Pod\nspec: {containers: [{name: a, image: x}]}\n'],
    ['no containers', 'kind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n'],
    ['empty file', ''],
  ])('rejects %s with NDL_POD_INVALID', (_what, text) => {
    const dir = freshDir();
    writeFileSync(join(dir, 'bad.yaml'), text);
    expect(() => readStaticPod(join(dir, 'bad.yaml'), 'n')).toThrow(/bad\.yaml: expected a Pod with metadata\.name and at least one container/);
  });
});

describe('readStaticPods', () => {
  it('reads .yaml/.yml/.json files in name order; skips other files, directories and invalid manifests with a log line', () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'b.yml'), manifest('b'));
    writeFileSync(join(dir, 'a.yaml'), manifest('a'));
    writeFileSync(join(dir, 'c.json'), JSON.stringify({ kind: 'Pod', metadata: { name: 'c' }, spec: { containers: [{ name: 'm', image: 'x:v1' }] } }));
    writeFileSync(join(dir, 'broken.yaml'), 'kind: Pod\nmetadata: [unclosed\n');
    writeFileSync(join(dir, 'notes.txt'), manifest('txt'));
    mkdirSync(join(dir, 'sub.yaml'));
    symlinkSync(join(dir, 'gone.yaml'), join(dir, 'dangling.yaml'));
    const lines: string[] = [];
    const pods = readStaticPods(dir, 'node-a', memoryLogger(lines));
    expect(pods.map((p) => p.metadata!.name)).toEqual(['a-node-a', 'b-node-a', 'c-node-a']);
    const errors = lines.filter((l) => l.startsWith('error'));
    expect(errors).toEqual([expect.stringContaining('invalid static pod manifest skipped'), expect.stringContaining('invalid static pod manifest skipped')]);
    expect(errors.join('\n')).toContain('broken.yaml');
    expect(errors.join('\n')).toContain('dangling.yaml');
  });

  it('logs and returns nothing for a missing directory', () => {
    const lines: string[] = [];
    expect(readStaticPods(join(base, 'absent'), 'n', memoryLogger(lines))).toEqual([]);
    expect(lines).toEqual([expect.stringContaining('cannot read pod manifest path')]);
  });
});

describe('file:// images (local-images)', () => {
  const root = freshDir();
  const manifests = join(root, 'manifests');
  const outside = join(root, 'outside');
  mkdirSync(join(manifests, 'mods'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(manifests, 'mods', 'app.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  writeFileSync(join(outside, 'secret.wasm'), 'host file');
  symlinkSync(join(outside, 'secret.wasm'), join(manifests, 'link.wasm'));
  const opts = (podManifestPath?: string) => ({ rootDir: join(root, 'state'), insecureRegistries: [], podManifestPath }) as unknown as NodeletOptions;
  const req = { pullPolicy: 'IfNotPresent' as const, credentials: [], acceptLayerTypes: [] };

  it('pulls a module inside the manifest directory, with digest and size', async () => {
    const svc = await openImageService(opts(manifests), memoryLogger());
    const image = `file://${manifests}/mods/app.wasm`;
    const got = await svc.pull(image, req);
    expect(got).toMatchObject({ image, path: join(manifests, 'mods', 'app.wasm'), size: 8, cached: true });
    expect(got.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(got.imageID).toBe(`${image}@${got.digest}`);
  });

  it.each([
    ['a file outside the directory', () => `file://${outside}/secret.wasm`, /must be inside the pod manifest directory/],
    ['a `..` path leaving the directory', () => `file://${manifests}/../outside/secret.wasm`, /must be inside the pod manifest directory/],
    ['a symlink pointing outside', () => `file://${manifests}/link.wasm`, /must be inside the pod manifest directory/],
    ['a missing file', () => `file://${manifests}/nope.wasm`, /no such file/],
  ])('refuses %s with a branded ImagePull error', async (_what, image, msg) => {
    const svc = await openImageService(opts(manifests), memoryLogger());
    const err = await svc.pull(image(), req).catch((e: unknown) => e);
    expect(isProviderError(err) && isImagePull(err)).toBe(true);
    expect((err as Error).message).toMatch(msg);
    expect((err as { reason: string }).reason).toBe('ErrImagePull');
  });

  it('refuses file:// images entirely without --pod-manifest-path', async () => {
    const svc = await openImageService(opts(undefined), memoryLogger());
    await expect(svc.pull(`file://${manifests}/mods/app.wasm`, req)).rejects.toThrow(/only allowed for static pods/);
  });
});
