/**
 * The static pods' life after start: the manifest path is watched
 * (core/pods `watchStaticPods`) and each change goes to the pod controller,
 * to the mirror pods (cluster mode) and, for refused manifests, to a Node event.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { Events } from '../events/index.ts';
import type { KubeClients } from '../kube/index.ts';
import { deleteMirrorPod, ensureMirrorPod, reportRefusedManifests, watchStaticPods, type PodController, type RefusedManifest } from '../pods/index.ts';

/** What {@link watchManifests} needs. */
export interface ManifestWatchDeps {
  readonly path: string;
  readonly nodeName: string;
  readonly periodMs: number;
  readonly initial: readonly V1Pod[];
  readonly initialRefused: readonly RefusedManifest[];
  readonly pods: Pick<PodController, 'upsert' | 'remove'>;
  readonly events: Events;
  readonly log: Logger;
  /** Cluster mode: mirror pods are created and deleted with their static pods. */
  readonly mirror?: { clients: KubeClients; node: { name: string; uid: string } };
}

const keyOf = (p: V1Pod) => `${p.metadata!.namespace}/${p.metadata!.name}`;

/** Starts watching the manifest path; returns a stop function. */
export function watchManifests(d: ManifestWatchDeps): () => void {
  return watchStaticPods({
    path: d.path,
    nodeName: d.nodeName,
    log: d.log,
    initial: d.initial,
    initialRefused: d.initialRefused,
    periodMs: d.periodMs,
    onChange: ({ added, removed, refused }) => {
      reportRefusedManifests(d.events, d.nodeName, refused);
      const readded = new Set(added.map(keyOf));
      for (const p of removed) {
        d.log.info({ pod: keyOf(p), replaced: readded.has(keyOf(p)) }, 'static pod manifest removed or changed');
        d.pods.remove(keyOf(p));
        if (d.mirror && !readded.has(keyOf(p))) void deleteMirrorPod(d.mirror.clients, p, d.log);
      }
      for (const p of added) {
        d.log.info({ pod: keyOf(p) }, 'static pod manifest added');
        if (d.mirror) void ensureMirrorPod(d.mirror.clients, p, d.mirror.node, d.log);
        d.pods.upsert(p);
      }
    },
  });
}
