/**
 * Global setup of the e2e project: one real control plane for all e2e test
 * files (each test uses its own namespace and node names), torn down at the
 * end even when tests fail.
 */
import type { TestProject } from 'vitest/node';
import { startControlPlane, stopControlPlane, type ClusterInfo } from '../cluster/control-plane.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    cluster: ClusterInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Certificates signed for CSRs live 2 minutes (plus the signer's 5-minute backdating), so
  // tls-bootstrap.test.ts sees client and serving certificates rotate; no other test uses CSRs.
  const { info, peers } = await startControlPlane({ nodeMonitorGracePeriod: '20s', clusterSigningDuration: '2m' });
  project.provide('cluster', info);
  return async () => {
    await stopControlPlane(info, peers);
  };
}
