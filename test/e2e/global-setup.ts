/**
 * Global setup of the e2e project: one real control plane for all e2e test
 * files (each test uses its own namespace and node names), torn down at the
 * end even when tests fail.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startControlPlane, stopControlPlane, type ClusterInfo } from '../cluster/control-plane.ts';
import { killListedWasiRuntimes } from '../harness/wasi-runtimes.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    cluster: ClusterInfo;
    /** A file listing the root dirs of the nodelets tests started (their WASI runtimes are killed at the end). */
    wasiRuntimeList: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Certificates signed for CSRs live 2 minutes (plus the signer's 5-minute backdating), so
  // tls-bootstrap.test.ts sees client and serving certificates rotate; no other test uses CSRs.
  const { info, peers } = await startControlPlane({ nodeMonitorGracePeriod: '20s', clusterSigningDuration: '2m' });
  project.provide('cluster', info);
  // WASI runtimes outlive their nodelet on purpose; the harness ends each one, and this ends any a
  // crashed or killed test worker left behind.
  const runtimes = mkdtempSync(join(tmpdir(), 'nodelet-e2e-runtimes-'));
  const wasiRuntimeList = join(runtimes, 'root-dirs');
  project.provide('wasiRuntimeList', wasiRuntimeList);
  return async () => {
    await killListedWasiRuntimes(wasiRuntimeList);
    rmSync(runtimes, { recursive: true, force: true });
    await stopControlPlane(info, peers);
  };
}
