/**
 * Dynamic Resource Allocation on this node, ready to wire: the driver
 * registry (this node's ResourceSlices wiped at start, as upstream), the DRA
 * manager (checkpoint loaded) and what the composition root plugs into the
 * extension points:
 *
 *   pod resources         preparer         (claims prepared before the volumes; FailedPrepareDynamicResources)
 *   container options     containerOptions (CDI env + mounts of the claims a container references)
 *   plugin registration   handler          → { [DRA_PLUGIN]: handler }
 *   pod status            statusContributor (allocatedResourcesStatus: device health from the drivers' streams)
 *
 * A reconcile loop (every {@link DRA_RECONCILE_MS}, and when a driver
 * registers) drops terminated or deleted pods from the claims and unprepares
 * the claims no pod uses, retrying unprepares that failed.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { isApiNotFound, type KubeClients } from '../kube/index.ts';
import type { PluginHandler } from '../pluginmanager/index.ts';
import type { ContainerOptionsContributor, PodResourcePreparer, PodStatusContributor } from '../pods/index.ts';
import { join } from 'node:path';
import { DRA_CHECKPOINT_FILE } from './checkpoint.ts';
import { draContainerOptions } from './dra-container-options.ts';
import { DraManager } from './dra-manager.ts';
import { createDraPluginHandler } from './dra-plugin-handler.ts';
import type { DraClientFactory } from './driver-client.ts';
import { DraDriverRegistry } from './driver-registry.ts';
import { draStatusContributor } from './allocated-resources-status.ts';
import { DeviceHealthCache } from './health-info.ts';
import { startHealthWatch } from './health-watch.ts';

export { DRA_WARNING_REASON } from './dra-container-options.ts';
export { DraManager } from './dra-manager.ts';
export { standaloneDraAdmitHandler } from './standalone-admit-handler.ts';

/** How often claims of pods that are gone are unprepared (upstream's reconcile period: 60 s). */
export const DRA_RECONCILE_MS = 60_000;

/** Upstream's event reason when a pod's claims cannot be prepared. */
export const FAILED_PREPARE_DYNAMIC_RESOURCES = 'FailedPrepareDynamicResources';

/** Options of {@link startDra} (fields of NodeletOptions). */
export interface DraOptions {
  readonly rootDir: string;
  readonly nodeName: string;
  /** Where CDI spec files are read (`--cdi-spec-dirs`). */
  readonly cdiSpecDirs: readonly string[];
  /** How long a deregistered driver's ResourceSlices stay (`--dra-plugin-deregistration-grace-period`). */
  readonly draDeregistrationGracePeriodMs: number;
}

/**
 * The gRPC client of DRA drivers (grpc-driver-client.ts), loaded when the first driver registers:
 * its protocol code (sockets/dra*.ts) and grpc-js clients are not needed before.
 */
const loadGrpcDraClient = async (): Promise<DraClientFactory> => (await import('./grpc-driver-client.ts')).grpcDraClient;

/** Pod facts and connections DRA needs. */
export interface DraDeps {
  readonly clients: KubeClients;
  /** Pods bound here that are not terminal. */
  activePods(): readonly V1Pod[];
  sourcesReady(): boolean;
  /** Tests: how drivers are reached (default gRPC). */
  readonly connect?: DraClientFactory;
  /** Tests: the reconcile period (default {@link DRA_RECONCILE_MS}). */
  readonly reconcileMs?: number;
}

/** Running DRA support. */
export interface Dra {
  readonly manager: DraManager;
  readonly handler: PluginHandler;
  readonly preparer: PodResourcePreparer;
  readonly containerOptions: ContainerOptionsContributor;
  /** `allocatedResourcesStatus` of the containers that reference prepared claims (device health). */
  readonly statusContributor: PodStatusContributor;
  /** Calls `listener` with the pods whose devices' health changed (the pod controller syncs them again: allocatedResourcesStatus). */
  onHealthChange(listener: (podUIDs: string[]) => void): void;
  stop(): void;
}

/** Loads the checkpoint, builds the registry, manager and handler, and starts the reconcile loop. */
export function startDra(o: DraOptions, deps: DraDeps, log: Logger): Dra {
  const dlog = log.child({ component: 'dra' });
  const resource = deps.clients.resource;
  const drivers = new DraDriverRegistry({
    graceMs: o.draDeregistrationGracePeriodMs,
    log: dlog,
    wipeSlices: async (driver) => {
      await resource.deleteCollectionResourceSlice({ fieldSelector: `spec.nodeName=${o.nodeName}${driver === undefined ? '' : `,spec.driver=${driver}`}` });
    },
  });
  drivers.wipeAtStart();
  const manager = new DraManager({
    checkpointPath: join(o.rootDir, DRA_CHECKPOINT_FILE),
    drivers,
    log: dlog,
    activePods: deps.activePods,
    sourcesReady: deps.sourcesReady,
    async getClaim(namespace, name) {
      try {
        return await resource.readNamespacedResourceClaim({ namespace, name });
      } catch (e) {
        if (isApiNotFound(e)) return undefined;
        throw e;
      }
    },
  });
  const reconcile = () => void manager.reconcile().catch((e: unknown) => dlog.warn({ err: String(e) }, 'DRA reconcile failed'));
  const timer = setInterval(reconcile, deps.reconcileMs ?? DRA_RECONCILE_MS);
  timer.unref?.();
  const offRegister = drivers.onRegister(() => reconcile());
  const health = new DeviceHealthCache();
  const healthListeners: ((podUIDs: string[]) => void)[] = [];
  const stopHealth = startHealthWatch({ drivers, cache: health, manager, log: dlog, onChange: (uids) => healthListeners.forEach((l) => l(uids)) });
  return {
    manager,
    handler: createDraPluginHandler(drivers, deps.connect ? () => deps.connect! : loadGrpcDraClient, dlog),
    preparer: {
      name: 'dra',
      failureReason: FAILED_PREPARE_DYNAMIC_RESOURCES,
      failurePrefix: 'Failed to prepare dynamic resources',
      prepare: (pod) => manager.prepare(pod),
      release: (pod) => manager.release(pod.metadata!.uid!).catch((e: unknown) => dlog.warn({ err: String(e) }, 'DRA release failed')),
    },
    containerOptions: draContainerOptions(manager, o.cdiSpecDirs),
    statusContributor: draStatusContributor(manager, health),
    onHealthChange: (listener) => void healthListeners.push(listener),
    stop() {
      clearInterval(timer);
      offRegister();
      stopHealth();
      drivers.stop();
    },
  };
}
