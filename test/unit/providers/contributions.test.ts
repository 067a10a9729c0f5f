import { describe, expect, it } from 'vitest';
import { API_VERSION, type NodeContribution, type Provider } from '@nodelet/plugin-api/v1';
import { describeConflict, mergeContributions } from '../../../core/providers/index.ts';

const provider = (name: string, node?: () => NodeContribution): Provider => ({
  name,
  apiVersion: API_VERSION,
  handlers: [name],
  architecture: 'a',
  os: 'o',
  runtimeVersion: 'r',
  node,
  pullImage: () => Promise.reject(new Error('unused')),
  startContainer: () => Promise.reject(new Error('unused')),
});

describe('mergeContributions', () => {
  it('merges disjoint contributions from all providers', () => {
    const { contribution, conflicts } = mergeContributions([
      provider('wasi', () => ({
        labels: { 'nodelet.dev/wasi': 'true' },
        capacity: { 'nodelet.dev/wasm-slots': '64' },
        taints: [{ key: 'wasi', effect: 'NoSchedule' }],
      })),
      provider('js', () => ({ labels: { 'nodelet.dev/js': 'true' }, conditions: [{ type: 'JsReady', status: 'True', reason: 'Ok', message: 'ok' }] })),
      provider('plain'),
    ]);
    expect(conflicts).toEqual([]);
    expect(contribution.labels).toEqual({ 'nodelet.dev/wasi': 'true', 'nodelet.dev/js': 'true' });
    expect(contribution.capacity).toEqual({ 'nodelet.dev/wasm-slots': '64' });
    expect(contribution.taints).toEqual([{ key: 'wasi', effect: 'NoSchedule' }]);
    expect(contribution.conditions?.map((c) => c.type)).toEqual(['JsReady']);
  });

  it('keeps the first value of a contested key and reports every conflict; equal values are no conflict', () => {
    const { contribution, conflicts } = mergeContributions([
      provider('wasi', () => ({
        labels: { tier: 'wasm', shared: 'yes' },
        capacity: { slots: '64' },
        taints: [{ key: 'k', value: 'a', effect: 'NoSchedule' }],
      })),
      provider('js', () => ({ labels: { tier: 'js', shared: 'yes' }, capacity: { slots: '8' }, taints: [{ key: 'k', value: 'b', effect: 'NoSchedule' }] })),
    ]);
    expect(contribution.labels).toEqual({ tier: 'wasm', shared: 'yes' });
    expect(contribution.capacity).toEqual({ slots: '64' });
    expect(conflicts.map(describeConflict)).toEqual([
      'labels tier: js\'s "js" dropped, wasi\'s "wasm" kept',
      'capacity slots: js\'s "8" dropped, wasi\'s "64" kept',
      'taints k:NoSchedule: js\'s "b" dropped, wasi\'s "a" kept',
    ]);
  });

  it('reports a provider whose node() throws and merges the rest', () => {
    const { contribution, conflicts } = mergeContributions([
      provider('bad', () => {
        throw new Error('no host info');
      }),
      provider('ok', () => ({ labels: { a: '1' } })),
    ]);
    expect(contribution.labels).toEqual({ a: '1' });
    expect(conflicts).toMatchObject([{ field: 'node()', key: 'bad', dropped: { value: 'no host info' } }]);
  });
});
