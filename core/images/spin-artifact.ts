/**
 * Spin applications as `spin registry push` writes them (spinframework/spin, crates/oci):
 *
 *   manifest ─ config   application/vnd.fermyon.spin.application.v1+config  (older Spin: the locked app)
 *            │          or an OCI image config (os wasip1, architecture wasm; newer Spin)
 *            ├ layer    application/vnd.fermyon.spin.application.v1+config  (newer Spin: the locked app)
 *            ├ layers   application/vnd.wasm.content.layer.v1+wasm          one per component source
 *            └ layers   application/vnd.wasm.content.layer.v1+data          one per static file
 *            └ or       application/vnd.wasm.content.bundle.v1.tar+gzip     Spin's archive form: each file in
 *                       it is stored as a blob of its own digest (spin-archive.ts)
 *
 * The locked application (JSON) names each component's source and each file by the sha256 of
 * its content, which is the digest of the layer holding it. nodelet stores the locked app and
 * every layer as blobs; the image's entry points at the locked app and lists the others, and
 * the provider receives each blob's path by digest (`PulledImage.blobs`).
 */
import type { Descriptor, ParsedManifest } from './manifest.ts';

/** The media type of a Spin locked application (as config or as a layer); also what a provider accepts to get one. */
export const SPIN_APP_TYPE = 'application/vnd.fermyon.spin.application.v1+config';

/** The Spin artifact's parts: the locked app's descriptor and the layers it refers to. */
export interface SpinArtifact {
  readonly lockedApp: Descriptor;
  readonly layers: readonly Descriptor[];
}

/** The Spin application in a manifest (a locked-app layer, else a locked-app config), or undefined when it is none. */
export function spinArtifactOf(manifest: ParsedManifest & { kind: 'manifest' }): SpinArtifact | undefined {
  const layer = manifest.layers.find((l) => l.mediaType === SPIN_APP_TYPE);
  const lockedApp = layer ?? (manifest.config?.mediaType === SPIN_APP_TYPE ? manifest.config : undefined);
  if (!lockedApp) return undefined;
  return { lockedApp, layers: manifest.layers.filter((l) => l.digest !== lockedApp.digest) };
}
