/**
 * The API calls of pod certificates (certificates.k8s.io/v1beta1
 * PodCertificateRequest), as the Node authorizer and the NodeRestriction
 * admission plugin let a kubelet make them:
 *
 * - create a request for a pod bound to this node (NodeRestriction checks the
 *   node's and the pod's names and UIDs and the service account's UID);
 * - list and watch only with `fieldSelector=spec.nodeName=<node>`: one watch
 *   of this node's requests, started when the first podCertificate source is
 *   seen (a node without such pods never asks, so a cluster without the API
 *   costs nothing), restarted a second after it fails (doubling to 30 s while
 *   its list keeps failing, e.g. a cluster that does not serve the API);
 * - get the pod's ServiceAccount (for its UID) and the node (for its UID).
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import { apiMessage, ListWatch, type ApiTransport, type KubeClients } from '../kube/index.ts';
import { nodeletError } from '../errors/index.ts';

const PCRS = '/apis/certificates.k8s.io/v1beta1/podcertificaterequests';
const RESTART_MS = 1000;
const MAX_RESTART_MS = 30_000;

/** A condition of a PodCertificateRequest (metav1.Condition). */
export interface PodCertificateRequestCondition {
  readonly type: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
}

/** A PodCertificateRequest as the apiserver sends it (times are RFC 3339 strings, bytes base64). */
export interface PodCertificateRequest {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
  };
  spec: {
    signerName: string;
    podName: string;
    podUID: string;
    serviceAccountName: string;
    serviceAccountUID: string;
    nodeName: string;
    nodeUID: string;
    maxExpirationSeconds?: number;
    /** base64 of the DER request. */
    stubPKCS10Request: string;
    unverifiedUserAnnotations?: Record<string, string>;
  };
  status?: {
    conditions?: PodCertificateRequestCondition[];
    certificateChain?: string;
    notBefore?: string;
    beginRefreshAt?: string;
    notAfter?: string;
  };
}

/** The watched requests of this node. */
export interface PodCertificateRequestCache {
  /** The cached request `namespace/name`, if the watch has seen it. */
  get(namespace: string, name: string): PodCertificateRequest | undefined;
  stop(): void;
}

/** The calls the pod certificate manager makes (a fake in unit tests). */
export interface PodCertificateApi {
  /** Creates the request; rejects with the apiserver's message. */
  create(request: PodCertificateRequest): Promise<PodCertificateRequest>;
  /** The UID of ServiceAccount `namespace/name`. */
  serviceAccountUid(namespace: string, name: string): Promise<string>;
  /** The UID of this node's Node object. */
  nodeUid(): Promise<string>;
  /** Starts the watch of this node's requests; `changed` is called for every added, updated or deleted one. */
  watch(changed: (request: PodCertificateRequest) => void): PodCertificateRequestCache;
}

/** The real {@link PodCertificateApi}, over `clients.transport`. */
export function apiPodCertificates(clients: Pick<KubeClients, 'transport'>, nodeName: string, log: Logger): PodCertificateApi {
  const t: ApiTransport = clients.transport;
  const get = async <T>(what: string, path: string): Promise<T> => {
    try {
      return await t.request<T>('GET', path);
    } catch (e) {
      throw nodeletError('NDL_POD_CERTIFICATE', `cannot get ${what}: ${apiMessage(e)}`, e);
    }
  };
  return {
    async create(request) {
      const ns = encodeURIComponent(request.metadata.namespace ?? '');
      try {
        return await t.request<PodCertificateRequest>('POST', `/apis/certificates.k8s.io/v1beta1/namespaces/${ns}/podcertificaterequests`, {
          body: { apiVersion: 'certificates.k8s.io/v1beta1', kind: 'PodCertificateRequest', ...request },
        });
      } catch (e) {
        throw nodeletError('NDL_POD_CERTIFICATE', `cannot create PodCertificateRequest: ${apiMessage(e)}`, e);
      }
    },
    async serviceAccountUid(namespace, name) {
      const sa = await get<{ metadata?: { uid?: string } }>(
        `service account ${namespace}/${name}`,
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}`,
      );
      return sa.metadata?.uid ?? '';
    },
    async nodeUid() {
      const node = await get<{ metadata?: { uid?: string } }>(`node ${nodeName}`, `/api/v1/nodes/${encodeURIComponent(nodeName)}`);
      return node.metadata?.uid ?? '';
    },
    watch(changed) {
      const fieldSelector = `spec.nodeName=${nodeName}`;
      const informer = new ListWatch<PodCertificateRequest>(
        t,
        PCRS,
        () => t.request<{ items: PodCertificateRequest[]; metadata?: { resourceVersion?: string } }>('GET', PCRS, { query: { fieldSelector } }),
        { fieldSelector },
      );
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      let restartMs = RESTART_MS;
      const start = () =>
        informer.start().then(
          () => (restartMs = RESTART_MS),
          () => (restartMs = Math.min(MAX_RESTART_MS, restartMs * 2)),
        );
      informer.on('add', changed);
      informer.on('update', changed);
      informer.on('delete', changed);
      // start() rejects when its list failed and 'error' is emitted then too: one restart per failure.
      informer.on('error', (e) => {
        if (stopped) return;
        const ms = restartMs;
        log.warn({ err: apiMessage(e), retryInMs: ms }, 'PodCertificateRequest list/watch failed, restarting');
        clearTimeout(timer);
        timer = setTimeout(() => {
          if (!stopped) void start();
        }, ms);
        timer.unref();
      });
      void start();
      return {
        get: (namespace, name) => informer.get(name, namespace),
        stop() {
          stopped = true;
          clearTimeout(timer);
          informer.stop();
        },
      };
    },
  };
}
