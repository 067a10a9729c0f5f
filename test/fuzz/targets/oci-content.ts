/**
 * OCI content from a lying registry, pulled by static pods: blobs that do not
 * match their digests, sizes that lie, index loops and deep index chains,
 * unknown media types, bad JSON, stalled and truncated bodies, error statuses,
 * and compat tar layers with `..`, absolute paths, links out of the root, PAX
 * and GNU long-name headers that rename entries out, and lying entry sizes.
 * Some inputs mount the hostile image as an image volume of a pod whose own
 * image is sound (the whole image is then unpacked, not one file extracted).
 * Every pull must end in a precise pull error (or a harmless run); nothing may
 * be written outside the root dir.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { rawTarEntry } from '../../harness/compat-image.ts';
import { ESCAPE_MARKER, type FuzzEnvironment } from '../environment.ts';
import type { LyingRegistry, Stored } from '../lying-registry.ts';
import type { Outcome } from '../outcome.ts';
import { runPodBatches, type PodInput } from '../pod-batch.ts';
import type { Rng } from '../rng.ts';
import { BODIES, wasmModule } from '../wasm-encoder.ts';

const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const INDEX = 'application/vnd.oci.image.index.v1+json';
const CONFIG = 'application/vnd.oci.image.config.v1+json';
const TAR = 'application/vnd.oci.image.layer.v1.tar';
const WASM_LAYER = 'application/wasm';
const WASM_CONFIG = 'application/vnd.wasm.config.v0+json';

const digestOf = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const END = Buffer.alloc(1024);
const OK_MODULE = wasmModule({ start: BODIES.ok() });

/** A PAX extended header (type `x`) setting `path`, then a file entry. */
function paxRenamed(path: string, body: Buffer): Buffer {
  const rec = (k: string, v: string) => {
    const line = ` ${k}=${v}\n`;
    let n = line.length + 1;
    while (`${n}${line}`.length !== n) n = `${n}${line}`.length;
    return `${n}${line}`;
  };
  return Buffer.concat([rawTarEntry('PaxHeaders/app.wasm', Buffer.from(rec('path', path)), { type: 'x' }), rawTarEntry('app.wasm', body)]);
}

/** Hostile layers (uncompressed tar) for a compat image whose entrypoint is /app.wasm. */
const LAYERS: Array<(id: string) => { name: string; tar: Buffer }> = [
  (id) => ({
    name: 'entry ../',
    tar: Buffer.concat([rawTarEntry(`../../../../${ESCAPE_MARKER}-${id}`, Buffer.from('x')), rawTarEntry('app.wasm', OK_MODULE), END]),
  }),
  (id) => ({
    name: 'absolute entry',
    tar: Buffer.concat([rawTarEntry(`/tmp/${ESCAPE_MARKER}-${id}`, Buffer.from('x')), rawTarEntry('app.wasm', OK_MODULE), END]),
  }),
  (id) => ({
    name: 'symlink out, then a file through it',
    tar: Buffer.concat([
      rawTarEntry('l', Buffer.alloc(0), { type: '2', linkName: '/tmp' }),
      rawTarEntry(`l/${ESCAPE_MARKER}-${id}`, Buffer.from('x')),
      rawTarEntry('app.wasm', OK_MODULE),
      END,
    ]),
  }),
  (id) => ({
    name: 'relative symlink out, then a file through it',
    tar: Buffer.concat([
      rawTarEntry('d', Buffer.alloc(0), { type: '2', linkName: '../../../../../../../../tmp' }),
      rawTarEntry(`d/${ESCAPE_MARKER}-${id}`, Buffer.from('x')),
      END,
    ]),
  }),
  () => ({
    name: 'hardlink to /etc/passwd as the entrypoint',
    tar: Buffer.concat([rawTarEntry('app.wasm', Buffer.alloc(0), { type: '1', linkName: '/etc/passwd' }), END]),
  }),
  () => ({
    name: 'symlink entrypoint to /etc/passwd',
    tar: Buffer.concat([rawTarEntry('app.wasm', Buffer.alloc(0), { type: '2', linkName: '/etc/passwd' }), END]),
  }),
  (id) => ({ name: 'PAX path ../', tar: Buffer.concat([paxRenamed(`../../../${ESCAPE_MARKER}-${id}`, OK_MODULE), END]) }),
  (id) => ({
    name: 'GNU long name ../',
    tar: Buffer.concat([
      rawTarEntry('././@LongLink', Buffer.from(`../../../${ESCAPE_MARKER}-${id}\0`), { type: 'L' }),
      rawTarEntry('x', Buffer.from('x')),
      END,
    ]),
  }),
  () => ({ name: 'entry size larger than the layer', tar: Buffer.concat([rawTarEntry('app.wasm', OK_MODULE, { size: 1 << 30 })]) }),
  () => ({ name: 'base-256 size of 2^62', tar: Buffer.concat([rawTarEntry('app.wasm', OK_MODULE, { base256: 1n << 62n }), END]) }),
  () => ({ name: 'bad header checksum', tar: Buffer.concat([rawTarEntry('app.wasm', OK_MODULE, { badChecksum: true }), END]) }),
  () => ({ name: 'device node entry', tar: Buffer.concat([rawTarEntry('dev', Buffer.alloc(0), { type: '3' }), rawTarEntry('app.wasm', OK_MODULE), END]) }),
  () => ({ name: 'fifo entrypoint', tar: Buffer.concat([rawTarEntry('app.wasm', Buffer.alloc(0), { type: '6' }), END]) }),
  () => ({ name: 'no end blocks, truncated mid-body', tar: rawTarEntry('app.wasm', OK_MODULE).subarray(0, 600) }),
];

type Scenario = (reg: LyingRegistry, repo: string, r: Rng, id: string) => string;

function put(reg: LyingRegistry, key: string, s: Stored): void {
  reg.store.set(key, s);
}

/** Stores config + layers + manifest; returns the manifest. */
function image(
  reg: LyingRegistry,
  repo: string,
  layers: Array<{ mediaType: string; bytes: Buffer; lie?: Partial<Stored>; size?: number }>,
  config?: { mediaType: string; bytes: Buffer },
  mediaType = MANIFEST,
) {
  const cfg = config ?? {
    mediaType: CONFIG,
    bytes: Buffer.from(
      JSON.stringify({
        architecture: 'wasm',
        os: 'wasip1',
        config: { Entrypoint: ['/app.wasm'] },
        rootfs: { type: 'layers', diff_ids: layers.map((l) => digestOf(l.bytes)) },
      }),
    ),
  };
  put(reg, `${repo}/blobs/${digestOf(cfg.bytes)}`, { body: cfg.bytes });
  for (const l of layers) put(reg, `${repo}/blobs/${digestOf(l.bytes)}`, { body: l.bytes, ...l.lie });
  const body = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      config: { mediaType: cfg.mediaType, digest: digestOf(cfg.bytes), size: cfg.bytes.length },
      layers: layers.map((l) => ({ mediaType: l.mediaType, digest: digestOf(l.bytes), size: l.size ?? l.bytes.length })),
    }),
  );
  return body;
}

const SCENARIOS: Array<{ name: string; make: Scenario }> = [
  ...LAYERS.map((layer) => ({
    name: 'compat layer',
    make: ((reg, repo, r, id) => {
      const l = layer(id);
      const gz = r.chance(0.3);
      const bytes = gz ? gzipSync(l.tar) : l.tar;
      put(reg, `${repo}/manifests/t`, { body: image(reg, repo, [{ mediaType: gz ? `${TAR}+gzip` : TAR, bytes }]), contentType: MANIFEST });
      return `${l.name}${gz ? ' (gzip)' : ''}`;
    }) as Scenario,
  })),
  {
    name: 'blob does not match its digest',
    make: (reg, repo) => {
      const m = image(reg, repo, [{ mediaType: WASM_LAYER, bytes: OK_MODULE, lie: { body: Buffer.concat([OK_MODULE, Buffer.from('tampered')]) } }], {
        mediaType: WASM_CONFIG,
        bytes: Buffer.from('{}'),
      });
      put(reg, `${repo}/manifests/t`, { body: m, contentType: MANIFEST });
      return 'blob does not match its digest';
    },
  },
  {
    name: 'layer size lies',
    make: (reg, repo, r) => {
      const size = r.pick([1, OK_MODULE.length + 100, 2 ** 40]);
      put(reg, `${repo}/manifests/t`, {
        body: image(reg, repo, [{ mediaType: WASM_LAYER, bytes: OK_MODULE, size }], { mediaType: WASM_CONFIG, bytes: Buffer.from('{}') }),
        contentType: MANIFEST,
      });
      return `layer size says ${size}`;
    },
  },
  {
    name: 'content-length lies',
    make: (reg, repo) => {
      put(reg, `${repo}/manifests/t`, {
        body: image(reg, repo, [{ mediaType: WASM_LAYER, bytes: OK_MODULE, lie: { contentLength: OK_MODULE.length + 50 } }], {
          mediaType: WASM_CONFIG,
          bytes: Buffer.from('{}'),
        }),
        contentType: MANIFEST,
      });
      return 'blob body shorter than its Content-Length';
    },
  },
  {
    name: 'index loop',
    make: (reg, repo, r) => {
      const self = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: INDEX,
          manifests: [{ mediaType: INDEX, digest: 'sha256:' + 'a'.repeat(64), size: 10, platform: { os: 'wasip1', architecture: 'wasm' } }],
        }),
      );
      const d = 'sha256:' + 'a'.repeat(64);
      put(reg, `${repo}/manifests/t`, { body: self, contentType: INDEX });
      put(reg, `${repo}/manifests/${d}`, { body: self, contentType: INDEX, digestHeader: d });
      return r.chance(0.5) ? 'index pointing at itself' : 'index loop';
    },
  },
  {
    name: 'deep index chain',
    make: (reg, repo) => {
      let child = image(reg, repo, [{ mediaType: WASM_LAYER, bytes: OK_MODULE }], { mediaType: WASM_CONFIG, bytes: Buffer.from('{}') });
      let type = MANIFEST;
      for (let i = 0; i < 40; i++) {
        const d = digestOf(child);
        put(reg, `${repo}/manifests/${d}`, { body: child, contentType: type });
        child = Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: INDEX,
            manifests: [{ mediaType: type, digest: d, size: child.length, platform: { os: 'wasip1', architecture: 'wasm' } }],
          }),
        );
        type = INDEX;
      }
      put(reg, `${repo}/manifests/t`, { body: child, contentType: INDEX });
      return '40 nested indexes';
    },
  },
  {
    name: 'unknown media types',
    make: (reg, repo, r) => {
      const which = r.int(0, 2);
      const m = image(
        reg,
        repo,
        [{ mediaType: which === 1 ? 'application/x-fuzz-layer' : WASM_LAYER, bytes: OK_MODULE }],
        { mediaType: which === 2 ? 'application/x-fuzz-config' : WASM_CONFIG, bytes: Buffer.from('{}') },
        which === 0 ? 'application/x-fuzz-manifest' : MANIFEST,
      );
      put(reg, `${repo}/manifests/t`, { body: m, contentType: which === 0 ? 'application/x-fuzz-manifest' : MANIFEST });
      return ['unknown manifest type', 'unknown layer type', 'unknown config type'][which]!;
    },
  },
  {
    name: 'manifest garbage',
    make: (reg, repo, r) => {
      const body = r.pick([
        r.bytes(200),
        Buffer.from('{"schemaVersion": 2, "layers": "no"}'),
        Buffer.from('{'),
        Buffer.from(`{"a":"${'x'.repeat(6 << 20)}"}`),
        Buffer.from('[]'),
      ]);
      put(reg, `${repo}/manifests/t`, { body, contentType: MANIFEST });
      return `manifest of ${body.length} garbage bytes`;
    },
  },
  {
    name: 'error status',
    make: (reg, repo, r) => {
      const status = r.pick([401, 403, 429, 500, 502, 418]);
      put(reg, `${repo}/manifests/t`, { body: Buffer.from('{"errors":[{"code":"DENIED","message":"nope"}]}'), contentType: 'application/json', status });
      return `manifest answered ${status}`;
    },
  },
  {
    name: 'stalled blob',
    make: (reg, repo) => {
      put(reg, `${repo}/manifests/t`, {
        body: image(reg, repo, [{ mediaType: WASM_LAYER, bytes: OK_MODULE, lie: { stallAfter: 10 } }], { mediaType: WASM_CONFIG, bytes: Buffer.from('{}') }),
        contentType: MANIFEST,
      });
      return 'blob body stalls after 10 bytes';
    },
  },
  {
    name: 'layer is not Wasm',
    make: (reg, repo, r) => {
      put(reg, `${repo}/manifests/t`, {
        body: image(reg, repo, [{ mediaType: WASM_LAYER, bytes: r.bytes(300) }], { mediaType: WASM_CONFIG, bytes: Buffer.from('{}') }),
        contentType: MANIFEST,
      });
      return 'Wasm layer of random bytes';
    },
  },
];

/** A sound Wasm artifact at `fz/sound:t`: the container image of the pods that mount a hostile image as a volume. */
function soundImage(reg: LyingRegistry): string {
  put(reg, 'fz/sound/manifests/t', {
    body: image(reg, 'fz/sound', [{ mediaType: WASM_LAYER, bytes: OK_MODULE }], { mediaType: WASM_CONFIG, bytes: Buffer.from('{}') }),
    contentType: MANIFEST,
  });
  return `${reg.host}/fz/sound:t`;
}

/** `count` OCI inputs, stored in `reg`. */
export function ociInputs(reg: LyingRegistry, rng: Rng, count: number): PodInput[] {
  const out: PodInput[] = [];
  const sound = soundImage(reg);
  for (let i = 0; i < count; i++) {
    const id = `oc${rng.seed % 1000}-${i}`;
    const repo = `fz/${id}`;
    const k = rng.int(0, SCENARIOS.length - 1);
    const what = SCENARIOS[k]!.make(reg, repo, rng, id);
    const hostile = `${reg.host}/${repo}:t`;
    // As an image volume: the container runs the sound module with the hostile image mounted.
    const volume = rng.chance(0.4);
    const spec = volume
      ? {
          containers: [{ name: 'm', image: sound, volumeMounts: [{ name: 'v', mountPath: '/v' }] }],
          volumes: [{ name: 'v', image: { reference: hostile, pullPolicy: 'Always' } }],
        }
      : { containers: [{ name: 'm', image: hostile, imagePullPolicy: 'Always' }] };
    out.push({
      input: `${what}${volume ? ' as an image volume' : ''} (#${k}, ${id})`,
      file: `${id}.yaml`,
      podName: id,
      manifest: `${JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: id }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, ...spec } })}\n`,
    });
  }
  return out;
}

/** Runs `count` OCI inputs against `reg`. */
export async function fuzzOciContent(env: FuzzEnvironment, reg: LyingRegistry, rng: Rng, count: number, record: (o: Outcome) => void): Promise<void> {
  await runPodBatches(env, 'oci-content', ociInputs(reg, rng, count), record, { batchSize: 20 });
}
