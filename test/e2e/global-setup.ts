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
  const { info, peers } = await startControlPlane({ nodeMonitorGracePeriod: '20s' });
  project.provide('cluster', info);
  return async () => { await stopControlPlane(info, peers); };
}
