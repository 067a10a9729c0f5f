import { describe, expect, it } from 'vitest';
import { computeConditions, mergeConditions } from '../../../core/node/conditions.ts';
import type { HostInfo, Pressure } from '../../../core/node/host-info.ts';
import { newNodeObject, nodeLabels, nodeResources, nodeStatusBase, nodeTaints, type NodeShape } from '../../../core/node/node-object.ts';

const MI = 1024 * 1024;
const fine: Pressure = { memoryAvailableBytes: 4096 * MI, diskAvailableFraction: 0.5, pidsAvailableFraction: 0.9 };

const byType = <T extends { type: string }>(cs: T[], t: string): T | undefined => cs.find((c) => c.type === t);

describe('computeConditions', () => {
  it('is Ready with no pressure, in upstream wording', () => {
    const cs = computeConditions(fine, []);
    expect(cs.map((c) => c.type).sort()).toEqual(['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
    expect(byType(cs, 'Ready')).toEqual({ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' });
    expect(byType(cs, 'MemoryPressure')).toEqual({
      type: 'MemoryPressure',
      status: 'False',
      reason: 'KubeletHasSufficientMemory',
      message: 'kubelet has sufficient memory available',
    });
    expect(byType(cs, 'DiskPressure')).toEqual({
      type: 'DiskPressure',
      status: 'False',
      reason: 'KubeletHasNoDiskPressure',
      message: 'kubelet has no disk pressure',
    });
    expect(byType(cs, 'PIDPressure')).toEqual({
      type: 'PIDPressure',
      status: 'False',
      reason: 'KubeletHasSufficientPID',
      message: 'kubelet has sufficient PID available',
    });
  });

  it('reports memory pressure below 100Mi available, not at it', () => {
    expect(byType(computeConditions({ ...fine, memoryAvailableBytes: 100 * MI }, []), 'MemoryPressure')!.status).toBe('False');
    expect(byType(computeConditions({ ...fine, memoryAvailableBytes: 100 * MI - 1 }, []), 'MemoryPressure')).toEqual({
      type: 'MemoryPressure',
      status: 'True',
      reason: 'KubeletHasInsufficientMemory',
      message: 'kubelet has insufficient memory available',
    });
  });

  it('reports disk pressure below 10% free and PID pressure below 5% free', () => {
    expect(byType(computeConditions({ ...fine, diskAvailableFraction: 0.1 }, []), 'DiskPressure')!.status).toBe('False');
    expect(byType(computeConditions({ ...fine, diskAvailableFraction: 0.09 }, []), 'DiskPressure')).toMatchObject({
      status: 'True',
      reason: 'KubeletHasDiskPressure',
      message: 'kubelet has disk pressure',
    });
    expect(byType(computeConditions({ ...fine, pidsAvailableFraction: 0.04 }, []), 'PIDPressure')).toMatchObject({
      status: 'True',
      reason: 'KubeletHasInsufficientPID',
      message: 'kubelet has insufficient PID available',
    });
  });

  it('is not Ready with the reasons aggregated like upstream (one as is, several in brackets)', () => {
    expect(byType(computeConditions(fine, ['no provider loaded']), 'Ready')).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'no provider loaded',
    });
    expect(byType(computeConditions(fine, ['a is down', 'b is down', 'a is down']), 'Ready')!.message).toBe('[a is down, b is down]');
    expect(byType(computeConditions(fine, ['same', 'same']), 'Ready')!.message).toBe('same');
  });
});

describe('mergeConditions', () => {
  const t0 = new Date('2024-01-01T00:00:00Z');
  const t1 = new Date('2024-01-01T00:00:10Z');
  it('moves lastTransitionTime only on a status change and stamps every heartbeat', () => {
    const prev = mergeConditions(undefined, computeConditions(fine, []), t0);
    expect(prev.every((c) => c.lastTransitionTime === t0 && c.lastHeartbeatTime === t0)).toBe(true);
    const next = mergeConditions(prev, computeConditions({ ...fine, memoryAvailableBytes: 0 }, []), t1);
    expect(byType(next, 'MemoryPressure')).toMatchObject({ status: 'True', lastTransitionTime: t1, lastHeartbeatTime: t1 });
    expect(byType(next, 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: t0, lastHeartbeatTime: t1 });
  });
});

const host: HostInfo = {
  cpu: 4,
  memoryBytes: 8 * 1024 * MI + 512,
  ephemeralStorageBytes: 100 * 1024 * MI,
  osImage: 'Debian GNU/Linux 12',
  kernelVersion: '6.1.0',
  machineID: 'mid',
  bootID: 'bid',
};

function shape(over: Partial<NodeShape> = {}): NodeShape {
  return {
    nodeName: 'node-a',
    nodeIP: '10.0.0.9',
    kubeletPort: 10250,
    maxPods: 110,
    labels: {},
    taints: [],
    defaultTaint: false,
    architecture: 'wasm32-wasi',
    os: 'wasi',
    kubeletVersion: 'v1.33.0',
    runtimeVersion: 'nodelet-wasi://0.1.0',
    contributions: [],
    ...over,
  };
}

describe('node object', () => {
  it('labels: well-known labels, then providers, then --node-labels winning', () => {
    const l = nodeLabels(
      shape({
        labels: { 'kubernetes.io/os': 'forced', team: 'x' },
        contributions: [{ labels: { 'nodelet.dev/provider': 'wasi', team: 'provider' } }],
      }),
    );
    expect(l).toEqual({
      'kubernetes.io/hostname': 'node-a',
      'kubernetes.io/os': 'forced',
      'kubernetes.io/arch': 'wasm32-wasi',
      'beta.kubernetes.io/os': 'wasi',
      'beta.kubernetes.io/arch': 'wasm32-wasi',
      'nodelet.dev/provider': 'wasi',
      team: 'x',
    });
  });

  it('taints: flags, default arch taint, providers; one per key and effect, first wins', () => {
    const t = nodeTaints(
      shape({
        taints: [{ key: 'dedicated', value: 'wasm', effect: 'NoSchedule' }],
        defaultTaint: true,
        contributions: [
          {
            taints: [
              { key: 'kubernetes.io/arch', value: 'other', effect: 'NoSchedule' },
              { key: 'kubernetes.io/arch', value: 'wasm32-wasi', effect: 'NoExecute' },
              { key: 'dedicated', value: 'again', effect: 'NoSchedule' },
            ],
          },
        ],
      }),
    );
    expect(t).toEqual([
      { key: 'dedicated', value: 'wasm', effect: 'NoSchedule' },
      { key: 'kubernetes.io/arch', value: 'wasm32-wasi', effect: 'NoSchedule' },
      { key: 'kubernetes.io/arch', value: 'wasm32-wasi', effect: 'NoExecute' },
    ]);
    expect(nodeTaints(shape())).toEqual([]);
  });

  it('capacity from the host in Ki, pods from maxPods; providers add capacity and allocatable', () => {
    const r = nodeResources(
      shape({
        maxPods: 50,
        contributions: [{ capacity: { 'nodelet.dev/wasm-slots': '100' } }, { capacity: { 'example.com/dev': '4' }, allocatable: { 'example.com/dev': '3' } }],
      }),
      host,
    );
    expect(r.capacity).toEqual({
      cpu: '4',
      memory: `${8 * 1024 * 1024}Ki`,
      'ephemeral-storage': `${100 * 1024 * 1024}Ki`,
      pods: '50',
      'nodelet.dev/wasm-slots': '100',
      'example.com/dev': '4',
    });
    expect(r.allocatable).toEqual({ ...r.capacity, 'example.com/dev': '3' });
  });

  it('status: addresses, kubelet endpoint and nodeInfo', () => {
    const s = nodeStatusBase(shape(), host);
    expect(s.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.9' },
      { type: 'Hostname', address: 'node-a' },
    ]);
    expect(s.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
    expect(s.nodeInfo).toEqual({
      machineID: 'mid',
      systemUUID: 'mid',
      bootID: 'bid',
      kernelVersion: '6.1.0',
      osImage: 'Debian GNU/Linux 12',
      containerRuntimeVersion: 'nodelet-wasi://0.1.0',
      kubeletVersion: 'v1.33.0',
      kubeProxyVersion: '',
      operatingSystem: 'wasi',
      architecture: 'wasm32-wasi',
    });
  });

  it('the registered Node carries name, labels, taints, ttl annotation and status', () => {
    const n = newNodeObject(shape({ defaultTaint: true }), host);
    expect(n).toMatchObject({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', annotations: { 'node.alpha.kubernetes.io/ttl': '0' } } });
    expect(n.metadata!.labels!['kubernetes.io/hostname']).toBe('node-a');
    expect(n.spec!.taints).toEqual([{ key: 'kubernetes.io/arch', value: 'wasm32-wasi', effect: 'NoSchedule' }]);
    expect(n.status!.capacity!.pods).toBe('110');
  });
});
