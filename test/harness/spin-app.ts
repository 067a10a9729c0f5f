/**
 * The Spin application of the `spin` handler's tests: its components are built from
 * test/fixtures/spin-app (spin-sdk 5, `cargo build --release --locked --target wasm32-wasip2`,
 * cached by the hash of the workspace's sources in test/.cache/components/), and the app is
 * packaged as `spin registry push` packages it (spinframework/spin, crates/oci `client.rs`):
 *
 *   config   an OCI image config (os wasip1, architecture wasm, label com.fermyon.spin.lockedAppDigest)
 *   layers   application/vnd.wasm.content.layer.v1+wasm            one per distinct component source
 *            application/vnd.wasm.content.layer.v1+data            one per static file (over 128 bytes;
 *                                                                  smaller ones are inlined in the locked app)
 *            application/vnd.fermyon.spin.application.v1+config    the locked app (JSON), last
 *
 * Older Spin versions put the locked app in the manifest's config instead (`layout: 'config'`).
 * With `archive` (Spin's SPIN_OCI_ARCHIVE_LAYERS), each component's files are one
 * application/vnd.wasm.content.bundle.v1.tar+gzip layer instead of a data layer per file.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { cargoWorkspace } from './cargo-workspace.ts';
import { pushImage, sha256, type Blob } from './oci-push.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE_DIR = join(ROOT, 'test', 'fixtures', 'spin-app');
const CACHE_DIR = join(ROOT, 'test', '.cache', 'components');
const TARGET_DIR = join(ROOT, 'test', '.cache', 'cargo-target-spin');

/** The Spin test components: crate → the artifact cargo writes. */
const CRATES = { 'spin-app': 'spin_app.wasm', 'spin-files': 'spin_files.wasm' } as const;
export type SpinCrate = keyof typeof CRATES;

export const SPIN_APP_TYPE = 'application/vnd.fermyon.spin.application.v1+config';
export const SPIN_WASM_LAYER = 'application/vnd.wasm.content.layer.v1+wasm';
export const SPIN_DATA_LAYER = 'application/vnd.wasm.content.layer.v1+data';
export const SPIN_ARCHIVE_LAYER = 'application/vnd.wasm.content.bundle.v1.tar+gzip';
/** Spin inlines content up to this size in the locked app instead of pushing a layer. */
const INLINE_MAX = 128;

/** The built component of `crate` (`test/.cache/components/<crate>-<hash>.wasm`), building the workspace when missing. */
export const buildSpinComponent: (crate: SpinCrate) => Promise<string> = cargoWorkspace({
  dir: FIXTURE_DIR,
  targetDir: TARGET_DIR,
  cacheDir: CACHE_DIR,
  artifacts: CRATES,
  what: 'the Spin test components',
});

/** One component of a test app. */
export interface SpinTestComponent {
  readonly id: string;
  readonly crate: SpinCrate;
  /** HTTP route (as in spin.toml). */
  readonly route: string;
  readonly config?: Record<string, string>;
  readonly allowedOutboundHosts?: string[];
  readonly keyValueStores?: string[];
  /** Static files: path (relative to the component's `/`) → content. */
  readonly files?: Record<string, string>;
  readonly env?: Record<string, string>;
}

/** A test app: its variables (name → default, undefined: required) and components. */
export interface SpinTestApp {
  readonly name: string;
  readonly variables?: Record<string, { default?: string }>;
  readonly components: readonly SpinTestComponent[];
}

/** The locked app and the layers `spin registry push` would write for `app` (the locked app not among the layers). */
async function tarGz(files: Record<string, string>): Promise<Buffer> {
  const p = pack();
  for (const [name, text] of Object.entries(files)) p.entry({ name }, text);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

export async function assembleSpinApp(app: SpinTestApp, opts: { archive?: boolean } = {}): Promise<{ locked: Record<string, unknown>; layers: Blob[] }> {
  const layers = new Map<string, Blob>();
  const add = (mediaType: string, bytes: Uint8Array) => {
    const digest = sha256(bytes);
    if (!layers.has(digest)) layers.set(digest, { mediaType, bytes });
    return digest;
  };
  const components = [];
  for (const c of app.components) {
    const source = add(SPIN_WASM_LAYER, readFileSync(await buildSpinComponent(c.crate)));
    const files = Object.entries(c.files ?? {}).map(([path, text]) => {
      const bytes = Buffer.from(text);
      const digest = sha256(bytes);
      if (bytes.length <= INLINE_MAX) return { inline: bytes.toString('base64'), digest, path };
      if (!opts.archive) add(SPIN_DATA_LAYER, bytes);
      return { digest, path };
    });
    if (opts.archive && c.files && Object.keys(c.files).length > 0) add(SPIN_ARCHIVE_LAYER, await tarGz(c.files));
    const metadata: Record<string, unknown> = {};
    if (c.allowedOutboundHosts) metadata.allowed_outbound_hosts = c.allowedOutboundHosts;
    if (c.keyValueStores) metadata.key_value_stores = c.keyValueStores;
    components.push({
      id: c.id,
      ...(Object.keys(metadata).length > 0 && { metadata }),
      source: { content_type: 'application/wasm', digest: source },
      ...(c.env && { env: c.env }),
      ...(files.length > 0 && { files }),
      ...(c.config && { config: c.config }),
    });
  }
  const locked = {
    spin_lock_version: 0,
    metadata: { name: app.name, version: '0.1.0', triggers: { http: {} } },
    ...(app.variables && { variables: app.variables }),
    triggers: app.components.map((c) => ({ id: `trigger-${c.id}`, trigger_type: 'http', trigger_config: { component: c.id, route: c.route } })),
    components,
  };
  return { locked, layers: [...layers.values()] };
}

/** Pushes `app` as `<registry>/<repo>:<tag>` in Spin's OCI layout; returns the reference and the locked app. */
export async function pushSpinApp(
  registryHost: string,
  repo: string,
  app: SpinTestApp,
  opts: { tag?: string; layout?: 'layer' | 'config'; archive?: boolean } = {},
): Promise<{ image: string; locked: Record<string, unknown> }> {
  const { locked, layers } = await assembleSpinApp(app, { archive: opts.archive });
  const lockedBlob: Blob = { mediaType: SPIN_APP_TYPE, bytes: Buffer.from(JSON.stringify(locked)) };
  const tag = opts.tag ?? 'v1';
  if (opts.layout === 'config') {
    await pushImage(registryHost, repo, tag, lockedBlob, layers);
  } else {
    const config = {
      architecture: 'wasm',
      os: 'wasip1',
      config: { Labels: { 'com.fermyon.spin.lockedAppDigest': sha256(lockedBlob.bytes) } },
      rootfs: { type: 'layers', diff_ids: [] },
    };
    await pushImage(registryHost, repo, tag, { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: Buffer.from(JSON.stringify(config)) }, [
      ...layers,
      lockedBlob,
    ]);
  }
  return { image: `${registryHost}/${repo}:${tag}`, locked };
}
