import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { API_VERSION, type PodObject, type PodProvider } from '@nodelet/plugin-api/v1';
import { deleteDanglingPods } from '../../../core/pods/index.ts';
import { memoryLogger } from './fakes.ts';

const UID_A = '11111111-1111-1111-1111-111111111111';
const UID_B = '22222222-2222-2222-2222-222222222222';
const UID_S = '33333333-3333-3333-3333-333333333333';
const obj = (name: string, uid: string): PodObject => ({
  metadata: { namespace: 'default', name, uid },
  spec: { containers: [{ name: 'main' }] },
  raw: { metadata: { namespace: 'default', name, uid } },
});
const bound = (uid: string): V1Pod => ({ metadata: { namespace: 'default', name: uid.slice(0, 1), uid }, spec: { containers: [] } });

function provider(kept: readonly PodObject[] | (() => Promise<readonly PodObject[]>)) {
  const deleted: string[] = [];
  const p: PodProvider = {
    name: 'vm',
    apiVersion: API_VERSION,
    architecture: 'a',
    os: 'o',
    runtimeVersion: 'vm://1',
    pods: {
      createPod: async () => undefined,
      deletePod: async (pod, ctx, grace) => {
        deleted.push(`${pod.metadata.name} grace=${grace} dir=${ctx.podDir}`);
        await expect(ctx.resolveContainer('main')).rejects.toThrow(/no longer bound to this node/);
      },
      getPodStatus: () => undefined,
      getPods: typeof kept === 'function' ? kept : async () => kept,
    },
  };
  return { p, deleted };
}

describe('pods a pod provider kept across a restart', () => {
  it('deletes (grace 0) those no pod of this node claims and leaves the claimed ones to their sync', async () => {
    const { p, deleted } = provider([obj('a', UID_A), obj('b', UID_B), obj('s', UID_S)]);
    const logs: string[] = [];
    const n = await deleteDanglingPods([p], [bound(UID_A), bound(UID_S)], '/var/lib/nodelet/pods', memoryLogger(logs));
    expect(n).toBe(1);
    expect(deleted).toEqual([`b grace=0 dir=/var/lib/nodelet/pods/${UID_B}`]);
    expect(logs.some((l) => l.includes('deleted a pod no longer bound to this node'))).toBe(true);
  });

  it('ignores a listed pod whose UID could name a path, and survives a provider that cannot list', async () => {
    const { p, deleted } = provider([obj('evil', '../../etc')]);
    const logs: string[] = [];
    expect(await deleteDanglingPods([p], [], '/r/pods', memoryLogger(logs))).toBe(0);
    expect(deleted).toEqual([]);
    expect(logs.some((l) => l.includes('without a valid UID'))).toBe(true);
    const broken = provider(() => Promise.reject(new Error('agent down')));
    expect(await deleteDanglingPods([broken.p], [], '/r/pods', memoryLogger(logs))).toBe(0);
    expect(logs.some((l) => l.includes('could not list the pods the provider kept'))).toBe(true);
  });
});
