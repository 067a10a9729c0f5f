/**
 * The `podCertificate` source of `projected` volumes (upstream
 * pkg/volume/projected): the credential bundle — the PEM private key, then
 * the certificate chain — at `credentialBundlePath`, and/or the key alone at
 * `keyPath` and the chain alone at `certificateChainPath`. Each file is
 * replaced atomically (payload-writer.ts), so the bundle is always a key and
 * the chain issued for it; the two separate files may be read mid-rotation, as
 * upstream warns. The mode is the volume's `defaultMode`, or 0600 when the pod
 * sets `securityContext.fsGroup`, as upstream does.
 */
import type { V1PodCertificateProjection } from '@kubernetes/client-node';
import { nodeletError } from '../../errors/index.ts';
import type { Payload } from '../payload-writer.ts';
import type { VolumeContext } from '../types.ts';

/** The files of source `sourceIndex` (a podCertificate) of projected volume `volumeName`. */
export function podCertificatePayload(
  src: V1PodCertificateProjection,
  volumeName: string,
  sourceIndex: number,
  defaultMode: number,
  ctx: VolumeContext,
): Payload {
  if (!ctx.podCertificates) throw nodeletError('NDL_VOLUME_UNSUPPORTED', 'podCertificate sources need an API server (standalone mode has none)');
  const bundle = ctx.podCertificates.credentialBundle(ctx.pod, volumeName, sourceIndex);
  const mode = ctx.pod.spec?.securityContext?.fsGroup != null ? 0o600 : defaultMode;
  const out: Payload = new Map();
  if (src.credentialBundlePath) out.set(src.credentialBundlePath, { data: Buffer.concat([bundle.privateKey, bundle.certificateChain]), mode });
  if (src.keyPath) out.set(src.keyPath, { data: bundle.privateKey, mode });
  if (src.certificateChainPath) out.set(src.certificateChainPath, { data: bundle.certificateChain, mode });
  return out;
}
