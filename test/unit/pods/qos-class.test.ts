import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podQosClass } from '../../../core/pods/container-limits.ts';

const pod = (containers: Array<Partial<V1Container>>, qosClass?: string, initContainers: Array<Partial<V1Container>> = []): V1Pod => ({
  spec: {
    containers: containers.map((c, i) => ({ name: `c${i}`, ...c })),
    initContainers: initContainers.map((c, i) => ({ name: `i${i}`, ...c })),
  },
  status: qosClass ? { qosClass } : {},
});

describe('podQosClass', () => {
  it('takes status.qosClass when the apiserver set it', () => {
    expect(podQosClass(pod([{}], 'Guaranteed'))).toBe('Guaranteed');
  });
  it('is BestEffort without any cpu or memory request or limit', () => {
    expect(podQosClass(pod([{}, { resources: { requests: { 'example.com/gpu': '1' } } }]))).toBe('BestEffort');
  });
  it('is Burstable with a request only, even on one container or an init container', () => {
    expect(podQosClass(pod([{ resources: { requests: { cpu: '100m' } } }, {}]))).toBe('Burstable');
    expect(podQosClass(pod([{}], undefined, [{ resources: { requests: { memory: '1Mi' } } }]))).toBe('Burstable');
  });
  it('is Guaranteed when every container has cpu and memory limits equal to its requests (absent requests default to limits)', () => {
    expect(podQosClass(pod([{ resources: { limits: { cpu: '1', memory: '64Mi' } } }]))).toBe('Guaranteed');
    expect(podQosClass(pod([{ resources: { limits: { cpu: '1', memory: '64Mi' }, requests: { cpu: '1000m', memory: '64Mi' } } }]))).toBe('Guaranteed');
  });
  it('is Burstable when a request differs from its limit or a limit is missing', () => {
    expect(podQosClass(pod([{ resources: { limits: { cpu: '1', memory: '64Mi' }, requests: { cpu: '500m' } } }]))).toBe('Burstable');
    expect(podQosClass(pod([{ resources: { limits: { cpu: '1' } } }]))).toBe('Burstable');
  });
});
