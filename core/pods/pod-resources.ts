/**
 * The pod-resources extension point, like upstream's container manager
 * `PrepareDynamicResources` / `UnprepareDynamicResources`: resources a pod
 * needs before any of its containers starts (DRA claims), built as a list by
 * the composition root and run by pod set-up.
 *
 *   pod sync ──► preparer[0].prepare ──► preparer[1].prepare ──► volumes ──► containers
 *                    │ throws
 *                    ▼
 *                 Warning event `failureReason` ("Failed to prepare dynamic resources: …"),
 *                 the pod starts nothing and retries with the volume back-off
 *   pod finished / terminated abnormally (containers stopped, before the terminal status is posted)
 *     and pod teardown (deleted) ──► each preparer.release (never throws; idempotent; retries are its own)
 */
import type { V1Pod } from '@kubernetes/client-node';

/** Pod-level resources prepared before the volumes and released at teardown. */
export interface PodResourcePreparer {
  /** For logs: what this prepares (`dra`). */
  readonly name: string;
  /** The event reason when {@link prepare} fails (upstream `FailedPrepareDynamicResources`). */
  readonly failureReason: string;
  /** The event note's prefix (upstream `Failed to prepare dynamic resources`). */
  readonly failurePrefix: string;
  /** Prepares what `pod` needs (idempotent: called on every volume sync); a throw keeps the pod waiting. */
  prepare(pod: V1Pod): Promise<void>;
  /** The pod's containers stopped for good, or it is torn down (idempotent); errors are the preparer's to log and retry. */
  release(pod: V1Pod): Promise<void>;
}
