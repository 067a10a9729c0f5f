/**
 * The container driver's resize step (upstream computePodResizeAction / doPodResizeAction /
 * IsPodResizeInProgress): which running containers are resized, how (in place, or restarted
 * by their resizePolicy), what is recorded and reported, with a fake provider and actuation.
 */
import type { V1Container, V1Pod, V1ResourceRequirements } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import type { ContainerLimits, ContainerResizeOutcome } from '../../../plugin-api/v1/index.ts';
import { ContainerResizer, RESIZE_RETRY_MS } from '../../../core/pods/container-resize.ts';
import type { ResizeActuation } from '../../../core/pods/pod-allocation.ts';
import { newRecord, type ContainerRecord } from '../../../core/pods/container-record.ts';
import { FakeContainer, FakeProvider } from './fakes.ts';

class Actuation implements ResizeActuation {
  readonly had = new Map<string, V1ResourceRequirements>();
  readonly log: string[] = [];
  actuated(_uid: string, name: string) {
    return this.had.get(name);
  }
  setActuated(_uid: string, name: string, r: V1ResourceRequirements) {
    this.had.set(name, r);
    this.log.push(`set ${name} ${JSON.stringify(r)}`);
  }
  inProgress() {
    this.log.push('in progress');
  }
  completed() {
    this.log.push('completed');
  }
  failed(_pod: V1Pod, message: string) {
    this.log.push(`failed ${message}`);
  }
}

const MEM = (limit: string, request = limit): V1ResourceRequirements => ({ limits: { memory: limit }, requests: { memory: request } });

function setup(containers: V1Container[], resize?: (id: string, l: ContainerLimits) => Promise<ContainerResizeOutcome>) {
  const provider = Object.assign(new FakeProvider(), resize ? { resizeContainer: vi.fn(resize) } : {});
  const a = new Actuation();
  const requeues: number[] = [];
  const r = new ContainerResizer(provider, a, { requeue: (ms) => requeues.push(ms) });
  const pod: V1Pod = { metadata: { uid: 'u', generation: 2 }, spec: { containers } };
  const records: ContainerRecord[] = containers.map((c) => {
    const rec = newRecord(c.name, false);
    rec.running = new FakeContainer(`id-${c.name}`, {} as never);
    return rec;
  });
  const restarts: string[] = [];
  const sync = () => r.sync(pod, records, (rec, _spec, why) => restarts.push(`${rec.name}: ${why}`));
  return { provider, a, requeues, pod, records, sync, restarts, r };
}

describe('resizing running containers', () => {
  it('does nothing while every running container has what it is allocated (completed)', () => {
    const t = setup([{ name: 'c', image: 'x', resources: MEM('50Mi') }], async () => ({ applied: true }));
    t.a.had.set('c', MEM('50Mi'));
    t.sync();
    expect(t.a.log).toEqual(['completed']);
    expect(t.provider.resizeContainer).not.toHaveBeenCalled();
  });

  it('resizes in place (NotRequired): the provider gets the full limits; once applied the new resources are recorded and the pod synced again', async () => {
    const t = setup([{ name: 'c', image: 'x', resources: { limits: { memory: '64Mi', cpu: '500m' } } }], async () => ({ applied: true }));
    t.a.had.set('c', { limits: { memory: '32Mi', cpu: '500m' } });
    t.sync();
    t.sync(); // a second sync while the call is in flight does not call again
    expect(t.provider.resizeContainer).toHaveBeenCalledTimes(1);
    expect(t.provider.resizeContainer).toHaveBeenCalledWith('id-c', { memoryBytes: 64 << 20, cpuMillis: 500 });
    expect(t.a.log).toEqual(['in progress', 'in progress']);
    await vi.waitFor(() => expect(t.requeues).toEqual([0]));
    expect(t.a.had.get('c')).toEqual({ limits: { memory: '64Mi', cpu: '500m' } });
    t.sync();
    expect(t.a.log.at(-1)).toBe('completed');
  });

  it("reports a lower limit the container's memory does not fit under with upstream's message, and tries again after the back-off", async () => {
    const t = setup([{ name: 'c1', image: 'x', resources: MEM('10Ki') }], async () => ({ applied: false, memoryUsageBytes: 2_000_000 }));
    t.a.had.set('c1', MEM('40Mi'));
    t.sync();
    // Synced at once (the error is posted), and again after the back-off (to retry).
    await vi.waitFor(() => expect(t.requeues.sort()).toEqual([0, RESIZE_RETRY_MS]));
    const failed = t.a.log.find((l) => l.startsWith('failed '))!;
    expect(failed).toBe('failed cannot decrease memory limits: attempting to set container "c1" memory limit (10240) below current usage (2000000)');
    // The e2e test's pattern (upstream pod_resize.go "decrease memory limit below usage").
    expect(failed).toMatch(/memory limit \(\d+\) below current usage/);
    expect(t.a.had.get('c1')).toEqual(MEM('40Mi'));
    // The sync right after does not ask again before the back-off; a different request is asked at once.
    t.sync();
    expect(t.provider.resizeContainer).toHaveBeenCalledTimes(1);
    expect(t.a.log.at(-1)).toBe('in progress');
    t.pod.spec!.containers[0]!.resources = MEM('36Mi');
    t.sync();
    expect(t.provider.resizeContainer).toHaveBeenCalledTimes(2);
  });

  it('restarts a container whose changed resource has resizePolicy RestartContainer, and only that one', () => {
    const t = setup(
      [
        { name: 'r', image: 'x', resources: MEM('64Mi'), resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] },
        { name: 'cpu-only-restart', image: 'x', resources: MEM('64Mi'), resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] },
      ],
      async () => ({ applied: true }),
    );
    t.a.had.set('r', MEM('32Mi'));
    t.a.had.set('cpu-only-restart', MEM('32Mi'));
    t.sync();
    expect(t.restarts).toEqual(['r: Container r resize requires restart']);
    expect(t.provider.resizeContainer).toHaveBeenCalledTimes(1); // the other one: its memory policy is NotRequired
  });

  it('records a change of requests alone at once (nothing the provider enforces changes), even without the capability', () => {
    const t = setup([{ name: 'c', image: 'x', resources: { requests: { cpu: '200m' }, limits: { cpu: '1' } } }]);
    t.a.had.set('c', { requests: { cpu: '100m' }, limits: { cpu: '1' } });
    t.sync();
    expect(t.a.log).toEqual(['set c {"requests":{"cpu":"200m"},"limits":{"cpu":"1"}}', 'completed']);
  });

  it('reports a limit change the provider cannot make in place as an error', () => {
    const t = setup([{ name: 'c', image: 'x', resources: MEM('64Mi') }]);
    t.a.had.set('c', MEM('32Mi'));
    t.sync();
    expect(t.a.log).toEqual(['failed provider "fake" cannot resize containers in place', 'in progress']);
    expect(t.requeues).toEqual([RESIZE_RETRY_MS]);
  });

  it('leaves stopped containers, init containers that are not sidecars, and a run with no record (which gets one) alone', () => {
    const t = setup([{ name: 'c', image: 'x', resources: MEM('64Mi') }], async () => ({ applied: true }));
    t.sync(); // no record: the run has what is allocated
    expect(t.a.log).toEqual(['set c {"limits":{"memory":"64Mi"},"requests":{"memory":"64Mi"}}', 'completed']);
    t.a.had.set('c', MEM('32Mi'));
    t.records[0]!.running = undefined;
    t.sync();
    expect(t.provider.resizeContainer).not.toHaveBeenCalled();
    const init = newRecord('i', true);
    init.running = new FakeContainer('id-i', {} as never);
    t.pod.spec!.initContainers = [{ name: 'i', image: 'x', resources: MEM('64Mi') }];
    t.a.had.set('i', MEM('1Mi'));
    t.r.sync(t.pod, [init], () => undefined);
    expect(t.provider.resizeContainer).not.toHaveBeenCalled();
    t.pod.spec!.initContainers[0]!.restartPolicy = 'Always'; // a sidecar is resized
    t.r.sync(t.pod, [init], () => undefined);
    expect(t.provider.resizeContainer).toHaveBeenCalledWith('id-i', { memoryBytes: 64 << 20 });
  });
});
