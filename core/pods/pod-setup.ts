/**
 * What the pod path needs from the rest of core, in three roles: a pod's
 * volumes and directories (core/volumes), what a container starts with (env,
 * argv, log path, registry credentials: core/pods/env.ts, core/logs), and the
 * pod-level resources prepared for it (DRA claims). `createPodSetup`
 * (pod-setup-impl.ts) implements all three; the controller, the worker and
 * its drivers each use the roles they need, and tests may fake them.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Mount, RegistryCredential } from '@nodelet/plugin-api/v1';
import type { PreparedVolume } from '../volumes/index.ts';

/** A pod's prepared volumes by volume name, from {@link PodVolumeSetup.prepare}, handed back to {@link PodVolumeSetup.mounts}. */
export type PreparedPod = ReadonlyMap<string, PreparedVolume>;

/** A pod's volumes and directories. */
export interface PodVolumeSetup {
  /**
   * Creates the pod's directories and volumes (idempotent; re-syncs configMap/secret content).
   * Throws an error whose `messages` are upstream `FailedMount` event notes, one per failed volume.
   */
  prepare(pod: V1Pod): Promise<PreparedPod>;
  /** The container's mounts (subPath resolved and checked; `env` expands subPathExpr). */
  mounts(pod: V1Pod, container: V1Container, prepared: PreparedPod, env: Record<string, string>): Promise<Mount[]>;
  /** Removes the pod's volumes and directories (not its logs). */
  teardown(pod: V1Pod): Promise<void>;
  /**
   * Tears down the volumes of a pod that finished for good (upstream `syncTerminatedPod`
   * waits for the volume manager to unmount them): CSI volumes are unpublished (and
   * unstaged when it was the last user), emptyDir content is discarded as upstream's
   * `TearDownAt`; the pod's directory stays until the pod is deleted. Throws the first
   * failure (the caller retries); idempotent.
   */
  unmountVolumes(pod: V1Pod): Promise<void>;
  /** The pod's own directory. */
  podDir(pod: V1Pod): string;
  /**
   * True when an object the pod's volumes read (a watched ConfigMap/Secret) changed at or
   * after `since` (Date.now() ms): its volumes re-sync before the periodic cadence. Optional.
   */
  objectsChangedSince?(pod: V1Pod, since: number): boolean;
}

/** What a container is started with. */
export interface ContainerInputs {
  /** The container's resolved environment. */
  env(pod: V1Pod, container: V1Container): Promise<Record<string, string>>;
  /** The container's argv. */
  argv(container: V1Container, env: Record<string, string>): string[];
  /** The container's log file for a given restart count (its directory is created). */
  logPath(pod: V1Pod, container: string, restartCount: number): string;
  /** Registry credentials for the pod (imagePullSecrets). */
  credentials(pod: V1Pod): Promise<RegistryCredential[]>;
}

/** The pod-level resources (DRA claims) prepared with its volumes. */
export interface PodResourceRelease {
  /**
   * The pod's containers all stopped for good (it finished, or was terminated abnormally): releases its
   * pod-level resources (DRA claims) now, before its terminal status is posted, as upstream's
   * `SyncTerminatingPod` unprepares them; never throws. `teardown` releases them too (idempotent).
   */
  releaseResources?(pod: V1Pod): Promise<void>;
}

/** All three roles: what the pod controller hands each pod worker. */
export interface PodSetup extends PodVolumeSetup, ContainerInputs, PodResourceRelease {}
