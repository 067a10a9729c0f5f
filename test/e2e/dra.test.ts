/**
 * Dynamic Resource Allocation end to end: Kubernetes' DRA test driver (real
 * binary, test/peers/dra-test-driver.ts) registers with nodelet through
 * plugins_registry (type DRAPlugin) and publishes a ResourceSlice; the real
 * scheduler allocates devices to ResourceClaims (from a template, and one
 * shared claim); nodelet prepares each claim once, hands the CDI env to the
 * containers that reference the claim, checkpoints it across a restart,
 * unprepares it when the last pod using it finished (before the pod's
 * Succeeded status is posted) or is gone (the driver removes its CDI file),
 * deletes at start a ResourceSlice of this node whose driver never registers,
 * reports the claim's devices in allocatedResourcesStatus (health from the
 * driver's v1alpha1 stream), makes a pod wait with FailedPrepareDynamicResources while the driver is
 * away, and removes a stopped driver's ResourceSlices after the (shortened)
 * grace period — also those of a driver killed with its sockets left behind
 * (it never deregisters; nodelet sees its connection lost).
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { DRA_TEST_DRIVER_NAME as DRIVER, startDraTestDriver, type DraTestDriver } from '../peers/dra-test-driver.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { clientOn, dialUnix } from '../../sockets/dial.ts';
import { loadPodResources } from '../../sockets/podresources.ts';
import type { ListPodResourcesResponse__Output } from '../../sockets/generated/podresources/v1/ListPodResourcesResponse.ts';

const GRACE_S = 15;
const CLASS = 'dra-e2e.nodelet.dev';
/** A driver that published a slice for the node before nodelet started and never comes back. */
const GONE_DRIVER = 'gone.dra-e2e.nodelet.dev';

describe('DRA on nodelet', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const resource = k.kc.makeApiClient(k8s.ResourceV1Api);
  const nodeName = 'dra-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let driver: DraTestDriver | undefined;
  let cdiDir: string;
  const img: Record<string, string> = {};
  const driverLogs: string[] = [];
  let staleSlice = '';

  const startDriver = async () => {
    driver = await startDraTestDriver(info, { nodeName, rootDir: nodelet.rootDir, cdiDir });
  };
  const stopDriver = async () => {
    if (!driver) return;
    driverLogs.push(driver.log());
    await driver.stop();
    driver = undefined;
  };
  const allDriverLogs = () => [...driverLogs, driver?.log() ?? ''].join('\n');
  const slices = async () => (await resource.listResourceSlice({ fieldSelector: `spec.nodeName=${nodeName}` })).items.filter((s) => s.spec.driver === DRIVER);
  const cdiFiles = (claimUID: string) => readdirSync(cdiDir).filter((f) => f.includes(claimUID));
  const nodeletLog = () => readFileSync(nodelet.logFile, 'utf8');
  /** Lines of `text` that contain every one of `needles`. */
  const count = (text: string, ...needles: string[]) => text.split('\n').filter((l) => needles.every((n) => l.includes(n))).length;

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['hello', 'sleep']) img[m] = await pushModule(reg, m);
    cdiDir = mkdtempSync(join(tmpdir(), 'nodelet-dra-cdi-'));
    staleSlice = (
      await resource.createResourceSlice({
        body: {
          metadata: { generateName: 'stale-' },
          spec: { driver: GONE_DRIVER, nodeName, pool: { name: nodeName, generation: 1, resourceSliceCount: 1 }, devices: [{ name: 'dev-0' }] },
        },
      })
    ).metadata!.name!;
    nodelet = await startNodelet(info, nodeName, [`--dra-plugin-deregistration-grace-period=${GRACE_S}s`, `--cdi-spec-dirs=${cdiDir}`]);
    ns = await podNamespace(k.core, 'dra');
    await waitNodeReady(k.core, nodeName);
    await resource
      .createDeviceClass({ body: { metadata: { name: CLASS }, spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] } } })
      .catch((e: { code?: number }) => {
        if (e.code !== 409) throw e;
      });
  });
  afterAll(async () => {
    await stopDriver();
    if (nodelet && existsSync(nodelet.logFile)) copyFileSync(nodelet.logFile, join(tmpdir(), 'nodelet-dra-e2e.log'));
    console.log(`dra-test-driver log tail:\n${allDriverLogs().split('\n').slice(-40).join('\n')}`);
    await nodelet?.dispose();
    await reg?.stop();
    rmSync(cdiDir, { recursive: true, force: true });
    for (const s of await slices().catch(() => [])) await resource.deleteResourceSlice({ name: s.metadata!.name! }).catch(() => undefined);
    if (staleSlice) await resource.deleteResourceSlice({ name: staleSlice }).catch(() => undefined);
  });

  const pod = (name: string, image: string, claims: k8s.V1PodResourceClaim[], args: string[] = [], restartPolicy = 'Never'): V1Pod => ({
    metadata: { name },
    spec: {
      restartPolicy,
      tolerations: [WASM_TOLERATION],
      nodeSelector: { 'kubernetes.io/hostname': nodeName },
      resourceClaims: claims,
      containers: [{ name: 'main', image, args, resources: { claims: claims.map((c) => ({ name: c.name })) } }],
    },
  });
  const create = (p: V1Pod) => k.core.createNamespacedPod({ namespace: ns, body: p });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 120_000) => podUntil(k.core, ns, name, what, ok, ms);
  /** `List` on nodelet's podresources socket. */
  const podResourcesList = async () => {
    const client = clientOn((await loadPodResources()).PodResourcesLister, await dialUnix(join(nodelet.rootDir, 'pod-resources', 'kubelet.sock'), 5000));
    try {
      const r = await new Promise<ListPodResourcesResponse__Output>((resolve, reject) => client.List({}, (err, x) => (err || !x ? reject(err) : resolve(x))));
      return r.pod_resources;
    } finally {
      client.close();
    }
  };
  const gone = async (name: string) => {
    await k.core.deleteNamespacedPod({ name, namespace: ns }).catch(() => undefined);
    await eventually(`${name} deleted`, async () => !(await k.core.listNamespacedPod({ namespace: ns })).items.some((p) => p.metadata?.name === name), 90_000);
  };

  it("at start nodelet deletes the node's ResourceSlices, so a slice of a driver that never registers is gone", async () => {
    await eventually('stale ResourceSlice deleted', async () => {
      const left = (await resource.listResourceSlice({ fieldSelector: `spec.nodeName=${nodeName}` })).items;
      return !left.some((x) => x.metadata?.name === staleSlice) || undefined;
    });
    expect(nodeletLog()).toContain("Deleted this node's ResourceSlices at start");
  });

  it('the driver registers: nodelet connects to it, and its ResourceSlice for the node appears', async () => {
    await startDriver();
    await eventually('ResourceSlice for the node', async () => (await slices()).length > 0 || undefined, 60_000, 250);
    await eventually('nodelet registered the driver', async () => /Registered DRA plugin/.test(nodeletLog()) || undefined, 30_000);
    expect(count(nodeletLog(), 'Registered DRA plugin', 'v1.DRAPlugin')).toBe(1);
  });

  it('a ResourceClaimTemplate pod: the scheduler allocates, nodelet prepares, the container sees claim_* env, the claim is unprepared once the pod finished, before its Succeeded status and its deletion', async () => {
    await resource.createNamespacedResourceClaimTemplate({
      namespace: ns,
      body: { metadata: { name: 'one' }, spec: { spec: { devices: { requests: [{ name: 'req', exactly: { deviceClassName: CLASS } }] } } } },
    });
    await create(pod('t1', img.hello!, [{ name: 'gpu', resourceClaimTemplateName: 'one' }]));
    const done = await until('t1', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    // The generated claim is deleted by the resourceclaim controller once the pod is done: its UID comes from nodelet's log.
    const claimName = done.status!.resourceClaimStatuses!.find((s) => s.name === 'gpu')!.resourceClaimName!;
    const prepared = nodeletLog()
      .split('\n')
      .find((l) => l.includes('Prepared ResourceClaim') && l.includes(`"${ns}/${claimName}"`));
    const uid = (JSON.parse(prepared!) as { uid: string }).uid;
    const env = kubectl(info, ['logs', '-n', ns, 't1', '-c', 'main']).stdout;
    const want = `claim_${claimName.replace(/[^a-zA-Z0-9]/g, '_')}_req=true`;
    expect(env).toContain(`env ${want}`);
    // Upstream's SyncTerminatingPod: unprepared after the containers stopped and before the terminal status is posted.
    expect(cdiFiles(uid)).toEqual([]);
    await eventually('nodelet logged the unprepare', async () => count(nodeletLog(), 'Unprepared ResourceClaim', uid) > 0 || undefined, 10_000);
    expect((await k.core.readNamespacedPod({ name: 't1', namespace: ns })).metadata?.deletionTimestamp).toBeUndefined();
    await gone('t1');
    expect(count(nodeletLog(), 'Unprepared ResourceClaim', uid)).toBe(1);
  });

  let sharedUID = '';

  it('two pods sharing one ResourceClaim: it is prepared once; a nodelet restart does not prepare it again', async () => {
    await resource.createNamespacedResourceClaim({
      namespace: ns,
      body: { metadata: { name: 'shared' }, spec: { devices: { requests: [{ name: 'req', exactly: { deviceClassName: CLASS } }] } } },
    });
    for (const n of ['s1', 's2']) await create(pod(n, img.sleep!, [{ name: 'dev', resourceClaimName: 'shared' }], ['3600'], 'Always'));
    for (const n of ['s1', 's2']) await until(n, 'Running', (p) => p.status?.phase === 'Running');
    const claim = await resource.readNamespacedResourceClaim({ namespace: ns, name: 'shared' });
    sharedUID = claim.metadata!.uid!;
    expect(claim.status?.reservedFor?.map((r) => r.name).sort()).toEqual(['s1', 's2']);
    expect(cdiFiles(sharedUID)).toHaveLength(1);
    expect(count(nodeletLog(), 'Prepared ResourceClaim', sharedUID)).toBe(1);
    expect(count(allDriverLogs(), 'CDI file(s) created', 'DRAPlugin/NodePrepareResources', sharedUID)).toBe(1);
    const listed = await podResourcesList();
    for (const n of ['s1', 's2']) {
      const main = listed.find((p) => p.namespace === ns && p.name === n)!.containers.find((c) => c.name === 'main')!;
      expect(main.dynamic_resources).toEqual([
        {
          claim_name: 'shared',
          claim_namespace: ns,
          claim_resources: [
            expect.objectContaining({
              driver_name: DRIVER,
              pool_name: nodeName,
              device_name: expect.stringMatching(/^device-0\d$/),
              cdi_devices: [{ name: `${DRIVER}/test=claim-${sharedUID}-req` }],
            }),
          ],
        },
      ]);
    }
    // allocatedResourcesStatus (upstream's names; the test driver offers the health stream but reports no device: Unknown).
    expect(nodeletLog()).toContain('Watching DRA device health');
    for (const n of ['s1', 's2']) {
      const st = await until(n, 'allocatedResourcesStatus', (p) => !!p.status?.containerStatuses?.[0]?.allocatedResourcesStatus, 30_000);
      expect(st.status!.containerStatuses![0]!.allocatedResourcesStatus).toEqual([
        { name: 'claim:dev', resources: [{ resourceID: `${DRIVER}/test=claim-${sharedUID}-req`, health: 'Unknown' }] },
      ]);
    }
    const state = JSON.parse(readFileSync(join(nodelet.rootDir, 'dra_manager_state'), 'utf8'));
    const entry = state.ClaimInfoStateList.find((c: { ClaimUID: string }) => c.ClaimUID === sharedUID);
    expect(Object.keys(entry.PodUIDs)).toHaveLength(2);
    const before = nodeletLog().length;
    const since = () => nodeletLog().slice(before);
    await nodelet.restart();
    await waitNodeReady(k.core, nodeName);
    await eventually('restarted nodelet registered the driver again', async () => /Registered DRA plugin/.test(since()) || undefined, 30_000);
    for (const n of ['s1', 's2']) await until(n, 'Running', (p) => p.status?.phase === 'Running');
    expect(since()).toMatch(/DRA claims restored from the checkpoint/);
    expect(count(since(), 'Prepared ResourceClaim', sharedUID)).toBe(0);
    // The restart wiped the node's ResourceSlices (upstream does too); the driver publishes its own again
    // (its slice controller re-syncs a deleted slice after 30 s).
    expect(since()).toContain("Deleted this node's ResourceSlices at start");
    await eventually('the driver published its ResourceSlice again', async () => (await slices()).length > 0 || undefined, 90_000, 500);
  });

  it('after the restart, deleting both pods unprepares the shared claim once (its CDI file goes)', async () => {
    await gone('s1');
    expect(cdiFiles(sharedUID)).toHaveLength(1);
    await gone('s2');
    await eventually('shared claim unprepared', async () => cdiFiles(sharedUID).length === 0 || undefined, 90_000);
    // The driver removes the file before it answers; nodelet logs once the answer is in.
    await eventually('nodelet logged the unprepare', async () => count(nodeletLog(), 'Unprepared ResourceClaim', sharedUID) > 0 || undefined, 30_000);
    expect(count(nodeletLog(), 'Unprepared ResourceClaim', sharedUID)).toBe(1);
  });

  it('a claim that cannot be prepared (driver stopped): the pod waits with FailedPrepareDynamicResources naming the driver, then runs once the driver is back', async () => {
    await stopDriver();
    await eventually('nodelet deregistered the driver', async () => /Deregistered DRA plugin/.test(nodeletLog()) || undefined, 30_000);
    // The slices stay for the grace period: the scheduler still allocates.
    await create(pod('w1', img.hello!, [{ name: 'gpu', resourceClaimTemplateName: 'one' }]));
    const ev = await eventually(
      'FailedPrepareDynamicResources event',
      async () =>
        (await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=w1' })).items.find(
          (e) => e.reason === 'FailedPrepareDynamicResources',
        ),
      60_000,
      250,
    );
    expect(ev.message).toContain(`DRA driver ${DRIVER} is not registered`);
    expect((await k.core.readNamespacedPod({ name: 'w1', namespace: ns })).status?.phase).toBe('Pending');
    await startDriver();
    await until('w1', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    await gone('w1');
  });

  it('the driver stopped: it is deregistered and its ResourceSlices are removed after the grace period; restarted: registered again', async () => {
    await eventually('slices back', async () => (await slices()).length > 0 || undefined, 60_000, 250);
    const registered = count(nodeletLog(), 'Registered DRA plugin');
    await stopDriver();
    await eventually('ResourceSlices removed', async () => (await slices()).length === 0 || undefined, (GRACE_S + 60) * 1000, 500);
    expect(nodeletLog()).toMatch(/Deleted ResourceSlices of a DRA driver that did not register again/);
    await startDriver();
    await eventually('registered again', async () => count(nodeletLog(), 'Registered DRA plugin') > registered || undefined, 30_000);
    await eventually('ResourceSlice published again', async () => (await slices()).length > 0 || undefined, 60_000, 250);
  });

  it('the driver killed (its sockets stay, so it never deregisters): its connection is lost and its ResourceSlices are removed after the grace period; started again: registered again', async () => {
    // What a SIGTERM does before the driver has set its signal handler, or a crash: the CI failure of the test above.
    const connection = /Registered DRA plugin|DRA plugin connected|DRA plugin connection lost/g;
    await eventually('connected', async () => nodeletLog().match(connection)?.at(-1) === 'DRA plugin connected' || undefined, 30_000);
    const registered = count(nodeletLog(), 'Registered DRA plugin');
    const deleted = count(nodeletLog(), 'Deleted ResourceSlices of a DRA driver');
    const lost = count(nodeletLog(), 'DRA plugin connection lost');
    const registration = driver!.registrationSocket;
    driverLogs.push(driver!.log());
    await driver!.peer.stop('SIGKILL');
    driver = undefined;
    expect(existsSync(registration)).toBe(true);
    await eventually('ResourceSlices removed', async () => (await slices()).length === 0 || undefined, (GRACE_S + 60) * 1000, 500);
    expect(count(nodeletLog(), 'DRA plugin connection lost')).toBeGreaterThan(lost);
    expect(count(nodeletLog(), 'Deleted ResourceSlices of a DRA driver')).toBeGreaterThan(deleted);
    await startDriver();
    await eventually('registered again', async () => count(nodeletLog(), 'Registered DRA plugin') > registered || undefined, 30_000);
    await eventually('ResourceSlice published again', async () => (await slices()).length > 0 || undefined, 60_000, 250);
  });
});
