/**
 * What the pod worker needs from the rest of core to start a container:
 * volumes, mounts, env, argv and the log path. The controller wires the real
 * implementations (core/volumes, core/pods/env.ts, core/logs); tests may fake it.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Mount, RegistryCredential } from '@nodelet/plugin-api/v1';

/** Prepared pod-level state handed back to {@link PodSetup.mounts}. */
export type PreparedPod = unknown;

/** Core services a pod worker uses. */
export interface PodSetup {
  /**
   * Creates the pod's directories and volumes (idempotent; re-syncs configMap/secret content).
   * Throws an error whose `messages` are upstream `FailedMount` event notes, one per failed volume.
   */
  prepare(pod: V1Pod): Promise<PreparedPod>;
  /** The container's mounts (subPath resolved and checked; `env` expands subPathExpr). */
  mounts(pod: V1Pod, container: V1Container, prepared: PreparedPod, env: Record<string, string>): Promise<Mount[]>;
  /** The container's resolved environment. */
  env(pod: V1Pod, container: V1Container): Promise<Record<string, string>>;
  /** The container's argv. */
  argv(container: V1Container, env: Record<string, string>): string[];
  /** The container's log file for a given restart count (its directory is created). */
  logPath(pod: V1Pod, container: string, restartCount: number): string;
  /**
   * The pod's containers all stopped for good (it finished, or was terminated abnormally): releases its
   * pod-level resources (DRA claims) now, before its terminal status is posted, as upstream's
   * `SyncTerminatingPod` unprepares them; never throws. {@link teardown} releases them too (idempotent).
   */
  releaseResources?(pod: V1Pod): Promise<void>;
  /** Registry credentials for the pod (imagePullSecrets). */
  credentials(pod: V1Pod): Promise<RegistryCredential[]>;
  /** Removes the pod's volumes and directories (not its logs). */
  teardown(pod: V1Pod): Promise<void>;
  /** The pod's own directory. */
  podDir(pod: V1Pod): string;
}
