import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { V1ContainerImage, V1Node } from '@kubernetes/client-node';
import type { NodeConditionContribution } from '@nodelet/plugin-api/v1';
import { mergePatch, strategicMergePatch, type KubeClients } from '../../../core/kube/client.ts';
import { NodeController, type NodeControllerOptions } from '../../../core/node/node-controller.ts';
import type { NodeShape } from '../../../core/node/node-object.ts';
import { memoryLogger } from '../pods/fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'nodelet-node-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
});

const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** Only the four calls the node controller makes. */
class FakeCore {
  creates: V1Node[] = [];
  reads = 0;
  patches: { name: string; body: unknown; opts: unknown }[] = [];
  statusPatches: { name: string; body: { status: V1Node['status'] }; opts: unknown }[] = [];
  createErrors: Error[] = [];
  node?: V1Node;

  async createNode({ body }: { body: V1Node }): Promise<V1Node> {
    this.creates.push(body);
    const e = this.createErrors.shift();
    if (e) throw e;
    this.node = { ...body, metadata: { ...body.metadata, uid: 'node-uid-1' } };
    return this.node;
  }

  async patchNode({ name, body }: { name: string; body: unknown }, opts: unknown): Promise<V1Node> {
    this.patches.push({ name, body, opts });
    this.node = { metadata: { name, uid: 'node-uid-existing' } };
    return this.node;
  }

  async readNode({ name }: { name: string }): Promise<V1Node> {
    this.reads++;
    if (!this.node || name !== 'node-a') throw apiError(404);
    return JSON.parse(JSON.stringify(this.node)) as V1Node;
  }

  async patchNodeStatus({ name, body }: { name: string; body: { status: V1Node['status'] } }, opts: unknown): Promise<V1Node> {
    this.statusPatches.push({ name, body: JSON.parse(JSON.stringify(body)), opts });
    this.node = { ...this.node, status: body.status };
    return this.node;
  }
}

const shape: NodeShape = {
  nodeName: 'node-a',
  nodeIP: '10.0.0.9',
  kubeletPort: 10250,
  maxPods: 110,
  labels: { team: 'x' },
  taints: [],
  defaultTaint: true,
  architecture: 'wasm32-wasi',
  os: 'wasi',
  kubeletVersion: 'v1.33.0',
  runtimeVersion: 'fake://1',
  contributions: [],
};

function make(over: Partial<NodeControllerOptions> = {}) {
  const core = new FakeCore();
  const state = { notReady: [] as string[], images: [] as V1ContainerImage[] };
  const ctrl = new NodeController({ core } as unknown as KubeClients, {
    shape,
    rootDir: root,
    updateMs: 10_000,
    reportMs: 300_000,
    log: memoryLogger(),
    notReadyReasons: () => state.notReady,
    images: () => state.images,
    ...over,
  });
  return { core, ctrl, state };
}

const cond = (n: { body: { status: V1Node['status'] } } | undefined, type: string) => n?.body.status?.conditions?.find((c) => c.type === type);

describe('NodeController registration', () => {
  it('creates the Node and posts its status once', async () => {
    const { core, ctrl } = make();
    await ctrl.register();
    expect(core.creates).toHaveLength(1);
    expect(core.creates[0]!.metadata).toMatchObject({ name: 'node-a', labels: { team: 'x', 'kubernetes.io/hostname': 'node-a' } });
    expect(core.creates[0]!.spec!.taints).toEqual([{ key: 'kubernetes.io/arch', value: 'wasm32-wasi', effect: 'NoSchedule' }]);
    expect(ctrl.uid).toBe('node-uid-1');
    expect(core.statusPatches).toHaveLength(1);
    expect(core.statusPatches[0]!.opts).toBe(strategicMergePatch);
    expect(core.statusPatches[0]!.name).toBe('node-a');
    expect(cond(core.statusPatches[0], 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(core.statusPatches[0]!.body.status!.nodeInfo!.kubeletVersion).toBe('v1.33.0');
  });

  it('adopts an existing Node on 409 by merge-patching its labels', async () => {
    const { core, ctrl } = make();
    core.createErrors.push(apiError(409));
    await ctrl.register();
    expect(core.patches).toHaveLength(1);
    expect(core.patches[0]!.opts).toBe(mergePatch);
    expect(core.patches[0]!.body).toEqual({ metadata: { labels: expect.objectContaining({ team: 'x', 'kubernetes.io/arch': 'wasm32-wasi' }) } });
    expect(ctrl.uid).toBe('node-uid-existing');
    expect(core.statusPatches).toHaveLength(1);
  });

  it('retries registration with a doubling delay until it succeeds', async () => {
    vi.useFakeTimers();
    const { core, ctrl } = make();
    core.createErrors.push(apiError(500), apiError(503));
    const done = ctrl.register();
    await vi.advanceTimersByTimeAsync(499);
    expect(core.creates).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(core.creates).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(core.creates).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    await done;
    expect(core.creates).toHaveLength(3);
    expect(core.statusPatches).toHaveLength(1);
  });

  it('stops retrying when the signal aborts', async () => {
    vi.useFakeTimers();
    const { core, ctrl } = make();
    core.createErrors.push(apiError(500), apiError(500), apiError(500));
    const ac = new AbortController();
    const done = ctrl.register(ac.signal);
    await vi.advanceTimersByTimeAsync(0);
    ac.abort();
    await vi.advanceTimersByTimeAsync(10_000);
    await done;
    expect(core.creates).toHaveLength(1);
    expect(core.statusPatches).toHaveLength(0);
    expect(ctrl.uid).toBeUndefined();
  });
});

describe('NodeController status loop', () => {
  it('patches only when the status changed, not on every sync', async () => {
    const { core, ctrl, state } = make();
    await ctrl.register();
    await ctrl.sync(false);
    await ctrl.sync(false);
    expect(core.statusPatches).toHaveLength(1);
    state.notReady = ['no provider loaded'];
    await ctrl.sync(false);
    expect(core.statusPatches).toHaveLength(2);
    expect(cond(core.statusPatches[1], 'Ready')).toMatchObject({ status: 'False', reason: 'KubeletNotReady', message: 'no provider loaded' });
    await ctrl.sync(false);
    expect(core.statusPatches).toHaveLength(2);
    state.images = [{ names: ['registry.test/app@sha256:00'], sizeBytes: 10 }];
    await ctrl.sync(false);
    expect(core.statusPatches).toHaveLength(3);
    expect(core.statusPatches[2]!.body.status!.images).toEqual(state.images);
  });

  it('moves lastTransitionTime only for the condition that changed', async () => {
    vi.useFakeTimers({ now: new Date('2024-01-01T00:00:00Z') });
    const { core, ctrl, state } = make();
    await ctrl.register();
    vi.setSystemTime(new Date('2024-01-01T00:01:00Z'));
    state.notReady = ['down'];
    await ctrl.sync(false);
    const ready = cond(core.statusPatches[1], 'Ready')!;
    const mem = cond(core.statusPatches[1], 'MemoryPressure')!;
    expect(ready.lastTransitionTime).toBe('2024-01-01T00:01:00.000Z');
    expect(mem.lastTransitionTime).toBe('2024-01-01T00:00:00.000Z');
    expect(mem.lastHeartbeatTime).toBe('2024-01-01T00:01:00.000Z');
  });

  it('ticks every updateMs, posts unchanged status only once reportMs passed, and stops', async () => {
    vi.useFakeTimers();
    const { core, ctrl } = make({ updateMs: 10_000, reportMs: 60_000 });
    await ctrl.register();
    ctrl.start();
    await vi.advanceTimersByTimeAsync(50_000);
    expect(core.statusPatches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(core.statusPatches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(50_000);
    expect(core.statusPatches).toHaveLength(2);
    ctrl.stop();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(core.statusPatches).toHaveLength(2);
  });

  it("reads the Node back each tick and re-posts when the server's Ready was overwritten (apiserver outage)", async () => {
    vi.useFakeTimers();
    const { core, ctrl } = make({ updateMs: 10_000, reportMs: 300_000 });
    await ctrl.register();
    ctrl.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(core.reads).toBe(1);
    expect(core.statusPatches).toHaveLength(1);
    // The node-lifecycle controller marks the node Unknown while nodelet could not reach the apiserver.
    const unknown = { status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' };
    core.node!.status!.conditions = core.node!.status!.conditions!.map((c) => (c.type === 'Ready' ? { ...c, ...unknown } : c));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(core.reads).toBe(2);
    expect(core.statusPatches).toHaveLength(2);
    expect(cond(core.statusPatches[1], 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(core.reads).toBe(3);
    expect(core.statusPatches).toHaveLength(2);
    ctrl.stop();
  });

  it("reads the Node back from the node's informer when it has one (no GET), and with a GET while the informer has none", async () => {
    vi.useFakeTimers();
    let cached: V1Node | undefined;
    const { core, ctrl } = make({ cachedNode: () => cached });
    await ctrl.register();
    ctrl.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(core.reads).toBe(1); // the informer has not listed: a GET
    cached = JSON.parse(JSON.stringify(core.node)) as V1Node;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(core.reads).toBe(1);
    expect(core.statusPatches).toHaveLength(1);
    // The informer sees the node-lifecycle controller's Unknown: re-posted without a GET.
    const unknown = { status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' };
    cached = { ...cached, status: { ...cached.status, conditions: cached.status!.conditions!.map((c) => (c.type === 'Ready' ? { ...c, ...unknown } : c)) } };
    await vi.advanceTimersByTimeAsync(10_000);
    expect(core.reads).toBe(1);
    expect(core.statusPatches).toHaveLength(2);
    expect(cond(core.statusPatches[1], 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    ctrl.stop();
  });

  it('moves Ready lastTransitionTime when re-posting over Unknown', async () => {
    vi.useFakeTimers({ now: new Date('2024-01-01T00:00:00Z') });
    const { core, ctrl } = make();
    await ctrl.register();
    core.node!.status!.conditions = core.node!.status!.conditions!.map((c) =>
      c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: new Date('2024-01-01T00:00:30Z') } : c,
    );
    vi.setSystemTime(new Date('2024-01-01T00:01:00Z'));
    await ctrl.sync(false, true);
    const ready = cond(core.statusPatches[1], 'Ready')!;
    expect(ready).toMatchObject({ status: 'True', lastTransitionTime: '2024-01-01T00:01:00.000Z' });
    expect(cond(core.statusPatches[1], 'MemoryPressure')!.lastTransitionTime).toBe('2024-01-01T00:00:00.000Z');
  });

  it('a failed read-back is retried on the next tick without writing', async () => {
    vi.useFakeTimers();
    const { core, ctrl } = make();
    await ctrl.register();
    ctrl.start();
    const real = core.readNode.bind(core);
    let fail = true;
    core.readNode = async (a) => {
      if (fail) {
        fail = false;
        throw apiError(503);
      }
      return real(a);
    };
    await vi.advanceTimersByTimeAsync(20_000);
    expect(core.reads).toBe(1);
    expect(core.statusPatches).toHaveLength(1);
    ctrl.stop();
  });

  it("posts providers' node conditions with core's", async () => {
    const provided = { type: 'WasiRuntimeReady', status: 'True' as const, reason: 'Loaded', message: 'wasi runtime loaded' };
    const { core, ctrl } = make({ shape: { ...shape, contributions: [{ conditions: [provided] }] } });
    await ctrl.register();
    expect(cond(core.statusPatches[0], 'WasiRuntimeReady')).toMatchObject(provided);
  });

  it("posts the conditions other parts of nodelet own (pod routes' NetworkUnavailable), a change with the next sync, before a provider's of the same type", async () => {
    const routed = { type: 'NetworkUnavailable', status: 'False' as const, reason: 'RouteCreated', message: 'RouteController created a route' };
    let own: NodeConditionContribution[] = [{ ...routed, status: 'True', reason: 'NoRouteCreated', message: 'RouteController failed to create a route' }];
    const provided = { type: 'NetworkUnavailable', status: 'Unknown' as const, reason: 'Provider', message: 'from a provider' };
    const { core, ctrl } = make({ conditions: () => own, shape: { ...shape, contributions: [{ conditions: [provided] }] } });
    await ctrl.register();
    expect(cond(core.statusPatches[0], 'NetworkUnavailable')).toMatchObject({ status: 'True', reason: 'NoRouteCreated' });
    own = [routed];
    await ctrl.syncNow();
    expect(core.statusPatches).toHaveLength(2);
    expect(cond(core.statusPatches[1], 'NetworkUnavailable')).toMatchObject(routed);
    expect(core.statusPatches[1]!.body.status!.conditions!.filter((c) => c.type === 'NetworkUnavailable')).toHaveLength(1);
  });

  it('a failing status patch is retried on the next tick', async () => {
    vi.useFakeTimers();
    const { core, ctrl, state } = make();
    await ctrl.register();
    ctrl.start();
    const real = core.patchNodeStatus.bind(core);
    let fail = true;
    core.patchNodeStatus = async (...a) => {
      if (fail) {
        fail = false;
        throw apiError(500);
      }
      return real(...a);
    };
    state.notReady = ['down'];
    await vi.advanceTimersByTimeAsync(10_000);
    expect(core.statusPatches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(core.statusPatches).toHaveLength(2);
    ctrl.stop();
  });

  it('merges extra resources (device plugins) into capacity and allocatable', async () => {
    const { core, ctrl } = make({ extraResources: () => ({ capacity: { 'example.com/dev': '2' }, allocatable: { 'example.com/dev': '1' } }) });
    await ctrl.register();
    expect(core.statusPatches[0]!.body.status!.capacity!['example.com/dev']).toBe('2');
    expect(core.statusPatches[0]!.body.status!.allocatable!['example.com/dev']).toBe('1');
  });
});
