/**
 * Drop-in providers end to end: one providers directory holds the WASI
 * provider, the out-of-tree example provider (`examples/provider-js`) and three
 * broken packages. nodelet starts, reports each broken one with its catalogued
 * code, and runs pods of two RuntimeClasses side by side on one node, each on
 * its own provider; a class whose handler nobody serves fails admission.
 * The example provider is plain JavaScript: nodelet (built, run by plain node)
 * loads it with no TypeScript loader anywhere.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pushImage } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady, podUntil } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const REPO = resolve(import.meta.dirname, '..', '..');
const JS_MODULE = 'console.log(`js says ${process.argv.slice(2).join(" ")} as ${process.env.WHO}`); process.exit(Number(process.env.CODE ?? 0));';

/** A broken provider package in `dir/name`. */
function badProvider(dir: string, name: string, files: Record<string, string>): void {
  mkdirSync(join(dir, name));
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, name, f), text);
}

describe('drop-in providers routed by RuntimeClass', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'prov-n1';
  const suffix = Math.random().toString(36).slice(2, 7);
  const rc = { wasi: `wasi-${suffix}`, js: `js-${suffix}`, none: `runsc-${suffix}` };
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let providersDir: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    img.hello = await pushModule(reg, 'hello');
    await pushImage(
      reg.host,
      'js-hello',
      'v1',
      { mediaType: 'application/vnd.oci.empty.v1+json', bytes: Buffer.from('{}') },
      [{ mediaType: 'text/javascript', bytes: Buffer.from(JS_MODULE) }],
      { artifactType: 'application/vnd.nodelet.js.v1' },
    );
    img.js = `${reg.host}/js-hello:v1`;
    providersDir = mkdtempSync(join(tmpdir(), 'nodelet-providers-'));
    symlinkSync(join(REPO, 'providers', 'wasi'), join(providersDir, 'wasi'));
    symlinkSync(join(REPO, 'examples', 'provider-js'), join(providersDir, 'js'));
    const manifest = (name: string, apiVersion = 'nodelet.dev/v1') =>
      JSON.stringify({ name, nodelet: { apiVersion, entry: './index.mjs', handlers: [name.replace(/^@bad\//, '')] } });
    badProvider(providersDir, 'old-api', { 'package.json': manifest('@bad/old-api', 'nodelet.dev/v0'), 'index.mjs': 'export default () => ({});' });
    badProvider(providersDir, 'throws', { 'package.json': manifest('@bad/throws'), 'index.mjs': 'throw new Error("cannot load me");' });
    badProvider(providersDir, 'bad-json', { 'package.json': '{ "name": "@bad/bad-json", "nodelet": {', 'index.mjs': '' });
    for (const [name, handler] of [
      [rc.wasi, 'wasi'],
      [rc.js, 'js'],
      [rc.none, 'runsc'],
    ] as const) {
      await k.node.createRuntimeClass({ body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, handler } });
    }
    nodelet = await startNodelet(info, nodeName, [`--providers-dir=${providersDir}`]);
    ns = await podNamespace(k.core, 'providers');
    await waitNodeReady(k.core, nodeName);
  });

  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
    for (const name of Object.values(rc)) await k.node.deleteRuntimeClass({ name }).catch(() => undefined);
    if (providersDir) rmSync(providersDir, { recursive: true, force: true });
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name }, spec: { nodeName, tolerations: [WASM_TOLERATION], restartPolicy: 'Never', containers: [], ...spec } as V1PodSpec },
    });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 90_000) => podUntil(k.core, ns, name, what, ok, ms);
  const finished = (p: V1Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

  it('reports each broken provider package with its catalogued code, in the log and as Node events', async () => {
    const msgs = await eventually('provider failures logged', async () => {
      const lines = readFileSync(nodelet.logFile, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'));
      const all = lines.map((l) => (JSON.parse(l) as { msg?: string }).msg ?? '');
      return all.some((m) => m === 'provider loaded') ? all.filter((m) => m.startsWith('provider skipped: ')) : undefined;
    });
    expect(msgs).toHaveLength(3);
    expect(msgs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^provider skipped: NDL_PROVIDER_API_VERSION: .*@bad\/old-api declares apiVersion "nodelet.dev\/v0"/),
        expect.stringMatching(/^provider skipped: NDL_PROVIDER_IMPORT: .*@bad\/throws: cannot load me$/),
        expect.stringMatching(/^provider skipped: NDL_PROVIDER_MANIFEST_INVALID: .*bad-json\/package.json is not valid JSON/),
      ]),
    );
    const events = await eventually('ProviderLoadFailed events', async () => {
      const list = await k.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${nodeName},reason=ProviderLoadFailed` });
      return list.items.length >= 3 ? list.items : undefined;
    });
    expect(events.map((e) => e.message!.split(':')[0]).sort()).toEqual(['NDL_PROVIDER_API_VERSION', 'NDL_PROVIDER_IMPORT', 'NDL_PROVIDER_MANIFEST_INVALID']);
  });

  it('runs a Wasm pod and a JavaScript pod on the same node, each on its own provider', async () => {
    const jsPackage = readdirSync(join(REPO, 'examples', 'provider-js'), { recursive: true, encoding: 'utf8' });
    expect(jsPackage.filter((f) => /\.[mc]?tsx?$/.test(f))).toEqual([]); // a plain-JavaScript drop-in package
    await create('wasm', { runtimeClassName: rc.wasi, containers: [{ name: 'main', image: img.hello, args: ['from wasm'] }] });
    await create('js', { runtimeClassName: rc.js, containers: [{ name: 'main', image: img.js, args: ['hello'], env: [{ name: 'WHO', value: 'a worker' }] }] });
    await create('js-fails', { runtimeClassName: rc.js, containers: [{ name: 'main', image: img.js, env: [{ name: 'CODE', value: '4' }] }] });
    const wasm = await until('wasm', 'finished', finished);
    const js = await until('js', 'finished', finished);
    const jsFails = await until('js-fails', 'finished', finished);
    expect(wasm.status?.phase).toBe('Succeeded');
    expect(wasm.status?.containerStatuses?.[0]?.containerID).toMatch(/^wasi:\/\//);
    expect(js.status?.phase).toBe('Succeeded');
    expect(js.status?.containerStatuses?.[0]?.containerID).toMatch(/^js:\/\//);
    expect(jsFails.status?.phase).toBe('Failed');
    expect(jsFails.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 4, reason: 'Error' });
    const out = await k.core.readNamespacedPodLog({ name: 'js', namespace: ns });
    expect(out).toBe('js says hello as a worker\n');
    // nodelet runs on Node 24 and logs each field once (the kubelet API's request lines included).
    const lines = readFileSync(nodelet.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'));
    expect(JSON.parse(lines.find((l) => l.includes('"starting nodelet"'))!)).toMatchObject({ nodeVersion: expect.stringMatching(/^v24\./) });
    const api = lines.filter((l) => l.includes('"component":"kubelet-api"'));
    expect(api.length).toBeGreaterThan(0);
    for (const l of api) expect(l.match(/"component":/g)).toHaveLength(1);
  });

  it('fails a pod whose RuntimeClass handler no provider serves with UnsupportedRuntimeClass', async () => {
    await create('nowhere', { runtimeClassName: rc.none, containers: [{ name: 'main', image: img.hello }] });
    const p = await until('nowhere', 'Failed', (p) => p.status?.phase === 'Failed');
    expect(p.status?.reason).toBe('UnsupportedRuntimeClass');
    expect(p.status?.message).toBe(
      `Pod was rejected: RuntimeClass "${rc.none}" has handler "runsc", which no provider on this node serves (handlers served: js, spin, wasi)`,
    );
  });
});
