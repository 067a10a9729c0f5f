import { describe, expect, it } from 'vitest';
import type { V1NodeStatus } from '@kubernetes/client-node';
import { statusDrift, type ConditionView } from '../../../core/node/status-drift.ts';
import { withProviderConditions } from '../../../core/node/conditions.ts';

const want: V1NodeStatus = {
  capacity: { cpu: '2', memory: '1048576Ki', pods: '110' },
  allocatable: { cpu: '2', memory: '1048576Ki', pods: '110' },
  addresses: [
    { type: 'InternalIP', address: '10.0.0.9' },
    { type: 'Hostname', address: 'node-a' },
  ],
};
const conds: ConditionView[] = [
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
  { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
];
const t = new Date('2024-01-01T00:00:00Z');
/** The server's copy of what nodelet posted: times added, quantities canonicalised, addresses reordered. */
function inStep(): V1NodeStatus {
  return {
    capacity: { cpu: '2', memory: '1Gi', pods: '110' },
    allocatable: { cpu: '2000m', memory: '1Gi', pods: '110' },
    addresses: [...want.addresses!].reverse(),
    conditions: [
      ...conds.map((c) => ({ ...c, lastHeartbeatTime: t, lastTransitionTime: t })),
      { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'by someone else' },
    ],
  };
}

describe('statusDrift', () => {
  it('finds nothing when the server holds what nodelet reports (times, quantity spelling, address order and foreign conditions ignored)', () => {
    expect(statusDrift(inStep(), want, conds)).toEqual([]);
  });

  it('finds Ready=Unknown written by the node-lifecycle controller', () => {
    const s = inStep();
    s.conditions![0] = { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' };
    expect(statusDrift(s, want, conds)).toEqual(['conditions[Ready]']);
  });

  it('finds a changed message or reason with the same status, and a missing condition', () => {
    const s = inStep();
    s.conditions![0] = { ...s.conditions![0]!, message: 'edited' };
    s.conditions!.splice(1, 1);
    expect(statusDrift(s, want, conds)).toEqual(['conditions[Ready]', 'conditions[MemoryPressure]']);
  });

  it('finds changed addresses, capacity and allocatable', () => {
    const s = inStep();
    s.addresses = [{ type: 'InternalIP', address: '10.0.0.10' }];
    s.capacity = { ...s.capacity, cpu: '3' };
    delete s.allocatable!.pods;
    expect(statusDrift(s, want, conds)).toEqual(['addresses', 'capacity', 'allocatable']);
  });

  it('treats a node with no status as drifted in every field', () => {
    expect(statusDrift(undefined, want, conds)).toEqual(['conditions[Ready]', 'conditions[MemoryPressure]', 'addresses', 'capacity', 'allocatable']);
  });

  it('compares an unparsable quantity by its text', () => {
    const s = inStep();
    s.capacity = { ...s.capacity, 'example.com/x': 'lots' };
    expect(statusDrift(s, { ...want, capacity: { ...want.capacity, 'example.com/x': 'lots' } }, conds)).toEqual([]);
    expect(statusDrift(s, { ...want, capacity: { ...want.capacity, 'example.com/x': 'many' } }, conds)).toEqual(['capacity']);
  });
});

describe('withProviderConditions', () => {
  it("appends providers' conditions, never replacing core's, first of a type wins", () => {
    const out = withProviderConditions(conds, [
      { type: 'Ready', status: 'False', reason: 'Nope', message: 'provider may not set Ready' },
      { type: 'WasiRuntimeHealthy', status: 'True', reason: 'Ok', message: 'fine' },
      { type: 'WasiRuntimeHealthy', status: 'False', reason: 'Dup', message: 'second' },
    ]);
    expect(out).toEqual([...conds, { type: 'WasiRuntimeHealthy', status: 'True', reason: 'Ok', message: 'fine' }]);
  });
});
