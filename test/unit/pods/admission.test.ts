import { describe, expect, it } from 'vitest';
import type { V1Container, V1NodeSelectorRequirement, V1Pod } from '@kubernetes/client-node';
import { admitPod, podRequest, type AdmitContext } from '../../../core/pods/admission.ts';

const ctr = (name: string, requests?: Record<string, string>, limits?: Record<string, string>): V1Container => ({
  name,
  image: 'x',
  resources: { requests, limits },
});

function pod(containers: V1Container[], extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers, ...extra } };
}

function ctx(over: Partial<AdmitContext> = {}): AdmitContext {
  return {
    nodeName: 'node-a',
    nodeLabels: { 'kubernetes.io/hostname': 'node-a', zone: 'z1', gen: '5' },
    allocatable: { cpu: '2', memory: '1Gi', pods: '110' },
    admitted: [],
    ...over,
  };
}

const affinity = (...exprs: V1NodeSelectorRequirement[]) => ({
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: exprs }] } } },
});

describe('podRequest', () => {
  it('is max(sum of app containers, max of init containers) plus overhead', () => {
    const p = pod([ctr('a', { cpu: '100m' }), ctr('b', { cpu: '200m' })], {
      initContainers: [ctr('i1', { cpu: '250m' }), ctr('i2', { cpu: '500m' })],
      overhead: { cpu: '10m' },
    });
    expect(podRequest(p, 'cpu')).toBe(510);
    const small = pod([ctr('a', { cpu: '100m' }), ctr('b', { cpu: '200m' })], { initContainers: [ctr('i', { cpu: '50m' })] });
    expect(podRequest(small, 'cpu')).toBe(300);
  });

  it('falls back to the limit when the request is missing (API defaulting) and parses memory units', () => {
    expect(podRequest(pod([ctr('a', undefined, { memory: '64Mi' })]), 'memory')).toBe(64 * 2 ** 20);
    expect(podRequest(pod([ctr('a', { memory: '1G' })]), 'memory')).toBe(1e9);
  });
});

describe('admitPod resources', () => {
  it('admits a pod that fits exactly', () => {
    const used = pod([ctr('a', { cpu: '1500m' })]);
    expect(admitPod(pod([ctr('b', { cpu: '500m' })]), ctx({ admitted: [used] }))).toEqual({ admit: true });
  });

  it('rejects cpu with upstream reason OutOfcpu and the InsufficientResourceError message', () => {
    const used = pod([ctr('a', { cpu: '1500m' })]);
    expect(admitPod(pod([ctr('b', { cpu: '501m' })]), ctx({ admitted: [used] }))).toEqual({
      admit: false,
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 501, used: 1500, capacity: 2000",
    });
  });

  it('rejects memory with OutOfmemory in bytes', () => {
    const r = admitPod(pod([ctr('b', { memory: '2Gi' })]), ctx());
    expect(r).toEqual({
      admit: false,
      reason: 'OutOfmemory',
      message: `Node didn't have enough resource: memory, requested: ${2 * 2 ** 30}, used: 0, capacity: ${2 ** 30}`,
    });
  });

  it('counts the largest init container even when app containers request less', () => {
    const p = pod([ctr('a', { cpu: '100m' })], { initContainers: [ctr('i', { cpu: '3' })] });
    expect(admitPod(p, ctx())).toMatchObject({ admit: false, reason: 'OutOfcpu', message: expect.stringContaining('requested: 3000,') });
  });

  it('rejects the pod beyond maxPods with OutOfpods, even when it requests nothing', () => {
    const others = [pod([ctr('a')]), pod([ctr('b')])];
    expect(admitPod(pod([ctr('c')]), ctx({ allocatable: { cpu: '2', memory: '1Gi', pods: '2' }, admitted: others }))).toEqual({
      admit: false,
      reason: 'OutOfpods',
      message: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
    });
    expect(admitPod(pod([ctr('c')]), ctx({ allocatable: { cpu: '2', memory: '1Gi', pods: '3' }, admitted: others }))).toEqual({ admit: true });
  });

  it('checks extended resources the node advertises with Out<name>', () => {
    const p = pod([ctr('a', { 'example.com/dev': '2' })]);
    const c = ctx({ allocatable: { cpu: '2', memory: '1Gi', pods: '110', 'example.com/dev': '1' } });
    expect(admitPod(p, c)).toMatchObject({
      admit: false,
      reason: 'OutOfexample.com/dev',
      message: "Node didn't have enough resource: example.com/dev, requested: 2, used: 0, capacity: 1",
    });
  });

  it('ignores extended resources the node does not know (upstream removeMissingExtendedResources)', () => {
    expect(admitPod(pod([ctr('a', { 'example.com/dev': '1' })]), ctx())).toEqual({ admit: true });
  });
});

describe('admitPod node selection', () => {
  it('matches nodeSelector labels', () => {
    expect(admitPod(pod([ctr('a')], { nodeSelector: { zone: 'z1' } }), ctx())).toEqual({ admit: true });
    expect(admitPod(pod([ctr('a')], { nodeSelector: { zone: 'z2' } }), ctx())).toEqual({
      admit: false,
      reason: 'NodeAffinity',
      message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    });
  });

  it.each([
    [{ key: 'zone', operator: 'In', values: ['z0', 'z1'] }, true],
    [{ key: 'zone', operator: 'In', values: ['z0'] }, false],
    [{ key: 'zone', operator: 'NotIn', values: ['z1'] }, false],
    [{ key: 'missing', operator: 'NotIn', values: ['z1'] }, true],
    [{ key: 'zone', operator: 'Exists' }, true],
    [{ key: 'zone', operator: 'DoesNotExist' }, false],
    [{ key: 'gen', operator: 'Gt', values: ['4'] }, true],
    [{ key: 'gen', operator: 'Gt', values: ['5'] }, false],
    [{ key: 'gen', operator: 'Lt', values: ['6'] }, true],
    [{ key: 'gen', operator: 'Lt', values: ['5'] }, false],
    [{ key: 'zone', operator: 'Gt', values: ['0'] }, false],
    [{ key: 'empty', operator: 'Gt', values: ['-1'] }, false],
    [{ key: 'missing', operator: 'Lt', values: ['9'] }, false],
    [{ key: 'zone', operator: 'Bogus', values: ['z1'] }, false],
  ] as [V1NodeSelectorRequirement, boolean][])('required node affinity %j → %s', (req, ok) => {
    const c = ctx({ nodeLabels: { ...ctx().nodeLabels, empty: '' } });
    expect(admitPod(pod([ctr('a')], affinity(req)), c).admit).toBe(ok);
  });

  it('ANDs expressions within a term and ORs terms', () => {
    const and = affinity({ key: 'zone', operator: 'In', values: ['z1'] }, { key: 'gen', operator: 'Lt', values: ['3'] });
    expect(admitPod(pod([ctr('a')], and), ctx()).admit).toBe(false);
    const or = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'zone', operator: 'In', values: ['nope'] }] },
              { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] },
            ],
          },
        },
      },
    };
    expect(admitPod(pod([ctr('a')], or), ctx()).admit).toBe(true);
  });

  it('never matches an empty term', () => {
    const empty = { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{}] } } } };
    expect(admitPod(pod([ctr('a')], empty), ctx()).admit).toBe(false);
  });

  it('matches matchFields metadata.name against the node name', () => {
    const fields = (values: string[], key = 'metadata.name') => ({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key, operator: 'In', values }] }],
          },
        },
      },
    });
    expect(admitPod(pod([ctr('a')], fields(['node-a'])), ctx()).admit).toBe(true);
    expect(admitPod(pod([ctr('a')], fields(['node-b'])), ctx()).admit).toBe(false);
    expect(admitPod(pod([ctr('a')], fields(['node-a'], 'metadata.uid')), ctx()).admit).toBe(false);
  });

  it('rejects a pod bound to another node with upstream NodeName wording', () => {
    expect(admitPod(pod([ctr('a')], { nodeName: 'node-b' }), ctx())).toEqual({
      admit: false,
      reason: 'NodeName',
      message: "Predicate NodeName failed: node(s) didn't match the requested node name",
    });
    expect(admitPod(pod([ctr('a')], { nodeName: 'node-a' }), ctx())).toEqual({ admit: true });
  });

  it('reports insufficient resources before affinity, as upstream AdmissionCheck orders them', () => {
    const p = pod([ctr('a', { cpu: '4' })], { nodeSelector: { zone: 'elsewhere' } });
    expect(admitPod(p, ctx())).toMatchObject({ admit: false, reason: 'OutOfcpu' });
  });
});
