import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
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
const freshDir = () => {
  const d = join(base, `m${n++}`);
  mkdirSync(d);
  return d;
};

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
  it('suffixes the name with the node, defaults the namespace and fills upstream defaults', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'web.yaml'), manifest('web'));
    const p = await readStaticPod(join(dir, 'web.yaml'), 'node-a');
    expect(p.metadata).toMatchObject({ name: 'web-node-a', namespace: 'default', annotations: { 'kubernetes.io/config.source': 'file' } });
    expect(p.metadata!.annotations!['kubernetes.io/config.hash']).toMatch(/^[0-9a-f]{32}$/);
    expect(p.spec).toMatchObject({ nodeName: 'node-a', restartPolicy: 'Always', terminationGracePeriodSeconds: 30 });
  });

  it('keeps a namespace and a restart policy given in the manifest', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'a.yaml'), manifest('a', 'x:v1', '  namespace: tools\n').replace('spec:\n', 'spec:\n  restartPolicy: Never\n'));
    const p = await readStaticPod(join(dir, 'a.yaml'), 'n');
    expect(p.metadata!.namespace).toBe('tools');
    expect(p.spec!.restartPolicy).toBe('Never');
  });

  it('derives a stable UID from file and content that changes when the content does', async () => {
    const dir = freshDir();
    const f = join(dir, 'web.yaml');
    writeFileSync(f, manifest('web'));
    const a = (await readStaticPod(f, 'node-a')).metadata!.uid;
    expect((await readStaticPod(f, 'node-a')).metadata!.uid).toBe(a);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    writeFileSync(f, manifest('web', 'registry.test/app:v2'));
    expect((await readStaticPod(f, 'node-a')).metadata!.uid).not.toBe(a);
    const g = join(dir, 'copy.yaml');
    writeFileSync(g, manifest('web'));
    expect((await readStaticPod(g, 'node-a')).metadata!.uid).not.toBe(a);
  });

  it('resolves relative file: images against the manifest directory and leaves others alone', async () => {
    const dir = freshDir();
    writeFileSync(
      join(dir, 'p.yaml'),
      `kind: Pod
metadata: {name: p}
spec:
  initContainers: [{name: i, image: "file:init.wasm"}]
  containers:
  - {name: a, image: "file:mods/a.wasm"}
  - {name: b, image: "file:///opt/b.wasm"}
  - {name: c, image: "registry.test/c:v1"}
`,
    );
    const p = await readStaticPod(join(dir, 'p.yaml'), 'n');
    expect(p.spec!.containers.map((c) => c.image)).toEqual([`file://${dir}/mods/a.wasm`, 'file:///opt/b.wasm', 'registry.test/c:v1']);
    expect(p.spec!.initContainers![0]!.image).toBe(`file://${dir}/init.wasm`);
  });

  it('reads JSON manifests', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'j.json'), JSON.stringify({ kind: 'Pod', metadata: { name: 'j' }, spec: { containers: [{ name: 'm', image: 'x:v1' }] } }));
    expect((await readStaticPod(join(dir, 'j.json'), 'n')).metadata!.name).toBe('j-n');
  });

  it.each([
    ['not a pod', 'kind: Service\nmetadata: {name: s}\n'],
    ['no name', 'kind: Pod\nspec: {containers: [{name: a, image: x}]}\n'],
    ['no containers', 'kind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n'],
    ['empty file', ''],
  ])('rejects %s with NDL_POD_INVALID', async (_what, text) => {
    const dir = freshDir();
    writeFileSync(join(dir, 'bad.yaml'), text);
    await expect(readStaticPod(join(dir, 'bad.yaml'), 'n')).rejects.toThrow(/bad\.yaml: expected a Pod with metadata\.name and at least one container/);
  });
});

describe('readStaticPods', () => {
  it('reads .yaml/.yml/.json files in name order; skips other files, directories and invalid manifests with a log line', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'b.yml'), manifest('b'));
    writeFileSync(join(dir, 'a.yaml'), manifest('a'));
    writeFileSync(join(dir, 'c.json'), JSON.stringify({ kind: 'Pod', metadata: { name: 'c' }, spec: { containers: [{ name: 'm', image: 'x:v1' }] } }));
    writeFileSync(join(dir, 'broken.yaml'), 'kind: Pod\nmetadata: [unclosed\n');
    writeFileSync(join(dir, 'notes.txt'), manifest('txt'));
    mkdirSync(join(dir, 'sub.yaml'));
    symlinkSync(join(dir, 'gone.yaml'), join(dir, 'dangling.yaml'));
    const lines: string[] = [];
    const { pods, refused } = await readStaticPods(dir, 'node-a', memoryLogger(lines));
    expect(refused.map((r) => r.file)).toEqual([join(dir, 'broken.yaml'), join(dir, 'dangling.yaml')]);
    expect(pods.map((p) => p.metadata!.name)).toEqual(['a-node-a', 'b-node-a', 'c-node-a']);
    const errors = lines.filter((l) => l.startsWith('error'));
    expect(errors).toEqual([expect.stringContaining('invalid static pod manifest skipped'), expect.stringContaining('invalid static pod manifest skipped')]);
    expect(errors.join('\n')).toContain('broken.yaml');
    expect(errors.join('\n')).toContain('dangling.yaml');
  });

  it('logs and returns nothing for a missing directory', async () => {
    const lines: string[] = [];
    expect(await readStaticPods(join(base, 'absent'), 'n', memoryLogger(lines))).toEqual({ pods: [], refused: [] });
    expect(lines).toEqual([expect.stringContaining('cannot read pod manifest path')]);
  });
});

describe('hostile manifest paths', () => {
  const mkfifo = (p: string) => execFileSync('mkfifo', [p]);

  it('accepts a single manifest file as the path, like upstream', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'only.yaml'), manifest('only'));
    writeFileSync(join(dir, 'other.yaml'), manifest('other'));
    const { pods, refused } = await readStaticPods(join(dir, 'only.yaml'), 'node-a', memoryLogger());
    expect(pods.map((p) => p.metadata!.name)).toEqual(['only-node-a']);
    expect(refused).toEqual([]);
  });

  it('never opens a FIFO: as the path, in the directory, or behind a symlink', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'a.yaml'), manifest('a'));
    mkfifo(join(dir, 'pipe.yaml'));
    symlinkSync(join(dir, 'pipe.yaml'), join(dir, 'via-link.yaml'));
    const lines: string[] = [];
    const { pods, refused } = await readStaticPods(dir, 'n', memoryLogger(lines));
    expect(pods.map((p) => p.metadata!.name)).toEqual(['a-n']);
    expect(refused).toEqual([
      { file: join(dir, 'pipe.yaml'), message: `${join(dir, 'pipe.yaml')}: not a regular file` },
      { file: join(dir, 'via-link.yaml'), message: `${join(dir, 'via-link.yaml')}: not a regular file` },
    ]);
    const alone = await readStaticPods(join(dir, 'pipe.yaml'), 'n', memoryLogger(lines));
    expect(alone).toEqual({ pods: [], refused: [] });
    expect(lines.at(-1)).toContain('path is not a directory or file');
  });

  it("refuses a manifest over upstream's 10 MiB limit without reading it", async () => {
    const dir = freshDir();
    const big = join(dir, 'big.yaml');
    writeFileSync(big, manifest('big'));
    truncateSync(big, 50 << 20);
    const { pods, refused } = await readStaticPods(dir, 'n', memoryLogger());
    expect(pods).toEqual([]);
    expect(refused).toEqual([{ file: big, message: `${big}: ${50 << 20} bytes exceeds the ${10 << 20} byte limit` }]);
  });

  it('applies upstream pod validation before anything else', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'a-upper.yaml'), manifest('Bad_Name'));
    writeFileSync(join(dir, 'b-dots.yaml'), manifest('..'));
    writeFileSync(join(dir, 'c-long.yaml'), manifest('x'.repeat(250)));
    writeFileSync(join(dir, 'd-dup.yaml'), 'kind: Pod\nmetadata: {name: d}\nspec:\n  containers: [{name: a, image: x}, {name: a, image: y}]\n');
    writeFileSync(join(dir, 'e-ns.yaml'), manifest('e', 'x:v1', '  namespace: ../../etc\n'));
    writeFileSync(join(dir, 'f-cname.yaml'), 'kind: Pod\nmetadata: {name: f}\nspec:\n  containers: [{name: "../x", image: x}]\n  restartPolicy: Sometimes\n');
    writeFileSync(join(dir, 'g-ok.yaml'), manifest('fine', 'x:v1', '  labels: {app: web, "example.com/tier": front}\n'));
    writeFileSync(join(dir, 'h-labels.yaml'), manifest('h', 'x:v1', '  labels: {"bad key!": x, ok: "../v"}\n  annotations: {"/nope": y}\n'));
    const { pods, refused } = await readStaticPods(dir, 'node-a', memoryLogger());
    expect(pods.map((p) => p.metadata!.name)).toEqual(['fine-node-a']);
    const why = Object.fromEntries(refused.map((r) => [r.file.slice(dir.length + 1), r.message.slice(r.file.length + 2)]));
    expect(why['a-upper.yaml']).toMatch(/^invalid pod: \[metadata\.name: Invalid value: "Bad_Name-node-a": a lowercase RFC 1123 subdomain/);
    expect(why['b-dots.yaml']).toMatch(/^invalid pod: \[metadata\.name: Invalid value: "\.\.-node-a"/);
    expect(why['c-long.yaml']).toMatch(/metadata\.name: Invalid value: "x+"\.\.\.: must be no more than 253 characters/);
    expect(why['d-dup.yaml']).toBe('invalid pod: [spec.containers[1].name: Duplicate value: "a"]');
    expect(why['e-ns.yaml']).toMatch(/metadata\.namespace: Invalid value: "\.\.\/\.\.\/etc"/);
    expect(why['h-labels.yaml']).toBe(
      'invalid pod: [metadata.labels: Invalid value: label key "bad key!": name must be alphanumerics, "-", "_" and ".", starting and ending with an alphanumeric, ' +
        'metadata.labels: Invalid value: label value "../v": must be alphanumerics, "-", "_" and ".", starting and ending with an alphanumeric, ' +
        'metadata.annotations: Invalid value: annotation key "/nope": prefix must be 1-253 characters]',
    );
    expect(why['f-cname.yaml']).toMatch(/spec\.containers\[0\]\.name: Invalid value: "\.\.\/x".*spec\.restartPolicy: Unsupported value: "Sometimes"/);
  });
});

describe('static pods may not reference API objects (PreventStaticPodAPIReferences)', () => {
  const spec = (extra: string) => `kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n${extra}`;
  it.each([
    ['a service account', '  serviceAccountName: builder\n', 'static pods may not reference serviceaccounts'],
    ['a secret env var', '    env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n', 'static pods may not reference secrets'],
    ['image pull secrets', '  imagePullSecrets: [{name: regcred}]\n', 'static pods may not reference secrets'],
    ['a config map envFrom', '    envFrom: [{configMapRef: {name: c}}]\n', 'static pods may not reference configmaps'],
    ['a PVC volume', '  volumes: [{name: v, persistentVolumeClaim: {claimName: c}}]\n', 'static pods may not reference persistentvolumeclaims'],
    [
      'a projected token',
      '  volumes: [{name: v, projected: {sources: [{serviceAccountToken: {path: t}}]}}]\n',
      'static pods may not reference serviceaccounts (via projected volumes)',
    ],
    ['a CSI volume', '  volumes: [{name: v, csi: {driver: d}}]\n', 'static pods may not reference csidrivers (via CSI volumes)'],
    ['an unknown volume type', '  volumes: [{name: v, madeUp: {}}]\n', 'unknown volume type for volume "v"'],
  ])('refuses %s', async (_what, extra, message) => {
    const dir = freshDir();
    writeFileSync(join(dir, 'p.yaml'), spec(extra));
    await expect(readStaticPod(join(dir, 'p.yaml'), 'n')).rejects.toThrow(`p.yaml: ${message}`);
  });

  it('accepts local volumes and downward API projections', async () => {
    const dir = freshDir();
    writeFileSync(
      join(dir, 'p.yaml'),
      spec(
        '  volumes: [{name: e, emptyDir: {}}, {name: h, hostPath: {path: /tmp}}, {name: d, projected: {sources: [{downwardAPI: {items: [{path: n, fieldRef: {fieldPath: metadata.name}}]}}]}}]\n',
      ),
    );
    expect((await readStaticPod(join(dir, 'p.yaml'), 'n')).spec!.volumes).toHaveLength(3);
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

  it('refuses a FIFO as a module without blocking, and serves modules beside a single manifest file', async () => {
    const fifo = join(manifests, 'mods', 'pipe.wasm');
    execFileSync('mkfifo', [fifo]);
    // If a regression opened the FIFO for reading, this writer would unblock it after a while.
    const writer = spawn('timeout', ['10', 'sh', '-c', `sleep 5; printf x > ${fifo}`], { stdio: 'ignore' });
    try {
      const svc = await openImageService(opts(manifests), memoryLogger());
      const err = await svc.pull(`file://${fifo}`, req).catch((e: unknown) => e);
      expect((err as Error).message).toBe(`failed to pull image "file://${fifo}": not a regular file`);
    } finally {
      writer.kill();
    }
    writeFileSync(join(manifests, 'pod.yaml'), manifest('p'));
    const single = await openImageService(opts(join(manifests, 'pod.yaml')), memoryLogger());
    expect((await single.pull(`file://${manifests}/mods/app.wasm`, req)).size).toBe(8);
  });

  it('refuses file:// images entirely without --pod-manifest-path', async () => {
    const svc = await openImageService(opts(undefined), memoryLogger());
    await expect(svc.pull(`file://${manifests}/mods/app.wasm`, req)).rejects.toThrow(/only allowed for static pods/);
  });
});
