/**
 * `image` volumes (KEP-4639; upstream plugin `kubernetes.io/image`, GA in 1.36):
 * the content of an OCI image or artifact, read-only, for the containers that
 * mount the volume. The image service (core/images) pulls it with the pod's pull
 * secrets and unpacks it into a tree shared by every pod using the same image
 * digest; the volume's mounts point at that tree, always read-only. A pod's
 * volume holds its tree against image GC until the volume is torn down.
 *
 * As upstream (`kuberuntime_manager.go` `getImageVolumes`): the volume is pulled
 * on every set-up (the pull policy decides whether the registry is asked),
 * `pullPolicy` defaults to `Always` for `:latest` or no tag and `IfNotPresent`
 * otherwise; events are on the pod (`Pulling`, `Pulled`, `Failed`, `BackOff`,
 * `ErrImageNeverPull`, `InspectFailed`); and a pull that fails does not fail the
 * pod: the volume is prepared as unavailable, the containers that do not mount it
 * start, and each container that mounts it waits with `ErrImagePull`, then
 * `ImagePullBackOff` (10 s doubling to 300 s per pod and image, as upstream's
 * `<pod uid>_<image>` back-off), its message naming the image and the cause.
 *
 *   setUp ─▶ in back-off? ─yes─▶ unavailable ImagePullBackOff (BackOff), retry when it ends
 *              │ no
 *              ▼
 *            pull (secrets, policy, holder <uid>/<volume>) ─ok─▶ hostPath = the tree (Pulling/Pulled once per digest)
 *              └─ fails ─▶ unavailable ErrImagePull (Failed), back-off, retry at once (shows the back-off)
 *
 *   tearDown ─▶ the pod's hold released (image GC may take the tree), its back-off forgotten
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { isProviderError, type PullPolicy } from '@nodelet/plugin-api/v1';
import { Backoff } from '../../backoff/index.ts';
import type { Events } from '../../events/index.ts';
import { defaultPullPolicy, pullSecretCredentials, type ImageVolumeService } from '../../images/index.ts';
import { volumeDirFor } from '../plugin-registry.ts';
import type { PreparedVolume, VolumePlugin } from '../types.ts';

const IMAGE_PLUGIN = 'kubernetes.io/image';

/** What the image volume plugin is built with (by the composition root). */
export interface ImageVolumePluginDeps {
  /** The node's image service. */
  readonly images: ImageVolumeService;
  /** Where the pull events go (on the pod). */
  readonly events: Events;
  /** Back-off of failed pulls (default upstream's image back-off: 10 s doubling to 300 s). */
  readonly backoff?: Backoff;
  /** The clock (tests inject one). */
  readonly now?: () => number;
}

/** The `image` volume plugin of one node. */
export function imageVolumePlugin(d: ImageVolumePluginDeps): VolumePlugin {
  const now = d.now ?? Date.now;
  const backoff = d.backoff ?? new Backoff(10_000, 300_000, now);
  /** The last failure per `<pod uid>/<image>`: when, and the message the back-off repeats. */
  const failures = new Map<string, { at: number; message: string }>();
  /** The digest each `<pod uid>/<volume>` was last reported `Pulled` with (one event per digest, not per re-sync). */
  const reported = new Map<string, string>();
  return {
    pluginName: IMAGE_PLUGIN,
    canSupport: (v: V1Volume) => v.image != null,
    async setUp(volume, ctx): Promise<PreparedVolume> {
      const m = ctx.pod.metadata!;
      const uid = m.uid!;
      const image = volume.image!.reference ?? '';
      const emit = (type: 'Normal' | 'Warning', reason: string, note: string) =>
        d.events.emit({ kind: 'Pod', namespace: m.namespace!, name: m.name!, uid }, type, reason, note);
      // The volume's own (empty) dir: its tear-down releases the pod's hold on the tree.
      const dir = volumeDirFor(ctx.podDir, IMAGE_PLUGIN, volume.name);
      await mkdir(dir, { recursive: true, mode: 0o750 });
      const unavailable = (reason: string, message: string, retryAt?: number): PreparedVolume => ({
        name: volume.name,
        hostPath: dir,
        readOnly: true,
        kind: 'image',
        unavailable: { reason, message, retryAt },
      });
      const key = `${uid}/${image}`;
      const failed = failures.get(key);
      const left = failed ? backoff.remaining(key, failed.at) : 0;
      if (failed && left > 0) {
        emit('Normal', 'BackOff', `Back-off pulling image "${image}"`);
        return unavailable('ImagePullBackOff', `Back-off pulling image "${image}": ErrImagePull: ${failed.message}`, now() + left);
      }
      const holder = `${uid}/${volume.name}`;
      const policy = (volume.image!.pullPolicy as PullPolicy | undefined) || defaultPullPolicy(image);
      const t0 = now();
      try {
        const credentials = await pullSecretCredentials(ctx.pod, ctx.source);
        const pulled = await d.images.pullVolume(image, { pullPolicy: policy, credentials, holder });
        failures.delete(key);
        backoff.reset(key);
        if (reported.get(holder) !== pulled.digest) {
          reported.set(holder, pulled.digest);
          if (!pulled.cached) emit('Normal', 'Pulling', `Pulling image "${image}"`);
          const secs = ((now() - t0) / 1000).toFixed(3);
          emit(
            'Normal',
            'Pulled',
            pulled.cached
              ? `Container image "${image}" already present on machine`
              : `Successfully pulled image "${image}" in ${secs}s. Image size: ${pulled.size} bytes.`,
          );
        }
        ctx.log.debug({ volume: volume.name, image, imageID: pulled.imageID }, 'image volume ready');
        return { name: volume.name, hostPath: pulled.path, readOnly: true, kind: 'image' };
      } catch (e) {
        const reason = isProviderError(e) ? e.reason : 'ErrImagePull';
        const message = e instanceof Error ? e.message : String(e);
        reported.delete(holder);
        if (reason === 'ErrImageNeverPull') {
          emit('Warning', 'ErrImageNeverPull', message);
          return unavailable(reason, message);
        }
        if (reason === 'InvalidImageName') {
          emit('Warning', 'InspectFailed', message);
          return unavailable(reason, message);
        }
        emit('Normal', 'Pulling', `Pulling image "${image}"`);
        emit('Warning', 'Failed', `Failed to pull image "${image}": ${message}`);
        failures.set(key, { at: now(), message });
        backoff.next(key);
        // Set up again at once: the containers then show the back-off (ImagePullBackOff), as upstream's.
        return unavailable('ErrImagePull', message, now());
      }
    },
    async tearDown(volumeName, ctx) {
      const uid = path.basename(ctx.podDir);
      d.images.releaseVolumes(`${uid}/${volumeName}`);
      reported.delete(`${uid}/${volumeName}`);
      backoff.resetPrefix(`${uid}/`);
      for (const k of failures.keys()) if (k.startsWith(`${uid}/`)) failures.delete(k);
    },
  };
}
