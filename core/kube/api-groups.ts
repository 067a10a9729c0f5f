/**
 * The API calls nodelet makes, by group, with client-node's method names and
 * parameter objects (so call sites read as before), over {@link ApiTransport}.
 * Only the types come from client-node (type imports load nothing).
 *
 * Objects come back as the apiserver's JSON: times are RFC 3339 strings, not
 * `Date`s as client-node's model deserializer made them (the watch path always
 * gave strings, so the code already takes both).
 */
import type {
  AuthenticationV1TokenRequest,
  EventsV1Event,
  V1ConfigMap,
  V1ConfigMapList,
  V1CSIDriver,
  V1CSINode,
  V1Lease,
  V1Namespace,
  V1Node,
  V1NodeList,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodList,
  ResourceV1ResourceClaim,
  V1RuntimeClassList,
  V1Secret,
  V1SecretList,
  V1Status,
  V1SubjectAccessReview,
  V1TokenReview,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import type { ApiTransport } from './api-transport.ts';

/** The patch type of a PATCH (client-node passed it as a header option). */
export interface PatchOptions {
  readonly contentType: string;
}
/** Request options that send a body as a JSON merge patch. */
export const mergePatch: PatchOptions = { contentType: 'application/merge-patch+json' };
/** Request options that send a body as a strategic merge patch. */
export const strategicMergePatch: PatchOptions = { contentType: 'application/strategic-merge-patch+json' };

interface Named {
  name: string;
}
interface InNamespace {
  namespace: string;
}
const seg = encodeURIComponent;

/** core/v1: nodes, pods, namespaces, volumes, config maps, secrets, service account tokens. */
export class CoreV1Api {
  constructor(private readonly t: ApiTransport) {}
  readNode = (p: Named) => this.t.request<V1Node>('GET', `/api/v1/nodes/${seg(p.name)}`);
  listNode = (p: { fieldSelector?: string } = {}) => this.t.request<V1NodeList>('GET', '/api/v1/nodes', { query: p });
  createNode = (p: { body: V1Node }) => this.t.request<V1Node>('POST', '/api/v1/nodes', p);
  patchNode = (p: Named & { body: object }, o = mergePatch) => this.t.request<V1Node>('PATCH', `/api/v1/nodes/${seg(p.name)}`, { body: p.body, ...o });
  patchNodeStatus = (p: Named & { body: object }, o = mergePatch) =>
    this.t.request<V1Node>('PATCH', `/api/v1/nodes/${seg(p.name)}/status`, { body: p.body, ...o });
  readNamespace = (p: Named) => this.t.request<V1Namespace>('GET', `/api/v1/namespaces/${seg(p.name)}`);
  listPodForAllNamespaces = (p: { fieldSelector?: string; labelSelector?: string } = {}) => this.t.request<V1PodList>('GET', '/api/v1/pods', { query: p });
  createNamespacedPod = (p: InNamespace & { body: V1Pod }) => this.t.request<V1Pod>('POST', `/api/v1/namespaces/${seg(p.namespace)}/pods`, { body: p.body });
  deleteNamespacedPod = (p: Named & InNamespace & { gracePeriodSeconds?: number; body?: object }) =>
    this.t.request<V1Pod>('DELETE', `/api/v1/namespaces/${seg(p.namespace)}/pods/${seg(p.name)}`, {
      query: { gracePeriodSeconds: p.gracePeriodSeconds },
      body: p.body,
    });
  /** Resolves to nothing: the pod the apiserver answers with is not parsed (nodelet learns pods from its watch). */
  patchNamespacedPodStatus = (p: Named & InNamespace & { body: object }, o = mergePatch) =>
    this.t.request<void>('PATCH', `/api/v1/namespaces/${seg(p.namespace)}/pods/${seg(p.name)}/status`, { body: p.body, ...o, discard: true });
  readNamespacedPersistentVolumeClaim = (p: Named & InNamespace) =>
    this.t.request<V1PersistentVolumeClaim>('GET', `/api/v1/namespaces/${seg(p.namespace)}/persistentvolumeclaims/${seg(p.name)}`);
  readPersistentVolume = (p: Named) => this.t.request<V1PersistentVolume>('GET', `/api/v1/persistentvolumes/${seg(p.name)}`);
  readNamespacedConfigMap = (p: Named & InNamespace) => this.t.request<V1ConfigMap>('GET', `/api/v1/namespaces/${seg(p.namespace)}/configmaps/${seg(p.name)}`);
  readNamespacedSecret = (p: Named & InNamespace) => this.t.request<V1Secret>('GET', `/api/v1/namespaces/${seg(p.namespace)}/secrets/${seg(p.name)}`);
  listNamespacedConfigMap = (p: InNamespace & { fieldSelector?: string }) =>
    this.t.request<V1ConfigMapList>('GET', `/api/v1/namespaces/${seg(p.namespace)}/configmaps`, { query: { fieldSelector: p.fieldSelector } });
  listNamespacedSecret = (p: InNamespace & { fieldSelector?: string }) =>
    this.t.request<V1SecretList>('GET', `/api/v1/namespaces/${seg(p.namespace)}/secrets`, { query: { fieldSelector: p.fieldSelector } });
  createNamespacedServiceAccountToken = (p: Named & InNamespace & { body: AuthenticationV1TokenRequest }) =>
    this.t.request<AuthenticationV1TokenRequest>('POST', `/api/v1/namespaces/${seg(p.namespace)}/serviceaccounts/${seg(p.name)}/token`, { body: p.body });
}

/** coordination.k8s.io/v1: the node Lease. */
export class CoordinationV1Api {
  constructor(private readonly t: ApiTransport) {}
  private path = (p: InNamespace, name?: string) => `/apis/coordination.k8s.io/v1/namespaces/${seg(p.namespace)}/leases${name ? `/${seg(name)}` : ''}`;
  readNamespacedLease = (p: Named & InNamespace) => this.t.request<V1Lease>('GET', this.path(p, p.name));
  createNamespacedLease = (p: InNamespace & { body: V1Lease }) => this.t.request<V1Lease>('POST', this.path(p), { body: p.body });
  replaceNamespacedLease = (p: Named & InNamespace & { body: V1Lease }) => this.t.request<V1Lease>('PUT', this.path(p, p.name), { body: p.body });
}

/** events.k8s.io/v1. */
export class EventsV1Api {
  constructor(private readonly t: ApiTransport) {}
  private path = (p: InNamespace, name?: string) => `/apis/events.k8s.io/v1/namespaces/${seg(p.namespace)}/events${name ? `/${seg(name)}` : ''}`;
  createNamespacedEvent = (p: InNamespace & { body: EventsV1Event }) => this.t.request<EventsV1Event>('POST', this.path(p), { body: p.body });
  patchNamespacedEvent = (p: Named & InNamespace & { body: object }, o = mergePatch) =>
    this.t.request<EventsV1Event>('PATCH', this.path(p, p.name), { body: p.body, ...o });
}

/** node.k8s.io/v1: RuntimeClasses. */
export class NodeV1Api {
  constructor(private readonly t: ApiTransport) {}
  listRuntimeClass = () => this.t.request<V1RuntimeClassList>('GET', '/apis/node.k8s.io/v1/runtimeclasses');
}

/** storage.k8s.io/v1: CSINode, CSIDriver, VolumeAttachment. */
export class StorageV1Api {
  constructor(private readonly t: ApiTransport) {}
  readCSINode = (p: Named) => this.t.request<V1CSINode>('GET', `/apis/storage.k8s.io/v1/csinodes/${seg(p.name)}`);
  createCSINode = (p: { body: V1CSINode }) => this.t.request<V1CSINode>('POST', '/apis/storage.k8s.io/v1/csinodes', { body: p.body });
  replaceCSINode = (p: Named & { body: V1CSINode }) => this.t.request<V1CSINode>('PUT', `/apis/storage.k8s.io/v1/csinodes/${seg(p.name)}`, { body: p.body });
  readCSIDriver = (p: Named) => this.t.request<V1CSIDriver>('GET', `/apis/storage.k8s.io/v1/csidrivers/${seg(p.name)}`);
  readVolumeAttachment = (p: Named) => this.t.request<V1VolumeAttachment>('GET', `/apis/storage.k8s.io/v1/volumeattachments/${seg(p.name)}`);
}

/** authentication.k8s.io/v1 TokenReviews and authorization.k8s.io/v1 SubjectAccessReviews. */
export class ReviewApi {
  constructor(private readonly t: ApiTransport) {}
  createTokenReview = (p: { body: V1TokenReview }) => this.t.request<V1TokenReview>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: p.body });
  createSubjectAccessReview = (p: { body: V1SubjectAccessReview }) =>
    this.t.request<V1SubjectAccessReview>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: p.body });
}

/** resource.k8s.io/v1: ResourceClaims and ResourceSlices (DRA). */
export class ResourceV1Api {
  constructor(private readonly t: ApiTransport) {}
  readNamespacedResourceClaim = (p: Named & InNamespace) =>
    this.t.request<ResourceV1ResourceClaim>('GET', `/apis/resource.k8s.io/v1/namespaces/${seg(p.namespace)}/resourceclaims/${seg(p.name)}`);
  deleteCollectionResourceSlice = (p: { fieldSelector?: string; labelSelector?: string }) =>
    this.t.request<V1Status>('DELETE', '/apis/resource.k8s.io/v1/resourceslices', { query: p });
}
