/**
 * What the kubelet API needs from the rest of nodelet: the pods bound to this
 * node and, per container, where its logs are. The pod manager implements it;
 * tests use a small fake. Both methods are called per request, so they must be
 * cheap (in-memory lookups, no API calls, no disk I/O).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { StreamIO } from '@nodelet/plugin-api/v1';

/** The log and capabilities of one container, for `/containerLogs` and `/exec`. */
export interface ContainerTarget {
  /**
   * The container's log directory,
   * `<rootDir>/logs/pods/<namespace>_<podName>_<podUID>/<containerName>`
   * (compute it with `containerLogDir` from core/logs/log-paths.ts).
   */
  readonly logDir: string;
  /**
   * The restart count of the most recent instance that started: its log is
   * `<restartCount>.log`; `previous=true` reads `<restartCount - 1>.log`.
   */
  readonly restartCount: number;
  /** True while that instance runs (`follow=true` keeps streaming until it ends). */
  readonly running: boolean;
  /** The provider running the pod; error messages name it (`not supported by provider "wasi": exec`). */
  readonly providerName: string;
  /** True if the provider implements exec (exec streaming is not served yet either way). */
  readonly exec?: boolean;
  /**
   * Optional: feeds an attach session's stdin to the running instance (the
   * provider's `attach` capability, bound to the instance's id). Absent when
   * the provider cannot; `kubectl attach` then still gets the output.
   */
  readonly attach?: (io: StreamIO) => Promise<void>;
  /**
   * Optional: settles when the instance `restartCount` ends, so a follow ends
   * at once. Without it, a follow notices the end by polling `findContainer`.
   */
  readonly exited?: Promise<unknown>;
}

/** The pods and containers the kubelet API serves. */
export interface PodSource {
  /** The pods bound to this node, as last seen (served as-is by `GET /pods`). */
  listPods(): V1Pod[];
  /**
   * The container `container` of pod `namespace/podName` if it has started at
   * least once; undefined if the pod or container is unknown or never started.
   */
  findContainer(namespace: string, podName: string, container: string): ContainerTarget | undefined;
  /**
   * Optional: the address `kubectl port-forward` reaches `pod` at (its pod IP,
   * or 127.0.0.1 for hostNetwork pods and pods without one); default: that rule.
   */
  podAddress?(pod: V1Pod): string;
}
