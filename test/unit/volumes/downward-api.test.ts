import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { formatMap, goQuote, isQualifiedName, podFieldValue } from '../../../core/volumes/downward-api/field-path.ts';
import { parseQuantity, quantityMilliValue, quantityValue } from '../../../core/quantity/quantity.ts';
import { resourceFieldValue } from '../../../core/volumes/downward-api/resource-field.ts';
import { tokenRefreshAt, withTokenCache } from '../../../core/volumes/token-cache.ts';
import { FakeObjectSource } from './fakes.ts';

describe('goQuote / formatMap (Go %q, upstream FormatMap)', () => {
  it('escapes like strconv.Quote', () => {
    expect(goQuote('plain')).toBe('"plain"');
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote('\n\t\r\x07\x00\x7f')).toBe('"\\n\\t\\r\\a\\x00\\x7f"');
    expect(goQuote('héllo ✓ 日本')).toBe('"héllo ✓ 日本"');
    expect(goQuote('\u00a0\u200b')).toBe('"\\u00a0\\u200b"');
  });

  it('sorts keys and joins without a trailing newline', () => {
    expect(formatMap({ b: '2', a: '1', A: 'upper' })).toBe('A="upper"\na="1"\nb="2"');
    expect(formatMap({})).toBe('');
    expect(formatMap(undefined)).toBe('');
  });
});

describe('podFieldValue', () => {
  const pod: V1Pod = {
    metadata: { name: 'p', namespace: 'n', uid: 'u', labels: { app: 'x' }, annotations: { 'Example.com/Key': 'v' } },
    spec: { containers: [], nodeName: 'node-a', serviceAccountName: 'sa' },
  };
  const facts = { hostIPs: ['10.0.0.5', 'fd00::5'], podIPs: ['10.1.0.7', 'fd01::7'] };
  it.each([
    ['metadata.name', 'p'],
    ['metadata.namespace', 'n'],
    ['metadata.uid', 'u'],
    ["metadata.labels['app']", 'x'],
    ["metadata.labels['missing']", ''],
    ["metadata.annotations['Example.com/Key']", 'v'],
    ['metadata.labels', 'app="x"'],
    ['spec.nodeName', 'node-a'],
    ['spec.host', 'node-a'],
    ['spec.serviceAccountName', 'sa'],
    ['status.hostIP', '10.0.0.5'],
    ['status.hostIPs', '10.0.0.5,fd00::5'],
    ['status.podIP', '10.1.0.7'],
    ['status.podIPs', '10.1.0.7,fd01::7'],
  ])('%s → %s', (fieldPath, want) => {
    expect(podFieldValue(pod, { fieldPath }, facts)).toBe(want);
  });

  it('rejects bad paths with upstream messages', () => {
    expect(() => podFieldValue(pod, { fieldPath: 'spec.containers' }, facts)).toThrow('field label not supported: spec.containers');
    expect(() => podFieldValue(pod, { apiVersion: 'v2', fieldPath: 'metadata.name' }, facts)).toThrow('unsupported pod version: v2');
    expect(() => podFieldValue(pod, { fieldPath: 'status.phase' }, facts)).toThrow('unsupported fieldPath: status.phase');
    expect(() => podFieldValue(pod, { fieldPath: "metadata.labels['bad key']" }, facts)).toThrow(/invalid key subscript/);
    expect(isQualifiedName('example.com/name')).toBe(true);
    expect(isQualifiedName('-bad')).toBe(false);
  });
});

describe('quantities and resourceFieldRef', () => {
  it('parses and rounds up like resource.Quantity', () => {
    expect(quantityMilliValue(parseQuantity('500m'))).toBe(500n);
    expect(quantityMilliValue(parseQuantity('1.5'))).toBe(1500n);
    expect(quantityValue(parseQuantity('1Gi'))).toBe(1073741824n);
    expect(quantityValue(parseQuantity('1.5k'))).toBe(1500n);
    expect(quantityValue(parseQuantity('2e3'))).toBe(2000n);
    expect(quantityValue(parseQuantity('100m'))).toBe(1n);
    expect(quantityMilliValue(parseQuantity('1n'))).toBe(1n);
    expect(() => parseQuantity('12 apples')).toThrow(/quantities must match/);
  });

  const pod: V1Pod = {
    metadata: { name: 'p' },
    spec: {
      containers: [{ name: 'a', resources: { limits: { cpu: '250m', memory: '64Mi' }, requests: { cpu: '100m', memory: '32Mi' } } }, { name: 'b' }],
    },
  };
  const alloc = { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi' };
  it.each([
    ['a', 'limits.cpu', undefined, '1'],
    ['a', 'limits.cpu', '1m', '250'],
    ['a', 'requests.cpu', '1m', '100'],
    ['a', 'limits.memory', undefined, '67108864'],
    ['a', 'limits.memory', '1Mi', '64'],
    ['a', 'requests.memory', '1Mi', '32'],
    ['b', 'limits.cpu', undefined, '4'],
    ['b', 'limits.memory', '1Gi', '8'],
    ['b', 'requests.memory', undefined, '0'],
    ['b', 'limits.ephemeral-storage', '1Gi', '100'],
  ])('%s %s /%s → %s', (name, resource, divisor, want) => {
    expect(resourceFieldValue(pod, undefined, { containerName: name, resource, ...(divisor ? { divisor } : {}) }, alloc)).toBe(want);
  });

  it('rejects unknown resources and containers', () => {
    expect(() => resourceFieldValue(pod, undefined, { containerName: 'a', resource: 'limits.gpu' }, alloc)).toThrow(
      'unsupported container resource : limits.gpu',
    );
    expect(() => resourceFieldValue(pod, undefined, { containerName: 'zz', resource: 'limits.cpu' }, alloc)).toThrow('container zz not found');
  });
});

describe('token cache', () => {
  it('reuses a token until 80 % of its TTL, then requests a new one', async () => {
    const fake = new FakeObjectSource();
    let now = 1_000_000;
    fake.now = () => now;
    const src = withTokenCache(fake, () => now);
    const opts = { expirationSeconds: 1000, podName: 'p', podUID: 'u' };
    const a = await src.requestServiceAccountToken('n', 'sa', opts);
    now += 799_000;
    expect(await src.requestServiceAccountToken('n', 'sa', opts)).toBe(a);
    await src.requestServiceAccountToken('n', 'sa', { ...opts, audience: 'other' });
    expect(fake.tokenCalls).toHaveLength(2);
    now += 2_000;
    expect((await src.requestServiceAccountToken('n', 'sa', opts)).token).not.toBe(a.token);
    expect(tokenRefreshAt(new Date(200_000_000), 100_000).getTime()).toBe(200_000_000 - 20_000_000);
    expect(tokenRefreshAt(new Date(400_000_000_000), 200_000_000).getTime()).toBe(400_000_000_000 - 200_000_000_000 + 86_400_000);
  });

  it("drops a pod's tokens when it is forgotten, and only that pod's", async () => {
    const fake = new FakeObjectSource();
    const src = withTokenCache(fake);
    const a = { expirationSeconds: 3600, podName: 'a', podUID: 'uid-a' };
    const b = { expirationSeconds: 3600, podName: 'b', podUID: 'uid-b' };
    await src.requestServiceAccountToken('n', 'sa', a);
    await src.requestServiceAccountToken('n', 'sa', b);
    src.forgetPod?.('uid-a');
    await src.requestServiceAccountToken('n', 'sa', a); // asked again: a new TokenRequest
    await src.requestServiceAccountToken('n', 'sa', b); // still cached
    expect(fake.tokenCalls).toHaveLength(3);
  });

  it("joins a request in flight for the same token (a pod's prefetch, then its volume), and forgets a failed one", async () => {
    const fake = new FakeObjectSource();
    const src = withTokenCache(fake);
    const opts = { expirationSeconds: 3600, podName: 'p', podUID: 'u' };
    const [a, b] = await Promise.all([src.requestServiceAccountToken('n', 'sa', opts), src.requestServiceAccountToken('n', 'sa', opts)]);
    expect(b).toBe(a);
    expect(fake.tokenCalls).toHaveLength(1);
    let fail = true;
    const flaky = withTokenCache({
      getConfigMap: (ns, n) => fake.getConfigMap(ns, n),
      getSecret: (ns, n) => fake.getSecret(ns, n),
      requestServiceAccountToken: (ns, sa, o) => (fail ? Promise.reject(new Error('forbidden')) : fake.requestServiceAccountToken(ns, sa, o)),
    });
    await expect(Promise.all([flaky.requestServiceAccountToken('n', 'sa', opts), flaky.requestServiceAccountToken('n', 'sa', opts)])).rejects.toThrow(
      'forbidden',
    );
    fail = false;
    expect((await flaky.requestServiceAccountToken('n', 'sa', opts)).token).toMatch(/^token-2-/); // asked again, not the failure
    expect(fake.tokenCalls).toHaveLength(2);
  });
});
