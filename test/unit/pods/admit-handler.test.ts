/** The admit-handler list: order, first rejection wins, throws, and the context read per handler. */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import {
  admitContext,
  fixedAllocatable,
  runAdmitHandlers,
  type AdmitContext,
  type AdmitResult,
  type PodAdmitHandler,
} from '../../../core/pods/admit-handler.ts';
import { predicateAdmitHandler } from '../../../core/pods/admission.ts';
import { PodController } from '../../../core/pods/pod-controller.ts';
import { FakeEvents, FakeProvider, FakeSink, fakeSetup, memoryLogger } from './fakes.ts';

const pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: { containers: [{ name: 'c', resources: { requests: { 'example.com/dev': '1' } } }] },
} as V1Pod;
const node = { nodeName: 'node-a', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '110' })] };

function handler(name: string, result: AdmitResult, calls: string[]): PodAdmitHandler {
  return {
    name,
    admit: async () => {
      calls.push(name);
      return result;
    },
  };
}

describe('runAdmitHandlers', () => {
  it('runs every handler in order when all admit', async () => {
    const calls: string[] = [];
    const r = await runAdmitHandlers([handler('a', { admit: true }, calls), handler('b', { admit: true }, calls)], pod, () => admitContext(node, []));
    expect(r).toEqual({ admit: true });
    expect(calls).toEqual(['a', 'b']);
  });

  it('stops at the first rejection, whose reason wins', async () => {
    const calls: string[] = [];
    const r = await runAdmitHandlers(
      [
        handler('a', { admit: true }, calls),
        handler('b', { admit: false, reason: 'UnexpectedAdmissionError', message: 'Allocate failed' }, calls),
        handler('c', { admit: false, reason: 'OutOfcpu', message: 'later' }, calls),
      ],
      pod,
      () => admitContext(node, []),
    );
    expect(r).toEqual({ admit: false, reason: 'UnexpectedAdmissionError', message: 'Allocate failed' });
    expect(calls).toEqual(['a', 'b']);
  });

  it('turns a throw into UnexpectedAdmissionError with its message', async () => {
    const calls: string[] = [];
    const boom: PodAdmitHandler = {
      name: 'boom',
      admit: () => {
        throw new Error('device manager is gone');
      },
    };
    const r = await runAdmitHandlers([boom, handler('after', { admit: true }, calls)], pod, () => admitContext(node, []));
    expect(r).toEqual({ admit: false, reason: 'UnexpectedAdmissionError', message: 'device manager is gone' });
    expect(calls).toEqual([]);
  });

  it('reads the context before each handler, so the predicates see what an earlier handler allocated', async () => {
    let devices: Record<string, string> = {};
    const n = { ...node, allocatable: [...node.allocatable, { allocatable: () => devices }] };
    const allocate: PodAdmitHandler = {
      name: 'devices',
      admit: () => {
        devices = { 'example.com/dev': '1' };
        return { admit: true };
      },
    };
    expect(await runAdmitHandlers([allocate, predicateAdmitHandler], pod, () => admitContext(n, []))).toEqual({ admit: true });
    devices = {};
    // Without the allocating handler first, the extended resource the node does not advertise is ignored; with 0 advertised it is refused.
    const zero = { ...node, allocatable: [...node.allocatable, fixedAllocatable({ 'example.com/dev': '0' })] };
    expect(await runAdmitHandlers([predicateAdmitHandler], pod, () => admitContext(zero, []))).toMatchObject({ admit: false, reason: 'OutOfexample.com/dev' });
  });
});

describe('admitContext', () => {
  it('merges the allocatable contributors in order, a later one winning per resource', () => {
    const ctx: AdmitContext = admitContext(
      { ...node, allocatable: [fixedAllocatable({ cpu: '4', 'example.com/dev': '1' }), fixedAllocatable({ 'example.com/dev': '3' })] },
      [pod],
    );
    expect(ctx).toEqual({ nodeName: 'node-a', nodeLabels: {}, allocatable: { cpu: '4', 'example.com/dev': '3' }, admitted: [pod] });
  });
});

describe('PodController with an admit handler list', () => {
  it("fails a pod with the first rejecting handler's reason and skips the later ones; an admitted pod runs", async () => {
    const provider = new FakeProvider();
    const sink = new FakeSink();
    const events = new FakeEvents();
    const calls: string[] = [];
    const seen: Record<string, string>[] = [];
    const devices: PodAdmitHandler = {
      name: 'devices',
      admit: (p, ctx) => {
        calls.push(`devices ${p.metadata!.name}`);
        seen.push(ctx.allocatable);
        return p.metadata!.name === 'gpu'
          ? { admit: false, reason: 'UnexpectedAdmissionError', message: 'Allocate failed due to no healthy devices' }
          : { admit: true };
      },
    };
    const later: PodAdmitHandler = {
      name: 'later',
      admit: (p) => {
        calls.push(`later ${p.metadata!.name}`);
        return { admit: true };
      },
    };
    const ctrl = new PodController({
      nodeName: 'node-a',
      hostIP: '10.0.0.9',
      log: memoryLogger(),
      route: () => ({ provider }),
      setup: fakeSetup(),
      sink,
      events,
      resyncMs: 3_600_000,
      admitNode: { ...node, allocatable: [...node.allocatable, fixedAllocatable({ 'example.com/dev': '2' })] },
      admitHandlers: [devices, later, predicateAdmitHandler],
    });
    const mk = (name: string) =>
      ({
        metadata: { name, namespace: 'default', uid: `uid-${name}` },
        spec: { nodeName: 'node-a', restartPolicy: 'Always', containers: [{ name: 'main', image: 'registry.test/main:v1' }] },
      }) as V1Pod;
    try {
      ctrl.upsert(mk('gpu'));
      ctrl.upsert(mk('plain'));
      await vi.waitFor(
        () => {
          if (!sink.last('default/gpu') || sink.last('default/plain')?.phase !== 'Running') throw new Error('not yet');
        },
        { timeout: 5000, interval: 5 },
      );
      expect(sink.last('default/gpu')).toMatchObject({
        phase: 'Failed',
        reason: 'UnexpectedAdmissionError',
        message: 'Pod was rejected: Allocate failed due to no healthy devices',
      });
      expect(calls).toEqual(['devices gpu', 'devices plain', 'later plain']);
      expect(seen[0]).toEqual({ cpu: '4', memory: '4Gi', pods: '110', 'example.com/dev': '2' });
      expect(events.list.find((e) => e.regarding.name === 'gpu')).toMatchObject({ type: 'Warning', reason: 'UnexpectedAdmissionError' });
    } finally {
      await ctrl.shutdown();
    }
  });
});
