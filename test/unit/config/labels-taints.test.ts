import { describe, expect, it } from 'vitest';
import { isKubeletLabel, labelKeyError, labelValueError, parseNodeLabels } from '../../../core/config/labels.ts';
import { NODELET_DEFAULT_TAINT, parseTaint, parseTaints, registrationTaints } from '../../../core/config/taints.ts';

describe('label syntax', () => {
  it.each(['a', 'app', 'example.com/role', 'a-b_c.d', 'x'.repeat(63), `${'a'.repeat(253)}/n`])('accepts key %j', (k) => {
    expect(labelKeyError(k)).toBeUndefined();
  });
  it.each(['', '-a', 'a-', 'Example.com/x', 'a/b/c', '/x', 'x/', 'x'.repeat(64), 'a b', 'ex_ample.com/x'])('rejects key %j', (k) => {
    expect(labelKeyError(k)).toMatch(/label key/);
  });
  it.each(['', 'v', 'V1.2_3-x'])('accepts value %j', (v) => expect(labelValueError(v)).toBeUndefined());
  it.each(['-v', 'v-', 'a b', 'x'.repeat(64), 'a/b'])('rejects value %j', (v) => {
    expect(labelValueError(v)).toMatch(/label value/);
  });
});

describe('kubelet-allowed labels', () => {
  it.each([
    'kubernetes.io/hostname',
    'kubernetes.io/arch',
    'topology.kubernetes.io/zone',
    'node.kubernetes.io/instance-type',
    'node.kubernetes.io/anything',
    'foo.node.kubernetes.io/x',
    'kubelet.kubernetes.io/x',
    'a.kubelet.kubernetes.io/y',
  ])('allows %s', (k) => expect(isKubeletLabel(k)).toBe(true));
  it.each(['node-role.kubernetes.io/worker', 'kubernetes.io/role', 'k8s.io/x', 'app.kubernetes.io/name'])('refuses %s', (k) =>
    expect(isKubeletLabel(k)).toBe(false),
  );
});

describe('parseNodeLabels', () => {
  it('parses k=v pairs, trimming, allowing empty values and refusing = in values', () => {
    expect(parseNodeLabels('a=b, example.com/c = d ,e=')).toEqual({ a: 'b', 'example.com/c': 'd', e: '' });
    expect(() => parseNodeLabels('a=b=c')).toThrow(/label value "b=c"/);
  });
  it('accepts an empty string and empty items', () => {
    expect(parseNodeLabels('')).toEqual({});
    expect(parseNodeLabels('a=1,,')).toEqual({ a: '1' });
  });
  it('rejects a pair without =', () => {
    expect(() => parseNodeLabels('a=1,b')).toThrow('malformed pair "b", expected key=value');
  });
  it('rejects restricted kubernetes.io and k8s.io keys, naming them', () => {
    expect(() => parseNodeLabels('node-role.kubernetes.io/worker=')).toThrow(/"node-role.kubernetes.io\/worker" is in the restricted/);
    expect(() => parseNodeLabels('x.k8s.io/y=z')).toThrow(/"x.k8s.io\/y"/);
  });
  it('allows kubelet label namespaces', () => {
    expect(parseNodeLabels('node.kubernetes.io/pool=wasm')).toEqual({ 'node.kubernetes.io/pool': 'wasm' });
  });
});

describe('taints', () => {
  it('parses key=value:Effect and key:Effect', () => {
    expect(parseTaint('dedicated=wasm:NoSchedule')).toEqual({ key: 'dedicated', value: 'wasm', effect: 'NoSchedule' });
    expect(parseTaint('example.com/gpu:NoExecute')).toEqual({ key: 'example.com/gpu', effect: 'NoExecute' });
    expect(parseTaint('k=:PreferNoSchedule')).toEqual({ key: 'k', effect: 'PreferNoSchedule' });
  });
  it.each([
    ['k=v', /expected key=value:Effect/],
    ['k=v:Sometimes', /effect must be one of NoSchedule, PreferNoSchedule, NoExecute/],
    ['k=v=w:NoSchedule', /expected key=value:Effect/],
    ['k=v:NoSchedule:x', /expected key=value:Effect/],
    ['-k=v:NoSchedule', /label key "-k"/],
    ['k=-v:NoSchedule', /label value "-v"/],
  ])('rejects %j', (spec, msg) => {
    expect(() => parseTaint(spec)).toThrow(msg);
  });
  it('parses a list and refuses duplicates of key and effect', () => {
    expect(parseTaints('a=1:NoSchedule,a=2:NoExecute')).toHaveLength(2);
    expect(parseTaints('')).toEqual([]);
    expect(() => parseTaints('a=1:NoSchedule,a=2:NoSchedule')).toThrow('duplicate taint "a:NoSchedule"');
  });
  it('adds the nodelet default taint once, only when enabled', () => {
    const own = { key: 'x', effect: 'NoExecute' } as const;
    expect(registrationTaints({ registerWithTaints: [own], defaultTaint: true })).toEqual([own, NODELET_DEFAULT_TAINT]);
    expect(registrationTaints({ registerWithTaints: [own], defaultTaint: false })).toEqual([own]);
    expect(registrationTaints({ registerWithTaints: [NODELET_DEFAULT_TAINT], defaultTaint: true })).toHaveLength(1);
    expect(NODELET_DEFAULT_TAINT).toEqual({ key: 'kubernetes.io/arch', value: 'wasm32-wasi', effect: 'NoSchedule' });
  });
});
