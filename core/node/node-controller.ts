/**
 * Registers the Node and keeps its status current. Status is computed every
 * `updateMs` (10 s, `nodeStatusUpdateFrequency`) and patched when it changed,
 * when `reportMs` (5 min, `nodeStatusReportFrequency`) passed since the last
 * post, or when the server's copy drifted from nodelet's view: each tick reads
 * the Node back and compares its conditions, addresses, capacity and allocatable
 * ({@link statusDrift}) — from the node's own informer when it has one (`cachedNode`,
 * upstream's `tryUpdateNodeStatus` reads its node lister: no request), else with a GET — so a
 * `Ready=Unknown` the node-lifecycle controller wrote during an apiserver outage
 * is overwritten within one tick of the apiserver's return. Providers' node
 * conditions, and those other parts of nodelet own (`conditions`), are posted with core's.
 *
 * A {@link NodeController.poke} (device-plugin capacity changed) asks for a
 * computation at once, rate-limited: pokes coalesce into one pending sync that
 * runs no sooner than `minPokeIntervalMs` (1 s) after the last write, and syncs
 * never overlap. A flapping plugin therefore costs at most one Node write per
 * interval, and the last state always reaches the apiserver.
 *
 *   register ──► (create | 409 → patch labels) ──► status loop ──► stop
 *                     ▲ retry with back-off on error
 *
 *   status loop tick (every updateMs):
 *     compute ──(changed | report due)──────────────────────► PATCH status
 *        └──(same)──► cached Node (or GET) ──(server's copy drifted)─► PATCH status
 *                          └──(in step)──► nothing to write
 */
import type { V1ContainerImage, V1Node, V1NodeStatus } from '@kubernetes/client-node';
import type { Logger, NodeConditionContribution } from '@nodelet/plugin-api/v1';
import { apiMessage, isApiConflict, mergePatch, strategicMergePatch, type KubeClients } from '../kube/index.ts';
import { computeConditions, mergeConditions, withProviderConditions, type PressureFlags } from './conditions.ts';
import { readHostInfo, samplePressure, type HostInfo } from './host-info.ts';
import { newNodeObject, nodeLabels, nodeStatusBase, type NodeShape } from './node-object.ts';
import { statusDrift } from './status-drift.ts';

/** Dependencies of the node controller. */
export interface NodeControllerOptions {
  shape: NodeShape;
  /** The host's capacity, if the caller has read it already (else read here). */
  host?: HostInfo;
  rootDir: string;
  updateMs: number;
  reportMs: number;
  log: Logger;
  /** Reasons the node is not ready (empty when ready). */
  notReadyReasons?: () => string[];
  /** The node's images for status.images. */
  images?: () => V1ContainerImage[];
  /** Extra status fields (e.g. device-plugin capacity) merged into capacity/allocatable. */
  extraResources?: () => { capacity: Record<string, string>; allocatable: Record<string, string> };
  /** Least time between a status write and a poke-triggered one (default 1000 ms). */
  minPokeIntervalMs?: number;
  /** The pressure conditions (the eviction manager's); without it, a sample against upstream's default hard thresholds. */
  pressure?: () => PressureFlags;
  /** Conditions other parts of nodelet own (the pod routes' `NetworkUnavailable`), posted after core's, before the providers'. */
  conditions?: () => readonly NodeConditionContribution[];
  /**
   * The Node as the node's own informer last saw it (undefined before its first list): the
   * read-back of each tick, without a request. Without it, or before the informer listed, a GET.
   */
  cachedNode?: () => V1Node | undefined;
}

/** Default least time between a status write and a poke-triggered one. */
const MIN_POKE_INTERVAL_MS = 1000;

/** Registers the node and runs the status loop. */
export class NodeController {
  readonly host: HostInfo;
  private node?: V1Node;
  private lastPosted = '';
  private lastPostAt = 0;
  private timer?: NodeJS.Timeout;
  private pokeTimer?: NodeJS.Timeout;
  /** The sync running now (or resolved): syncs are chained so they never overlap. */
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly clients: KubeClients,
    private readonly o: NodeControllerOptions,
  ) {
    this.host = o.host ?? readHostInfo(o.rootDir);
  }

  /** The registered node's UID (after {@link register}). */
  get uid(): string | undefined {
    return this.node?.metadata?.uid;
  }

  /** Creates the Node (or adopts an existing one), retrying until it succeeds or `signal` aborts. */
  async register(signal?: AbortSignal): Promise<void> {
    let delay = 500;
    while (!signal?.aborted) {
      try {
        this.node = await this.createOrAdopt();
        break;
      } catch (e) {
        this.o.log.warn({ err: apiMessage(e) }, 'unable to register node with API server, retrying');
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 7000);
      }
    }
    if (!this.node) return; // aborted before the Node existed: nothing to post
    await this.sync(true);
    this.o.log.info({ node: this.o.shape.nodeName }, 'successfully registered node');
  }

  private async createOrAdopt(): Promise<V1Node> {
    const body = newNodeObject(this.o.shape, this.host);
    try {
      return await this.clients.core.createNode({ body });
    } catch (e) {
      if (!isApiConflict(e)) throw e;
      const patch = { metadata: { labels: nodeLabels(this.o.shape) } };
      return await this.clients.core.patchNode({ name: this.o.shape.nodeName, body: patch }, mergePatch);
    }
  }

  /** Starts the periodic status loop. */
  start(): void {
    const loop = async (): Promise<void> => {
      try {
        await this.serialSync(false, true);
      } catch (e) {
        this.o.log.warn({ err: apiMessage(e) }, 'error updating node status, will retry');
      }
      if (!this.stopped) this.timer = setTimeout(() => void loop(), this.o.updateMs);
    };
    this.timer = setTimeout(() => void loop(), this.o.updateMs);
  }

  /**
   * Asks for a status computation soon (e.g. capacity changed): at once when the last
   * write is older than `minPokeIntervalMs`, else when it will be; pokes in between coalesce.
   */
  poke(): void {
    if (this.stopped || this.pokeTimer) return;
    this.pokeTimer = setTimeout(() => this.pokeDue(), this.pokeWait());
  }

  /** How long until a poke-triggered write is allowed. */
  private pokeWait(): number {
    return Math.max(0, this.lastPostAt + (this.o.minPokeIntervalMs ?? MIN_POKE_INTERVAL_MS) - Date.now());
  }

  /** Runs the poked sync after any sync in progress, or waits again if that one just wrote. */
  private pokeDue(): void {
    const run = this.chain.then(async () => {
      const wait = this.pokeWait();
      if (this.stopped) return;
      if (wait > 0) {
        this.pokeTimer = setTimeout(() => this.pokeDue(), wait);
        return;
      }
      this.pokeTimer = undefined;
      await this.sync(false);
    });
    this.chain = run.catch((e) => this.o.log.warn({ err: apiMessage(e) }, 'error updating node status'));
  }

  /** Stops the loop; the Node object stays (upstream behaviour). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.pokeTimer) clearTimeout(this.pokeTimer);
  }

  /**
   * Computes and posts status now (after any sync in progress), e.g. when the node
   * starts shutting down; rejects when the post fails.
   */
  syncNow(): Promise<void> {
    return this.serialSync(false);
  }

  /** Runs {@link sync} after any sync in progress. */
  private serialSync(force: boolean, readBack = false): Promise<void> {
    const run = this.chain.then(() => this.sync(force, readBack));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private desiredStatus(): V1NodeStatus {
    const base = nodeStatusBase(this.o.shape, this.host);
    const extra = this.o.extraResources?.();
    if (extra) {
      Object.assign(base.capacity!, extra.capacity);
      Object.assign(base.allocatable!, extra.allocatable);
    }
    base.images = this.o.images?.() ?? [];
    return base;
  }

  /**
   * Computes status; patches when changed, when forced, or when the report interval
   * passed; with `readBack`, otherwise reads the Node and patches when the server's
   * copy drifted from nodelet's view.
   */
  async sync(force: boolean, readBack = false): Promise<void> {
    const status = this.desiredStatus();
    const provided = [...(this.o.conditions?.() ?? []), ...this.o.shape.contributions.flatMap((c) => c.conditions ?? [])];
    const conds = withProviderConditions(computeConditions(this.o.pressure?.() ?? samplePressure(this.o.rootDir), this.o.notReadyReasons?.() ?? []), provided);
    const fingerprint = JSON.stringify([status, conds]);
    const due = Date.now() - this.lastPostAt >= this.o.reportMs;
    if (!force && !due && fingerprint === this.lastPosted) {
      if (!readBack) return;
      const server = this.o.cachedNode?.() ?? (await this.clients.core.readNode({ name: this.o.shape.nodeName }));
      const drift = statusDrift(server.status, status, conds);
      this.node = server;
      if (!drift.length) return;
      this.o.log.info({ drift }, "node status on the API server differs from nodelet's, posting it again");
    }
    status.conditions = mergeConditions(this.node?.status?.conditions, conds, new Date());
    this.node = await this.clients.core.patchNodeStatus({ name: this.o.shape.nodeName, body: { status } }, strategicMergePatch);
    this.lastPosted = fingerprint;
    this.lastPostAt = Date.now();
  }
}
