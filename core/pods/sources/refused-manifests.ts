/**
 * Static pod manifests that could not become pods (unreadable, too large, not a
 * Pod, or failing upstream's pod validation) have no pod object to carry a status,
 * so each is reported as a Warning event on the Node with upstream's
 * `FailedValidation` reason (pkg/kubelet/events), naming the file and the errors.
 */
import type { Events } from '../../events/event-recorder.ts';
import type { RefusedManifest } from './static-pod-source.ts';

/** Upstream's kubelet event reason for a pod that fails validation. */
export const FAILED_VALIDATION = 'FailedValidation';

/** Emits one Node Warning event per refused manifest. */
export function reportRefusedManifests(events: Events, nodeName: string, refused: readonly RefusedManifest[]): void {
  for (const r of refused) {
    events.emit({ kind: 'Node', namespace: 'default', name: nodeName, uid: nodeName }, 'Warning', FAILED_VALIDATION, `Error validating static pod manifest ${r.message}`);
  }
}
