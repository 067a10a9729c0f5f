/**
 * WebAssembly/wasi-testsuite's preview1 tests as Wasm pods against a real control plane: each of
 * the 72 vendored modules (test/fixtures/wasi-testsuite/) pushed to the test registry and run as
 * a pod of its own (restartPolicy Never), the test's directory — a fresh copy, as the suite's
 * runner preopens it — a hostPath volume mounted at "/", its args as the container's args, its env
 * as the container's env. The pod's exit code (containerStatuses[0].state.terminated) and its log
 * (`kubectl logs`: stdout and stderr together; the one test that expects output writes nothing to
 * stderr) are judged as the suite's runner judges them (test/harness/wasi-testsuite.ts) and
 * compared with the same expectations as `nodelet run` (test/unit/wasi/wasi-testsuite-expectations.json).
 * The pods are BestEffort: their modules run on the provider's shared threads (with JSPI), where
 * `nodelet run` gives its module a thread of its own; both go through the same WASI layer.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pushWasmArtifact } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import {
  compareWithExpectations,
  copyRoot,
  loadWasiTestsuite,
  mapLimit,
  outcomeOf,
  readExpectations,
  type WasiSuiteTest,
  type WasiTestOutcome,
} from '../harness/wasi-testsuite.ts';
import { WASM_TOLERATION } from './support/images.ts';
import { adminClients, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const EXPECTATIONS = resolve(import.meta.dirname, '..', 'unit', 'wasi', 'wasi-testsuite-expectations.json');

describe('wasi-testsuite preview1 in Wasm pods', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'wasi-testsuite-n1';
  const tests = loadWasiTestsuite();
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const roots: Array<() => void> = [];

  beforeAll(async () => {
    reg = await startRegistry();
    await mapLimit(tests, 4, (t) => pushWasmArtifact(reg.host, image(t), 'v1', readFileSync(t.wasm), { format: 'cncf' }));
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'wasi-testsuite');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
    for (const dispose of roots) dispose();
  });

  /** The test's repository in the registry: `wasi-testsuite/<suite>/<name>` (lower case: `_` and `-` are allowed). */
  const image = (t: WasiSuiteTest) => `wasi-testsuite/${t.suite}/${t.name.toLowerCase()}`;
  /** A pod name for the test (DNS label: `_` becomes `-`). */
  const podName = (t: WasiSuiteTest) => `${t.suite}-${t.name}`.toLowerCase().replace(/_/g, '-');

  /** Runs test `t` as a pod; resolves to what the suite's runner would say about it. */
  async function runAsPod(t: WasiSuiteTest): Promise<WasiTestOutcome> {
    const root = copyRoot(t);
    roots.push(root.dispose);
    const name = podName(t);
    const spec: V1PodSpec = {
      nodeName,
      tolerations: [WASM_TOLERATION],
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      volumes: root.dir === undefined ? [] : [{ name: 'root', hostPath: { path: root.dir, type: 'Directory' } }],
      containers: [
        {
          name: 'test',
          image: `${reg.host}/${image(t)}:v1`,
          args: [...t.args],
          env: Object.entries(t.env).map(([key, value]) => ({ name: key, value })),
          volumeMounts: root.dir === undefined ? [] : [{ name: 'root', mountPath: '/' }],
        },
      ],
    };
    await k.core.createNamespacedPod({ namespace: ns, body: { metadata: { name }, spec } });
    const pod: V1Pod = await podUntil(k.core, ns, name, 'finished', (p) => ['Succeeded', 'Failed'].includes(p.status?.phase ?? ''), 120_000);
    const exitCode = pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode ?? null;
    const log = kubectl(info, ['logs', '-n', ns, name]).stdout;
    return outcomeOf(t, exitCode, log, '');
  }

  it('every test passes or fails as the expectations say, as through nodelet run', { timeout: 900_000 }, async () => {
    expect(tests).toHaveLength(72);
    const outcomes = await mapLimit(tests, 12, runAsPod);
    expect(compareWithExpectations(outcomes, readExpectations(EXPECTATIONS))).toEqual([]);
  });
});
