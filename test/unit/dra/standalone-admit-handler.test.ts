import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { standaloneDraAdmitHandler } from '../../../core/dra/index.ts';
import { PodController } from '../../../core/pods/pod-controller.ts';
import { predicateAdmitHandler } from '../../../core/pods/admission.ts';
import { fixedAllocatable } from '../../../core/pods/admit-handler.ts';
import { FakeEvents, FakeProvider, FakeSink, fakeSetup, memoryLogger } from '../pods/fakes.ts';

const pod = (name: string, claims: string[]): V1Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: {
    nodeName: 'node-a',
    restartPolicy: 'Never',
    resourceClaims: claims.length ? claims.map((c) => ({ name: c, resourceClaimTemplateName: 'tpl' })) : undefined,
    containers: [{ name: 'main', image: 'registry.test/main:v1', resources: claims.length ? { claims: [{ name: claims[0]! }] } : undefined }],
  },
});

const controllers: PodController[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
});

describe('DRA in standalone mode', () => {
  it('a pod with resourceClaims fails admission with UnsupportedPodSpec and a Warning event saying DRA needs cluster mode; others run', async () => {
    const provider = new FakeProvider();
    provider.autoExit.main = 0;
    const sink = new FakeSink();
    const events = new FakeEvents();
    const ctrl = new PodController({
      nodeName: 'node-a',
      hostIP: '10.0.0.9',
      log: memoryLogger(),
      route: () => ({ provider }),
      setup: fakeSetup(),
      sink,
      events,
      admitNode: { nodeName: 'node-a', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '110' })] },
      admitHandlers: [standaloneDraAdmitHandler(), predicateAdmitHandler],
      resyncMs: 3_600_000,
    });
    controllers.push(ctrl);
    ctrl.upsert(pod('gpu', ['dev', 'other']));
    ctrl.upsert(pod('plain', []));
    await vi.waitFor(() => {
      if (sink.last('default/gpu')?.phase !== 'Failed' || sink.last('default/plain')?.phase !== 'Succeeded') throw new Error('not yet');
    });
    const message =
      'pod uses ResourceClaims (dev, other): Dynamic Resource Allocation needs cluster mode (the scheduler allocates claims through the API server), and this node runs standalone';
    expect(sink.last('default/gpu')).toMatchObject({ phase: 'Failed', reason: 'UnsupportedPodSpec', message: `Pod was rejected: ${message}` });
    expect(events.list.filter((e) => e.regarding.name === 'gpu')).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'UnsupportedPodSpec', note: message }),
    ]);
    expect(provider.started.map((c) => c.spec.pod.name)).toEqual(['plain']);
  });
});
