/** Kubernetes clients and small waits for e2e tests, as the cluster admin. */
import * as k8s from '@kubernetes/client-node';
import type { ClusterInfo } from '../../cluster/control-plane.ts';

/** Admin API clients for the test cluster. */
export function adminClients(info: ClusterInfo) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(info.adminKubeconfig);
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    node: kc.makeApiClient(k8s.NodeV1Api),
    storage: kc.makeApiClient(k8s.StorageV1Api),
    version: kc.makeApiClient(k8s.VersionApi),
  };
}

export { eventually } from '../../harness/process.ts';
import { eventually } from '../../harness/process.ts';
import { createCsiVolume } from '../../peers/csi-controller.ts';

/**
 * The events of `fieldSelector` in `namespace` once there is at least one (events are sent
 * one at a time after the status that caused them, as upstream's broadcaster does).
 */
export async function eventsOnce(core: k8s.CoreV1Api, namespace: string, fieldSelector: string, timeoutMs = 10_000): Promise<k8s.CoreV1Event[]> {
  return eventually(
    `events ${fieldSelector}`,
    async () => ((l) => (l.length > 0 ? l : undefined))((await core.listNamespacedEvent({ namespace, fieldSelector })).items),
    timeoutMs,
    250,
  );
}

/** Creates a namespace with a unique name and returns it. */
export async function freshNamespace(core: k8s.CoreV1Api, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** The node condition `type` of `node`, if any. */
export function condition(node: k8s.V1Node, type: string): k8s.V1NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type);
}

/** Waits until the Node `name` reports Ready=True. */
export async function waitNodeReady(core: k8s.CoreV1Api, name: string, timeoutMs = 60_000): Promise<void> {
  await eventually(
    `node ${name} Ready`,
    async () => {
      const n = await core.readNode({ name }).catch(() => undefined);
      return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    },
    timeoutMs,
  );
}

/** A fresh namespace whose `default` service account exists (pods need it to be admitted). */
export async function podNamespace(core: k8s.CoreV1Api, prefix: string): Promise<string> {
  const ns = await freshNamespace(core, prefix);
  await eventually('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }));
  return ns;
}

/**
 * Polls pod `namespace/name` until `ok`; on timeout the error carries the pod's
 * last status and its events, so a CI failure says what the pod was doing.
 */
export async function podUntil(
  core: k8s.CoreV1Api,
  namespace: string,
  name: string,
  what: string,
  ok: (p: k8s.V1Pod) => boolean,
  timeoutMs = 60_000,
): Promise<k8s.V1Pod> {
  let last: k8s.V1Pod | undefined;
  try {
    return await eventually(
      `${name}: ${what}`,
      async () => {
        last = await core.readNamespacedPod({ name, namespace });
        return ok(last) ? last : undefined;
      },
      timeoutMs,
    );
  } catch (e) {
    const events = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` }).catch(() => undefined);
    throw new Error(
      `${(e as Error).message}; last status: ${JSON.stringify(last?.status)}; events: ${JSON.stringify(events?.items.map((x) => `${x.reason}: ${x.message}`))}`,
    );
  }
}

/** What {@link createBoundCsiClaim} makes: a CSI PV and a claim bound to it. */
export interface CsiClaimSpec {
  namespace: string;
  pvName: string;
  claimName: string;
  driver: string;
  /**
   * The PV's volumeHandle: a fixed id (drivers with preset volumes, like the CSI mock), or
   * `{ controllerSocket }`: the driver's socket, where `Controller.CreateVolume` (name = the PV
   * name, 1Mi, as external-provisioner would) makes the volume and returns its id.
   */
  volumeHandle: string | { controllerSocket: string };
  volumeAttributes?: Record<string, string>;
}

/** Creates (or provisions, see {@link CsiClaimSpec.volumeHandle}) a 1Mi ReadWriteOnce CSI PV and a claim for it, waits until it is Bound; returns the volumeHandle. */
export async function createBoundCsiClaim(core: k8s.CoreV1Api, s: CsiClaimSpec): Promise<string> {
  const volumeHandle =
    typeof s.volumeHandle === 'string' ? s.volumeHandle : await createCsiVolume(s.volumeHandle.controllerSocket, s.pvName, 1024 * 1024, s.volumeAttributes);
  const csi = { driver: s.driver, volumeHandle, ...(s.volumeAttributes ? { volumeAttributes: s.volumeAttributes } : {}) };
  await core.createPersistentVolume({
    body: {
      metadata: { name: s.pvName },
      spec: { capacity: { storage: '1Mi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: '', csi },
    },
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace: s.namespace,
    body: {
      metadata: { name: s.claimName },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName: s.pvName, resources: { requests: { storage: '1Mi' } } },
    },
  });
  await eventually(
    'PVC Bound',
    async () => (await core.readNamespacedPersistentVolumeClaim({ name: s.claimName, namespace: s.namespace })).status?.phase === 'Bound',
    60_000,
    250,
  );
  return volumeHandle;
}
