/**
 * Static pod manifests that could not become pods (unreadable, too large, not a
 * Pod, or failing upstream's pod validation) have no pod object to carry a status,
 * so each is reported as a Warning event on the Node with upstream's
 * `FailedValidation` reason (pkg/kubelet/events), naming the file and the errors.
 */
import type { Events } from '../../events/index.ts';
import type { RefusedManifest } from './static-pod-source.ts';

/** Upstream's kubelet event reason for a pod that fails validation. */
const FAILED_VALIDATION = 'FailedValidation';

/** Longest event note the apiserver accepts (events.k8s.io `NoteLengthLimit`). */
const NOTE_LIMIT = 1024;

/** Emits one Node Warning event per refused manifest (the note cut to 1024 characters with ` ...`). */
export function reportRefusedManifests(events: Events, nodeName: string, refused: readonly RefusedManifest[]): void {
  for (const r of refused) {
    const note = `Error validating static pod manifest ${r.message}`;
    const cut = note.length <= NOTE_LIMIT ? note : `${note.slice(0, NOTE_LIMIT - 4)} ...`;
    events.emit({ kind: 'Node', namespace: 'default', name: nodeName, uid: nodeName }, 'Warning', FAILED_VALIDATION, cut);
  }
}
