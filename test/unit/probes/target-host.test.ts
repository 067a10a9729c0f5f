/** Where probes and hooks connect when their action names no host. */
import { describe, expect, it } from 'vitest';
import { targetHost } from '../../../core/probes/target-host.ts';
import { httpUrl } from '../../../core/probes/run-action.ts';

describe('targetHost', () => {
  it("is the pod's IP when it has one, else the first of podIPs", () => {
    expect(targetHost({ status: { podIP: '10.244.1.7', podIPs: [{ ip: '10.244.1.7' }] } })).toBe('10.244.1.7');
    expect(targetHost({ status: { podIPs: [{ ip: 'fd00::7' }] } })).toBe('fd00::7');
  });
  it('is 127.0.0.1 with hostNetwork or without a pod IP', () => {
    expect(targetHost({ spec: { hostNetwork: true, containers: [] }, status: { podIP: '192.168.1.4' } })).toBe('127.0.0.1');
    expect(targetHost({ status: {} })).toBe('127.0.0.1');
  });
  it('builds upstream-shaped URLs (IPv6 in brackets, scheme lower-cased, path kept)', () => {
    expect(httpUrl({ port: 8080, path: '/healthz?x=1', scheme: 'HTTPS' }, 'fd00::7', 8080).href).toBe('https://[fd00::7]:8080/healthz?x=1');
    expect(httpUrl({ port: 80 }, '10.0.0.1', 8081).href).toBe('http://10.0.0.1:8081/');
  });
});
