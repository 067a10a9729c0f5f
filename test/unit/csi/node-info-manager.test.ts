// The CSI node info manager against an in-memory Node/CSINode store.
import { describe, expect, it } from 'vitest';
import { NodeInfoManager, retry } from '../../../core/volumes/csi/node-info-manager.ts';
import { FakeNodeInfoApi } from './fake-node-info-api.ts';

const FAST = { steps: 4, initialMs: 1, factor: 2, jitter: 0 };

describe('NodeInfoManager.installDriver', () => {
  it('creates the CSINode owned by the Node, with sorted topology keys and allocatable count', async () => {
    const api = new FakeNodeInfoApi('n1');
    await new NodeInfoManager(api, 'n1', FAST).installDriver('hostpath.csi.k8s.io', 'id-1', 7, { 'topology.hostpath.csi/node': 'n1', 'a.example/zone': 'z' });
    expect(api.csiNode?.metadata?.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid-1' }]);
    expect(api.csiNode?.spec?.drivers).toEqual([
      { name: 'hostpath.csi.k8s.io', nodeID: 'id-1', topologyKeys: ['a.example/zone', 'topology.hostpath.csi/node'], allocatable: { count: 7 } },
    ]);
    expect(api.nodeIDs()).toEqual({ 'hostpath.csi.k8s.io': 'id-1' });
    expect(api.node.metadata?.labels).toMatchObject({ 'topology.hostpath.csi/node': 'n1', 'a.example/zone': 'z' });
  });

  it('merges the annotation with other drivers, omits allocatable for 0 and caps it at MaxInt32', async () => {
    const api = new FakeNodeInfoApi('n1', {}, { 'csi.volume.kubernetes.io/nodeid': '{"other.csi":"o-1"}' });
    const m = new NodeInfoManager(api, 'n1', FAST);
    await m.installDriver('b.csi', 'b-1', 0, {});
    await m.installDriver('a.csi', 'a-1', 2 ** 40, {});
    expect(api.node.metadata?.annotations?.['csi.volume.kubernetes.io/nodeid']).toBe('{"a.csi":"a-1","b.csi":"b-1","other.csi":"o-1"}');
    const drivers = api.csiNode?.spec?.drivers ?? [];
    expect(drivers.find((d) => d.name === 'b.csi')?.allocatable).toBeUndefined();
    expect(drivers.find((d) => d.name === 'a.csi')?.allocatable).toEqual({ count: 2 ** 31 - 1 });
  });

  it('replaces the entry of a re-registered driver with a new node ID', async () => {
    const api = new FakeNodeInfoApi('n1');
    const m = new NodeInfoManager(api, 'n1', FAST);
    await m.installDriver('a.csi', 'old', 1, {});
    await m.installDriver('a.csi', 'new', 1, {});
    expect(api.csiNode?.spec?.drivers?.map((d) => d.nodeID)).toEqual(['new']);
    expect(api.nodeIDs()).toEqual({ 'a.csi': 'new' });
  });

  it('refuses a topology value that collides with an existing label, with upstream wording, and leaves CSINode alone', async () => {
    const api = new FakeNodeInfoApi('n1', { 'topology.example/zone': 'z1' });
    const err = await new NodeInfoManager(api, 'n1', FAST).installDriver('a.csi', 'a-1', 0, { 'topology.example/zone': 'z2' }).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      'error updating Node object with CSI driver node info: error updating node: timed out waiting for the condition; caused by: detected topology value collision: driver reported "topology.example/zone":"z2" but existing label is "topology.example/zone":"z1"',
    );
    expect(api.csiNode).toBeUndefined();
    expect(api.nodeIDs()).toBeUndefined();
  });

  it('rejects an empty node ID', async () => {
    const api = new FakeNodeInfoApi('n1');
    await expect(new NodeInfoManager(api, 'n1', FAST).installDriver('a.csi', '', 0, {})).rejects.toThrow(
      'error adding CSI driver node info: driverNodeID must not be empty',
    );
  });

  it('retries a Node patch that lost a race (resourceVersion moved) and keeps the other writer’s change', async () => {
    const api = new FakeNodeInfoApi('n1');
    api.raceNextNodeRead = true;
    await new NodeInfoManager(api, 'n1', FAST).installDriver('a.csi', 'a-1', 0, {});
    expect(api.patches).toHaveLength(2);
    expect(api.nodeIDs()).toEqual({ 'a.csi': 'a-1' });
  });

  it('fails on an unparseable annotation with upstream wording', async () => {
    const api = new FakeNodeInfoApi('n1', {}, { 'csi.volume.kubernetes.io/nodeid': 'not json' });
    await expect(new NodeInfoManager(api, 'n1', FAST).installDriver('a.csi', 'a-1', 0, {})).rejects.toThrow(
      /failed to parse node's "csi.volume.kubernetes.io\/nodeid" annotation value \("not json"\) err=/,
    );
  });
});

describe('NodeInfoManager.uninstallDriver', () => {
  it('removes the CSINode entry (with its attach limit) and the annotation key, and keeps the topology labels as upstream', async () => {
    const api = new FakeNodeInfoApi('n1', { unrelated: 'x' });
    const m = new NodeInfoManager(api, 'n1', FAST);
    await m.installDriver('a.csi', 'a-1', 5, { 'shared.example/zone': 'z', 'a.example/node': 'n1' });
    await m.installDriver('b.csi', 'b-1', 0, { 'shared.example/zone': 'z' });
    await m.uninstallDriver('a.csi');
    expect(api.csiNode?.spec?.drivers?.map((d) => d.name)).toEqual(['b.csi']);
    expect(api.nodeIDs()).toEqual({ 'b.csi': 'b-1' });
    expect(api.node.metadata?.labels).toEqual({ unrelated: 'x', 'shared.example/zone': 'z', 'a.example/node': 'n1' });
    await m.uninstallDriver('b.csi');
    expect(api.csiNode?.spec?.drivers).toEqual([]);
    expect(api.node.metadata?.annotations).not.toHaveProperty('csi.volume.kubernetes.io/nodeid');
    expect(api.node.metadata?.labels).toEqual({ unrelated: 'x', 'shared.example/zone': 'z', 'a.example/node': 'n1' });
  });

  it('is a no-op for an unknown driver or a missing CSINode', async () => {
    const api = new FakeNodeInfoApi('n1', {}, { 'csi.volume.kubernetes.io/nodeid': '{"x.csi":"1"}' });
    await new NodeInfoManager(api, 'n1', FAST).uninstallDriver('a.csi');
    expect(api.patches).toHaveLength(0);
    expect(api.nodeIDs()).toEqual({ 'x.csi': '1' });
  });
});

describe('retry', () => {
  it('aggregates distinct errors like utilerrors (deduplicated, bracketed when several)', async () => {
    let n = 0;
    const err = await retry(FAST, 'op', async () => {
      throw new Error(n++ < 2 ? 'first' : 'second');
    }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'NDL_RETRY_EXHAUSTED', detail: 'op: timed out waiting for the condition; caused by: [first, second]' });
    expect(n).toBe(4);
  });
});
