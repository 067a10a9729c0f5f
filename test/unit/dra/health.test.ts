// DRA device health: the cache (timeouts, Unknown defaults, changes), the
// allocatedResourcesStatus a prepared claim gives its containers (upstream
// names and resource ids), and the watch that feeds the cache from a driver's
// stream and resyncs the pods using a device whose health changed.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResourceV1ResourceClaim, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import { draStatusContributor } from '../../../core/dra/allocated-resources-status.ts';
import { DraManager } from '../../../core/dra/dra-manager.ts';
import type { DraDriverClient, HealthWatchHandlers } from '../../../core/dra/driver-client.ts';
import { DraDriverRegistry } from '../../../core/dra/driver-registry.ts';
import { DeviceHealthCache } from '../../../core/dra/health-info.ts';
import { startHealthWatch } from '../../../core/dra/health-watch.ts';
import { memLogger } from '../devices/helpers.ts';

const DRV = 'drv.example.com';

describe('DeviceHealthCache', () => {
  it('reads Unknown until reported and after the timeout; reports what changed, including timed-out devices', () => {
    let now = 0;
    const c = new DeviceHealthCache(() => now);
    expect(c.get(DRV, 'p', 'd0')).toEqual({ health: 'Unknown', message: '' });
    expect(
      c.update(DRV, [
        { poolName: 'p', deviceName: 'd0', health: 'Healthy', timeoutSeconds: 60 },
        { poolName: 'p', deviceName: 'd1', health: 'Unhealthy', message: 'x'.repeat(2000) },
      ]),
    ).toEqual([
      { poolName: 'p', deviceName: 'd0' },
      { poolName: 'p', deviceName: 'd1' },
    ]);
    expect(c.get(DRV, 'p', 'd1').message).toBe(`${'x'.repeat(1021)}...`);
    // The same report again: nothing changed.
    expect(c.update(DRV, [{ poolName: 'p', deviceName: 'd0', health: 'Healthy', timeoutSeconds: 60 }])).toEqual([]);
    now = 31_000; // d1 (default 30 s) timed out; d0 (60 s) did not
    expect(c.get(DRV, 'p', 'd1')).toEqual({ health: 'Unknown', message: '' });
    expect(c.get(DRV, 'p', 'd0').health).toBe('Healthy');
    expect(c.update(DRV, [{ poolName: 'p', deviceName: 'd0', health: 'Healthy', timeoutSeconds: 60 }])).toEqual([{ poolName: 'p', deviceName: 'd1' }]);
    expect(c.clearDriver(DRV)).toEqual([
      { poolName: 'p', deviceName: 'd0' },
      { poolName: 'p', deviceName: 'd1' },
    ]);
    expect(c.get(DRV, 'p', 'd0').health).toBe('Unknown');
  });
});

/** A driver with two devices per claim (requests a and b) and a health stream the test feeds. */
function healthDriver() {
  const watchers: HealthWatchHandlers[] = [];
  let cancelled = 0;
  const client: DraDriverClient = {
    async nodePrepareResources(claims) {
      return Object.fromEntries(
        claims.map((c) => [
          c.uid,
          {
            devices: [
              { requestNames: ['a'], poolName: 'p', deviceName: 'd0', cdiDeviceIds: [`${DRV}/t=${c.uid}-a`] },
              { requestNames: ['b'], poolName: 'p', deviceName: 'd1', cdiDeviceIds: [] },
            ],
          },
        ]),
      );
    },
    async nodeUnprepareResources(claims) {
      return Object.fromEntries(claims.map((c) => [c.uid, {}]));
    },
    watchHealth(h) {
      watchers.push(h);
      return () => {
        cancelled++;
        h.onEnd();
      };
    },
    close: () => undefined,
  };
  return { client, watchers, cancelled: () => cancelled };
}

const claim: ResourceV1ResourceClaim = {
  metadata: { name: 'gpu-claim', namespace: 'ns', uid: 'cu1' },
  spec: {},
  status: {
    reservedFor: [{ resource: 'pods', name: 'x', uid: 'pu1' }],
    allocation: { devices: { results: [{ request: 'a', driver: DRV, pool: 'p', device: 'd0' }] } },
  },
} as ResourceV1ResourceClaim;

const pod: V1Pod = {
  metadata: { name: 'x', namespace: 'ns', uid: 'pu1' },
  spec: {
    resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu-claim' }],
    containers: [
      { name: 'all', resources: { claims: [{ name: 'gpu' }] } },
      { name: 'only-b', resources: { claims: [{ name: 'gpu', request: 'b' }] } },
      { name: 'none' },
    ],
  },
};

const status = (): V1PodStatus => ({
  phase: 'Running',
  containerStatuses: ['all', 'only-b', 'none'].map((name) => ({ name, image: 'i', imageID: '', ready: true, restartCount: 0 })),
});

describe('DRA allocatedResourcesStatus and the health watch', () => {
  it('reports each claim reference with its devices (CDI id or driver/pool/device) and their health, resyncing the pods on a change', async () => {
    const drivers = new DraDriverRegistry({ graceMs: 1000, log: memLogger() });
    const manager = new DraManager({
      checkpointPath: join(mkdtempSync(join(tmpdir(), 'nodelet-dra-health-')), 'dra_manager_state'),
      drivers,
      log: memLogger(),
      getClaim: async () => claim,
      activePods: () => [pod],
      sourcesReady: () => true,
    });
    const cache = new DeviceHealthCache();
    const resynced: string[][] = [];
    const stop = startHealthWatch({ drivers, cache, manager, log: memLogger(), onChange: (uids) => resynced.push(uids), retryMs: 10 });
    const d = healthDriver();
    drivers.register(DRV, '/a', d.client);
    expect(d.watchers).toHaveLength(1);
    await manager.prepare(pod);
    const contributor = draStatusContributor(manager, cache);
    const byName = (s: V1PodStatus) => Object.fromEntries(s.containerStatuses!.map((c) => [c.name, c.allocatedResourcesStatus]));

    expect(byName(contributor.contribute(pod, status()))).toEqual({
      all: [
        {
          name: 'claim:gpu',
          resources: [
            { resourceID: `${DRV}/t=cu1-a`, health: 'Unknown' },
            { resourceID: `${DRV}/p/d1`, health: 'Unknown' },
          ],
        },
      ],
      'only-b': [{ name: 'claim:gpu/b', resources: [{ resourceID: `${DRV}/p/d1`, health: 'Unknown' }] }],
      none: undefined,
    });

    d.watchers[0]!.onReport([{ poolName: 'p', deviceName: 'd1', health: 'Unhealthy', message: 'ECC errors' }]);
    expect(resynced).toEqual([['pu1']]);
    expect(byName(contributor.contribute(pod, status()))['only-b']).toEqual([
      { name: 'claim:gpu/b', resources: [{ resourceID: `${DRV}/p/d1`, health: 'Unhealthy', message: 'ECC errors' }] },
    ]);
    // A device no claim here uses changes: no pod to resync.
    d.watchers[0]!.onReport([
      { poolName: 'p', deviceName: 'd1', health: 'Unhealthy', message: 'ECC errors' },
      { poolName: 'p', deviceName: 'd9', health: 'Healthy' },
    ]);
    expect(resynced).toHaveLength(1);

    // The stream ends while the driver stays registered: health forgotten (pods resynced), the stream reopened.
    d.watchers[0]!.onEnd(new Error('driver restarting'));
    expect(resynced).toHaveLength(2);
    expect(cache.get(DRV, 'p', 'd1').health).toBe('Unknown');
    await vi.waitFor(() => expect(d.watchers).toHaveLength(2));

    // Once the pod no longer uses the claim, its containers report nothing from DRA.
    await manager.release('pu1');
    expect(byName(contributor.contribute(pod, status())).all).toBeUndefined();
    stop();
    expect(d.cancelled()).toBe(1);
    drivers.stop();
  });
});
