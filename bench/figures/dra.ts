/**
 * Figure 6, DRA.
 *   Registration: the DRA test driver (test/peers/dra-test-driver.ts) creates
 *     `<root>/plugins_registry/<driver>-reg.sock`; from that socket's creation
 *     time to the receipt of a watch event showing its ResourceSlice for the node.
 *   Claim → Running: a pod with a ResourceClaimTemplate; from the receipt of the
 *     watch event showing the generated claim allocated (by the real scheduler) to
 *     the receipt of the pod watch event with phase Running (nodelet prepares the
 *     claim with NodePrepareResources before the container starts).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { ClusterInfo } from '../../test/cluster/control-plane.ts';
import { DRA_TEST_DRIVER_NAME, startDraTestDriver } from '../../test/peers/dra-test-driver.ts';
import { NODELET_NODE, type Clients } from '../lib/env.ts';
import { createNamespace, drainNamespace, podSpec } from '../lib/pods.ts';
import { watchUntil } from '../lib/watch-until.ts';
import type { PluginFigure } from './plugins.ts';

/** Result of the DRA figures. */
export interface DraResult {
  registration: PluginFigure;
  claimToRunning: PluginFigure;
}

const CLASS = 'bench-dra.nodelet.dev';
const NS = 'bench-dra';

/** Measures both DRA figures; an error becomes the `notAvailable` reason of both. */
export async function measureDra(c: Clients, info: ClusterInfo, rootDir: string, image: string): Promise<DraResult> {
  const resource = c.kc.makeApiClient(k8s.ResourceV1Api);
  const slices = await watchUntil<k8s.V1ResourceSlice>(
    c.kc,
    '/apis/resource.k8s.io/v1/resourceslices',
    `spec.nodeName=${NODELET_NODE}`,
    (s) => s.spec.driver === DRA_TEST_DRIVER_NAME,
    30_000,
  );
  const cdiDir = join(rootDir, 'bench-cdi');
  mkdirSync(cdiDir, { recursive: true });
  const driver = await startDraTestDriver(info, { nodeName: NODELET_NODE, rootDir, cdiDir, kubeconfig: info.adminKubeconfig });
  try {
    const st = statSync(driver.registrationSocket);
    const t0 = st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs;
    const t1 = await slices.at.catch((e: Error) => e);
    slices.stop();
    const registration: PluginFigure = t1 instanceof Error ? { notAvailable: `no ResourceSlice: ${t1.message}` } : { ms: Math.round(t1 - t0) };

    await resource.createDeviceClass({
      body: { metadata: { name: CLASS }, spec: { selectors: [{ cel: { expression: `device.driver == "${DRA_TEST_DRIVER_NAME}"` } }] } },
    });
    await createNamespace(c, NS);
    await resource.createNamespacedResourceClaimTemplate({
      namespace: NS,
      body: { metadata: { name: 'one' }, spec: { spec: { devices: { requests: [{ name: 'req', exactly: { deviceClassName: CLASS } }] } } } },
    });
    const allocated = await watchUntil<k8s.ResourceV1ResourceClaim>(
      c.kc,
      `/apis/resource.k8s.io/v1/namespaces/${NS}/resourceclaims`,
      undefined,
      (rc) => !!rc.status?.allocation,
      60_000,
    );
    const running = await watchUntil<k8s.V1Pod>(c.kc, `/api/v1/namespaces/${NS}/pods`, 'metadata.name=dra-1', (p) => p.status?.phase === 'Running', 60_000);
    try {
      await c.core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: 'dra-1' },
          spec: podSpec('nodelet', image, ['1000000'], {
            resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one' }],
          }),
        },
      });
      const [a, r] = await Promise.all([allocated.at.catch((e: Error) => e), running.at.catch((e: Error) => e)]);
      const claimToRunning: PluginFigure =
        a instanceof Error
          ? { notAvailable: `claim never allocated: ${a.message}` }
          : r instanceof Error
            ? { notAvailable: `pod never Running: ${r.message}` }
            : { ms: Math.round(r - a) };
      return { registration, claimToRunning };
    } finally {
      allocated.stop();
      running.stop();
      await drainNamespace(c, NS).catch(() => undefined);
      await resource.deleteDeviceClass({ name: CLASS }).catch(() => undefined);
    }
  } finally {
    slices.stop();
    await driver.stop();
  }
}
