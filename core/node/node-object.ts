/**
 * Builds the Node object nodelet registers, from the options, the host's real
 * capacity and the providers' contributions (labels, taints, capacity).
 */
import type { V1Node, V1NodeStatus, V1Taint } from '@kubernetes/client-node';
import type { NodeContribution, Taint } from '@nodelet/plugin-api/v1';
import type { HostInfo } from './host-info.ts';

/** The identity and settings that shape the Node object. */
export interface NodeShape {
  nodeName: string;
  nodeIP: string;
  kubeletPort: number;
  maxPods: number;
  labels: Record<string, string>;
  taints: Taint[];
  /** Add `kubernetes.io/arch=<arch>:NoSchedule` so ordinary Linux pods stay off. */
  defaultTaint: boolean;
  architecture: string;
  os: string;
  kubeletVersion: string;
  runtimeVersion: string;
  contributions: NodeContribution[];
}

/** The taints to register: `--register-with-taints`, the default arch taint, then providers'. */
export function nodeTaints(s: NodeShape): V1Taint[] {
  const all: Taint[] = [...s.taints];
  if (s.defaultTaint) all.push({ key: 'kubernetes.io/arch', value: s.architecture, effect: 'NoSchedule' });
  for (const c of s.contributions) all.push(...(c.taints ?? []));
  const seen = new Set<string>();
  return all
    .filter((t) => {
      const k = `${t.key}:${t.effect}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .map((t) => ({ key: t.key, value: t.value, effect: t.effect }));
}

/** The labels to register: upstream's well-known labels, `--node-labels`, then providers'. */
export function nodeLabels(s: NodeShape): Record<string, string> {
  const labels: Record<string, string> = {
    'kubernetes.io/hostname': s.nodeName,
    'kubernetes.io/os': s.os,
    'kubernetes.io/arch': s.architecture,
    'beta.kubernetes.io/os': s.os,
    'beta.kubernetes.io/arch': s.architecture,
  };
  for (const c of s.contributions) Object.assign(labels, c.labels ?? {});
  return { ...labels, ...s.labels };
}

/** Capacity and allocatable from the host (allocatable = capacity; no reservations configured). */
export function nodeResources(s: NodeShape, host: HostInfo): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const capacity: Record<string, string> = {
    cpu: String(host.cpu),
    memory: `${Math.floor(host.memoryBytes / 1024)}Ki`,
    'ephemeral-storage': `${Math.floor(host.ephemeralStorageBytes / 1024)}Ki`,
    pods: String(s.maxPods),
  };
  const allocatable = { ...capacity };
  for (const c of s.contributions) {
    Object.assign(capacity, c.capacity ?? {});
    Object.assign(allocatable, c.allocatable ?? c.capacity ?? {});
  }
  return { capacity, allocatable };
}

/** The status fields nodelet owns, without conditions (added by the status loop). */
export function nodeStatusBase(s: NodeShape, host: HostInfo): V1NodeStatus {
  return {
    ...nodeResources(s, host),
    addresses: [
      { type: 'InternalIP', address: s.nodeIP },
      { type: 'Hostname', address: s.nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: s.kubeletPort } },
    nodeInfo: {
      machineID: host.machineID,
      systemUUID: host.machineID,
      bootID: host.bootID,
      kernelVersion: host.kernelVersion,
      osImage: host.osImage,
      containerRuntimeVersion: s.runtimeVersion,
      kubeletVersion: s.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: s.os,
      architecture: s.architecture,
    },
  };
}

/** The Node object to create at registration. */
export function newNodeObject(s: NodeShape, host: HostInfo): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: s.nodeName, labels: nodeLabels(s), annotations: { 'node.alpha.kubernetes.io/ttl': '0' } },
    spec: { taints: nodeTaints(s) },
    status: nodeStatusBase(s, host),
  };
}
