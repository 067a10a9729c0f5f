/**
 * The DRA manager (upstream `pkg/kubelet/cm/dra/manager.go`): prepares the
 * ResourceClaims a pod uses before its containers start, once per claim
 * however many pods share it (reference-counted by pod UID), remembers them
 * in the checkpoint, hands each container the CDI device ids of the claims it
 * references, and unprepares a claim when the last pod using it is gone.
 *
 * A claim's life on this node:
 *
 *   (unknown) ──prepare(pod): allocated + reserved for pod, driver registered,
 *       │                      NodePrepareResources ok ──► prepared {pods: {pod}} (checkpointed)
 *       └── otherwise: throws NDL_DRA_PREPARE (the pod waits and retries)
 *   prepared ──prepare(other pod)──► prepared {pods: +pod}      (no second NodePrepareResources)
 *   prepared ──release(pod) / reconcile: pod not active──► pods: -pod
 *   prepared {pods: {}} ──NodeUnprepareResources ok──► (unknown) (checkpointed)
 *            └── driver gone or error: stays, retried on the next reconcile or driver registration
 *
 * Calls are serialised (one prepare or unprepare at a time), as upstream's
 * claim-info cache lock around them.
 */
import type { V1Container, V1Pod, ResourceV1ResourceClaim } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { readCheckpoint, writeCheckpoint, type CheckpointDevice, type ClaimInfoState } from './checkpoint.ts';
import type { DraClaimRef } from './driver-client.ts';
import type { DraDriverRegistry } from './driver-registry.ts';

/** What the manager needs from the rest of nodelet. */
export interface DraManagerOptions {
  /** `<root>/dra_manager_state`. */
  readonly checkpointPath: string;
  readonly drivers: DraDriverRegistry;
  /** Reads a ResourceClaim (undefined when it does not exist). */
  getClaim(namespace: string, name: string): Promise<ResourceV1ResourceClaim | undefined>;
  /** Pods bound here that are not terminal. */
  activePods(): readonly V1Pod[];
  /** False until the pod sources delivered their first list. */
  sourcesReady(): boolean;
  readonly log: Logger;
}

/** A pod claim resolved to its ResourceClaim's name. */
interface PodClaim {
  /** `spec.resourceClaims[].name`. */
  readonly podClaimName: string;
  readonly claimName: string;
}

/**
 * The ResourceClaim names `pod` uses (upstream `resourceclaim.Name`): `resourceClaimName`, or the
 * generated name from `status.resourceClaimStatuses` for a template; a template whose status entry
 * has no name needs no claim. Throws while a template's claim is not named yet.
 */
export function podClaimNames(pod: V1Pod): PodClaim[] {
  const out: PodClaim[] = [];
  for (const c of pod.spec?.resourceClaims ?? []) {
    if (c.resourceClaimName) {
      out.push({ podClaimName: c.name, claimName: c.resourceClaimName });
      continue;
    }
    const st = pod.status?.resourceClaimStatuses?.find((s) => s.name === c.name);
    if (!st) throw nodeletError('NDL_DRA_PREPARE', `pod ${podKey(pod)} has no generated ResourceClaim name for ${JSON.stringify(c.name)} yet`);
    if (st.resourceClaimName) out.push({ podClaimName: c.name, claimName: st.resourceClaimName });
  }
  return out;
}

const podKey = (pod: V1Pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`;

/** True when a device prepared for `requestNames` serves the container's `request` (a sub-request `req/sub` serves `req`). */
export function servesRequest(requestNames: readonly string[], request: string | undefined): boolean {
  if (request === undefined || request === '') return true;
  return requestNames.some((r) => r === request || r.startsWith(`${request}/`));
}

/** The prepared claims of this node. */
export class DraManager {
  private readonly claims = new Map<string, ClaimInfoState>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: DraManagerOptions) {
    for (const c of readCheckpoint(o.checkpointPath)) this.claims.set(c.ClaimUID, c);
    if (this.claims.size > 0) o.log.info({ claims: this.claims.size }, 'DRA claims restored from the checkpoint');
  }

  /** Runs `fn` after every earlier call finished. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private save(): void {
    writeCheckpoint(this.o.checkpointPath, [...this.claims.values()]);
  }

  private byName(namespace: string, name: string): ClaimInfoState | undefined {
    for (const c of this.claims.values()) if (c.Namespace === namespace && c.ClaimName === name) return c;
    return undefined;
  }

  /** The claim states (for podresources and tests): a copy. */
  snapshot(): ClaimInfoState[] {
    return structuredClone([...this.claims.values()]);
  }

  /**
   * Prepares every claim of `pod` not prepared yet and records the pod as a user of each.
   * Throws `NDL_DRA_PREPARE` (naming the claim and driver) while one cannot be prepared.
   */
  prepare(pod: V1Pod): Promise<void> {
    return this.serial(() => this.prepareNow(pod));
  }

  private async prepareNow(pod: V1Pod): Promise<void> {
    if (!pod.spec?.resourceClaims?.length) return;
    const podUID = pod.metadata!.uid!;
    const ns = pod.metadata!.namespace!;
    const wanted = podClaimNames(pod);
    // Already prepared for this pod: no API round trip on every re-sync.
    if (wanted.every((w) => this.byName(ns, w.claimName)?.PodUIDs[podUID])) return;
    for (const w of wanted) {
      const claim = await this.o.getClaim(ns, w.claimName);
      if (!claim) throw nodeletError('NDL_DRA_PREPARE', `ResourceClaim ${ns}/${w.claimName} of pod ${podKey(pod)} not found`);
      const uid = claim.metadata!.uid!;
      if (!claim.status?.reservedFor?.some((r) => r.uid === podUID)) {
        throw nodeletError(
          'NDL_DRA_PREPARE',
          `pod ${podKey(pod)} (${podUID}) is not allowed to use ResourceClaim ${w.claimName} (${uid}): not reserved for it`,
        );
      }
      const results = claim.status.allocation?.devices?.results ?? [];
      if (!claim.status.allocation) throw nodeletError('NDL_DRA_PREPARE', `ResourceClaim ${ns}/${w.claimName} is not allocated`);
      const known = this.claims.get(uid);
      if (known) {
        if (!known.PodUIDs[podUID]) {
          known.PodUIDs[podUID] = {};
          this.save();
        }
        continue;
      }
      const ref: DraClaimRef = { namespace: ns, uid, name: w.claimName };
      const state: ClaimInfoState = { ClaimUID: uid, ClaimName: w.claimName, Namespace: ns, PodUIDs: { [podUID]: {} }, DriverState: {} };
      for (const driver of [...new Set(results.map((r) => r.driver))].sort()) {
        const client = this.o.drivers.client(driver);
        if (!client) throw nodeletError('NDL_DRA_PREPARE', `DRA driver ${driver} is not registered (ResourceClaim ${ns}/${w.claimName})`);
        let r;
        try {
          r = (await client.nodePrepareResources([ref]))[uid];
        } catch (e) {
          throw nodeletError(
            'NDL_DRA_PREPARE',
            `NodePrepareResources of DRA driver ${driver} failed for ResourceClaim ${ns}/${w.claimName}: ${(e as Error).message}`,
            e,
          );
        }
        if (!r) throw nodeletError('NDL_DRA_PREPARE', `DRA driver ${driver} returned no result for ResourceClaim ${ns}/${w.claimName}`);
        if (r.error)
          throw nodeletError('NDL_DRA_PREPARE', `NodePrepareResources of DRA driver ${driver} failed for ResourceClaim ${ns}/${w.claimName}: ${r.error}`);
        state.DriverState[driver] = {
          Devices: (r.devices ?? []).map((d): CheckpointDevice => ({
            PoolName: d.poolName,
            DeviceName: d.deviceName,
            RequestNames: [...d.requestNames],
            CDIDeviceIDs: [...d.cdiDeviceIds],
          })),
        };
      }
      this.claims.set(uid, state);
      this.save();
      this.o.log.info({ claim: `${ns}/${w.claimName}`, uid, pod: podKey(pod), drivers: Object.keys(state.DriverState) }, 'Prepared ResourceClaim');
    }
  }

  /** The CDI device ids for `container` of `pod`: those of the claims (and requests) its `resources.claims` name. */
  cdiDeviceIds(pod: V1Pod, container: V1Container): string[] {
    const refs = container.resources?.claims ?? [];
    if (refs.length === 0) return [];
    const ns = pod.metadata!.namespace!;
    let names: PodClaim[];
    try {
      names = podClaimNames(pod);
    } catch {
      return [];
    }
    const ids: string[] = [];
    for (const ref of refs) {
      const pc = names.find((n) => n.podClaimName === ref.name);
      const state = pc && this.byName(ns, pc.claimName);
      if (!state) continue;
      for (const driver of Object.keys(state.DriverState).sort()) {
        for (const d of state.DriverState[driver]!.Devices) if (servesRequest(d.RequestNames, ref.request)) ids.push(...d.CDIDeviceIDs);
      }
    }
    return [...new Set(ids)];
  }

  /**
   * The claims prepared for `container` with their devices, as podresources reports them
   * (upstream `GetDynamicResources`: each claim the container references, its devices serving the request).
   */
  dynamicResources(
    pod: V1Pod,
    container: V1Container,
  ): { claimName: string; claimNamespace: string; resources: { driverName: string; poolName: string; deviceName: string; cdiDevices: string[] }[] }[] {
    const ns = pod.metadata?.namespace ?? '';
    let names: PodClaim[];
    try {
      names = podClaimNames(pod);
    } catch {
      return [];
    }
    const out = [];
    for (const ref of container.resources?.claims ?? []) {
      const pc = names.find((n) => n.podClaimName === ref.name);
      const state = pc && this.byName(ns, pc.claimName);
      if (!state) continue;
      const resources = Object.keys(state.DriverState)
        .sort()
        .flatMap((driverName) =>
          state.DriverState[driverName]!.Devices.filter((d) => servesRequest(d.RequestNames, ref.request)).map((d) => ({
            driverName,
            poolName: d.PoolName,
            deviceName: d.DeviceName,
            cdiDevices: [...d.CDIDeviceIDs],
          })),
        );
      out.push({ claimName: state.ClaimName, claimNamespace: state.Namespace, resources });
    }
    return out;
  }

  /**
   * The prepared claims `container` of `pod` references, in its `resources.claims` order, with the
   * reference (its `name` is the pod's claim name, `request` optional): for allocatedResourcesStatus.
   */
  containerClaims(pod: V1Pod, container: V1Container): { ref: { name: string; request?: string }; state: ClaimInfoState }[] {
    const ns = pod.metadata?.namespace ?? '';
    let names: PodClaim[];
    try {
      names = podClaimNames(pod);
    } catch {
      return [];
    }
    const out = [];
    for (const ref of container.resources?.claims ?? []) {
      const pc = names.find((n) => n.podClaimName === ref.name);
      const state = pc && this.byName(ns, pc.claimName);
      if (state) out.push({ ref, state });
    }
    return out;
  }

  /** The UIDs of the pods using a claim with one of `devices` of `driver` prepared (a health change concerns them). */
  podsUsingDevices(driver: string, devices: readonly { poolName: string; deviceName: string }[]): string[] {
    const uids = new Set<string>();
    for (const c of this.claims.values()) {
      const prepared = c.DriverState[driver]?.Devices ?? [];
      if (prepared.some((p) => devices.some((d) => d.poolName === p.PoolName && d.deviceName === p.DeviceName))) {
        for (const uid of Object.keys(c.PodUIDs)) uids.add(uid);
      }
    }
    return [...uids];
  }

  /** The pod is gone: it no longer uses its claims; claims no pod uses are unprepared (failures are retried later). */
  release(podUID: string): Promise<void> {
    return this.serial(async () => {
      let changed = false;
      for (const c of this.claims.values()) {
        if (c.PodUIDs[podUID]) {
          delete c.PodUIDs[podUID];
          changed = true;
        }
      }
      if (changed) this.save();
      await this.unprepareUnused();
    });
  }

  /** Drops pods that are no longer active (once the sources are ready) and unprepares unused claims. */
  reconcile(): Promise<void> {
    return this.serial(async () => {
      if (this.o.sourcesReady()) {
        const active = new Set(this.o.activePods().map((p) => p.metadata?.uid));
        let changed = false;
        for (const c of this.claims.values()) {
          for (const uid of Object.keys(c.PodUIDs)) {
            if (!active.has(uid)) {
              delete c.PodUIDs[uid];
              changed = true;
            }
          }
        }
        if (changed) this.save();
      }
      await this.unprepareUnused();
    });
  }

  /** NodeUnprepareResources for every claim no pod uses; a failure is logged and the claim kept for a retry. */
  private async unprepareUnused(): Promise<void> {
    for (const c of [...this.claims.values()]) {
      if (Object.keys(c.PodUIDs).length > 0) continue;
      try {
        await this.unprepareClaim(c);
      } catch (e) {
        this.o.log.warn({ claim: `${c.Namespace}/${c.ClaimName}`, err: String((e as Error).message ?? e) }, 'ResourceClaim not unprepared yet, will retry');
        continue;
      }
      this.claims.delete(c.ClaimUID);
      this.save();
      this.o.log.info({ claim: `${c.Namespace}/${c.ClaimName}`, uid: c.ClaimUID }, 'Unprepared ResourceClaim');
    }
  }

  private async unprepareClaim(c: ClaimInfoState): Promise<void> {
    const ref: DraClaimRef = { namespace: c.Namespace, uid: c.ClaimUID, name: c.ClaimName };
    for (const driver of Object.keys(c.DriverState).sort()) {
      const client = this.o.drivers.client(driver);
      if (!client) throw nodeletError('NDL_DRA_UNPREPARE', `DRA driver ${driver} is not registered (ResourceClaim ${c.Namespace}/${c.ClaimName})`);
      const r = (await client.nodeUnprepareResources([ref]))[c.ClaimUID];
      if (r?.error)
        throw nodeletError(
          'NDL_DRA_UNPREPARE',
          `NodeUnprepareResources of DRA driver ${driver} failed for ResourceClaim ${c.Namespace}/${c.ClaimName}: ${r.error}`,
        );
      // Done for this driver: a retry after a later driver's failure does not call it again.
      delete c.DriverState[driver];
      this.save();
    }
  }
}
