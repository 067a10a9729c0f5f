/**
 * The part of upstream's pod validation (`ValidatePodCreate`, pkg/apis/core/validation)
 * that decides whether a pod can exist at all: object names, labels and annotation
 * keys, container and volume names, images, restart policy, grace period. The kubelet applies it to static pods
 * before anything else (pkg/kubelet/config/common.go `tryDecodeSinglePod`), so a
 * manifest whose name would make an invalid path never reaches the pod workers.
 * Messages read like upstream's field errors: `metadata.name: Invalid value: "X": ...`.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { labelKeyError, labelValueError } from '../config/index.ts';
import { parseQuantity } from '../quantity/index.ts';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const show = (v: unknown) => JSON.stringify(v);

function label(field: string, v: unknown, errs: string[]): void {
  if (typeof v !== 'string' || v === '') return void errs.push(`${field}: Required value`);
  if (v.length > 63) errs.push(`${field}: Invalid value: ${show(v)}: must be no more than 63 characters`);
  if (!DNS1123_LABEL.test(v)) errs.push(`${field}: Invalid value: ${show(v)}: ${LABEL_MSG}`);
}

function subdomain(field: string, v: unknown, errs: string[]): void {
  if (typeof v !== 'string' || v === '') return void errs.push(`${field}: Required value`);
  if (v.length > 253) errs.push(`${field}: Invalid value: ${show(v.slice(0, 64))}...: must be no more than 253 characters`);
  else if (!DNS1123_SUBDOMAIN.test(v)) errs.push(`${field}: Invalid value: ${show(v)}: ${SUBDOMAIN_MSG}`);
}

/**
 * A quantity field: it must parse (a static pod with `"abc"` fails upstream's decoding with this
 * message) and not be negative (`ValidateNonnegativeQuantity`, and the emptyDir `sizeLimit` check).
 */
function quantity(field: string, v: unknown, errs: string[]): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'string' && typeof v !== 'number') return void errs.push(`${field}: Invalid value: ${show(v)}: must be a quantity`);
  let q;
  try {
    q = parseQuantity(String(v));
  } catch {
    return void errs.push(`${field}: Invalid value: ${show(v)}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  }
  if (q.num < 0n) errs.push(`${field}: Invalid value: ${show(v)}: must be greater than or equal to 0`);
}

function resources(field: string, c: V1Container, errs: string[]): void {
  for (const kind of ['limits', 'requests'] as const) {
    const list: unknown = c.resources?.[kind];
    if (list === undefined || list === null) continue;
    if (typeof list !== 'object') {
      errs.push(`${field}.resources.${kind}: Invalid value: ${show(list)}: must be a map`);
      continue;
    }
    for (const [name, v] of Object.entries(list as Record<string, unknown>)) quantity(`${field}.resources.${kind}[${name}]`, v, errs);
  }
}

function containers(field: string, list: unknown, errs: string[], seen: Set<string>, required: boolean): void {
  if (list === undefined && !required) return;
  if (!Array.isArray(list) || (required && list.length === 0)) return void errs.push(`${field}: Required value`);
  list.forEach((c: V1Container, i) => {
    const f = `${field}[${i}]`;
    if (typeof c !== 'object' || c === null) return void errs.push(`${f}: Invalid value: ${show(c)}: must be an object`);
    label(`${f}.name`, c.name, errs);
    if (typeof c.name === 'string' && seen.has(c.name)) errs.push(`${f}.name: Duplicate value: ${show(c.name)}`);
    seen.add(c.name);
    if (typeof c.image !== 'string' || c.image.trim() === '') errs.push(`${f}.image: Required value`);
    else if (c.image !== c.image.trim()) errs.push(`${f}.image: Invalid value: ${show(c.image)}: must not have leading or trailing whitespace`);
    resources(f, c, errs);
  });
}

/** Upstream's create-time field errors for `pod` (empty when it is valid). */
export function validatePodCreate(pod: V1Pod): string[] {
  const errs: string[] = [];
  subdomain('metadata.name', pod.metadata?.name, errs);
  label('metadata.namespace', pod.metadata?.namespace, errs);
  const labels: unknown = pod.metadata?.labels;
  if (labels !== undefined && (typeof labels !== 'object' || labels === null)) errs.push('metadata.labels: Invalid value: must be a map');
  for (const [k, v] of Object.entries((labels ?? {}) as Record<string, unknown>)) {
    const e = labelKeyError(k) ?? (typeof v === 'string' ? labelValueError(v) : `label value of "${k}": must be a string`);
    if (e) errs.push(`metadata.labels: Invalid value: ${e}`);
  }
  const annotations: unknown = pod.metadata?.annotations;
  for (const [k, v] of Object.entries((annotations ?? {}) as Record<string, unknown>)) {
    const e = labelKeyError(k)?.replace('label key', 'annotation key') ?? (typeof v === 'string' ? undefined : `annotation value of "${k}": must be a string`);
    if (e) errs.push(`metadata.annotations: Invalid value: ${e}`);
  }
  const spec = pod.spec;
  if (typeof spec !== 'object' || spec === null) return [...errs, 'spec: Required value'];
  const seen = new Set<string>();
  containers('spec.containers', spec.containers, errs, seen, true);
  containers('spec.initContainers', spec.initContainers, errs, seen, false);
  if (spec.restartPolicy !== undefined && !['Always', 'OnFailure', 'Never'].includes(spec.restartPolicy)) {
    errs.push(`spec.restartPolicy: Unsupported value: ${show(spec.restartPolicy)}: supported values: "Always", "OnFailure", "Never"`);
  }
  const grace = spec.terminationGracePeriodSeconds;
  if (grace !== undefined && (!Number.isSafeInteger(grace) || grace < 0)) {
    errs.push(`spec.terminationGracePeriodSeconds: Invalid value: ${show(grace)}: must be greater than or equal to 0`);
  }
  const volumes = new Set<string>();
  if (spec.volumes !== undefined && !Array.isArray(spec.volumes)) errs.push('spec.volumes: Invalid value: must be a list');
  (Array.isArray(spec.volumes) ? spec.volumes : []).forEach((v, i) => {
    label(`spec.volumes[${i}].name`, v?.name, errs);
    if (v?.name && volumes.has(v.name)) errs.push(`spec.volumes[${i}].name: Duplicate value: ${show(v.name)}`);
    volumes.add(v?.name);
    quantity(`spec.volumes[${i}].emptyDir.sizeLimit`, v?.emptyDir?.sizeLimit, errs);
  });
  return errs;
}

/** Volume sources that need no API object (upstream `HasAPIObjectReference`'s allow list). */
const LOCAL_VOLUMES = [
  'awsElasticBlockStore',
  'azureDisk',
  'cephfs',
  'cinder',
  'downwardAPI',
  'emptyDir',
  'fc',
  'flexVolume',
  'flocker',
  'gcePersistentDisk',
  'gitRepo',
  'hostPath',
  'image',
  'iscsi',
  'nfs',
  'photonPersistentDisk',
  'portworxVolume',
  'quobyte',
  'rbd',
  'scaleIO',
  'storageos',
  'vsphereVolume',
];
/** Volume sources that reference an API object, with the resource upstream names. */
const API_VOLUMES: Record<string, string> = {
  configMap: 'configmaps (via configmap volumes)',
  secret: 'secrets (via secret volumes)',
  csi: 'csidrivers (via CSI volumes)',
  glusterfs: 'endpoints (via glusterFS volumes)',
  persistentVolumeClaim: 'persistentvolumeclaims',
  ephemeral: 'persistentvolumeclaims (via ephemeral volumes)',
  azureFile: 'secrets (via azureFile volumes)',
};
const PROJECTED: Record<string, string | undefined> = {
  configMap: 'configmaps (via projected volumes)',
  secret: 'secrets (via projected volumes)',
  serviceAccountToken: 'serviceaccounts (via projected volumes)',
  clusterTrustBundle: 'clustertrustbundles',
  podCertificate: 'podcertificates',
  downwardAPI: undefined,
};

/**
 * Upstream's `PreventStaticPodAPIReferences` (beta, on by default since 1.34): why a static
 * pod may not run because it references an API object, or undefined. Mirrors
 * pkg/api/pod `HasAPIObjectReference`: service account, secrets and config maps (env,
 * envFrom, image pull secrets, volumes), resource claims, and API-backed volume types.
 */
export function staticPodApiReference(pod: V1Pod): string | undefined {
  const spec = pod.spec!;
  const refuse = (what: string) => `static pods may not reference ${what}`;
  if (spec.serviceAccountName) return refuse('serviceaccounts');
  const containers = [...(spec.initContainers ?? []), ...spec.containers, ...((spec as { ephemeralContainers?: V1Container[] }).ephemeralContainers ?? [])];
  const env = containers.flatMap((c) => c.env ?? []);
  const envFrom = containers.flatMap((c) => c.envFrom ?? []);
  const volumes = spec.volumes ?? [];
  const secretVolume = volumes.some(
    (v) =>
      v.secret ||
      v.azureFile ||
      v.projected?.sources?.some((s) => s.secret) ||
      [v.cephfs, v.cinder, v.flexVolume, v.iscsi, v.rbd, v.scaleIO, v.storageos].some((x) => (x as { secretRef?: unknown } | undefined)?.secretRef) ||
      v.csi?.nodePublishSecretRef,
  );
  if ((spec.imagePullSecrets?.length ?? 0) > 0 || env.some((e) => e.valueFrom?.secretKeyRef) || envFrom.some((e) => e.secretRef) || secretVolume)
    return refuse('secrets');
  if (
    env.some((e) => e.valueFrom?.configMapKeyRef) ||
    envFrom.some((e) => e.configMapRef) ||
    volumes.some((v) => v.configMap || v.projected?.sources?.some((s) => s.configMap))
  ) {
    return refuse('configmaps');
  }
  if (((spec as { resourceClaims?: unknown[] }).resourceClaims?.length ?? 0) > 0) return refuse('resourceclaims');
  for (const v of volumes) {
    const kinds = Object.keys(v).filter((k) => k !== 'name' && (v as unknown as Record<string, unknown>)[k] != null);
    for (const k of kinds) {
      if (LOCAL_VOLUMES.includes(k)) continue;
      if (API_VOLUMES[k]) return refuse(API_VOLUMES[k]);
      if (k !== 'projected') return `unknown volume type for volume "${v.name}"`;
      for (const s of v.projected!.sources ?? []) {
        const src = Object.keys(s).filter((x) => (s as unknown as Record<string, unknown>)[x] != null);
        for (const x of src) {
          if (!(x in PROJECTED)) return `unknown source for projected volume "${v.name}"`;
          if (PROJECTED[x]) return refuse(PROJECTED[x]);
        }
      }
    }
  }
  return undefined;
}
