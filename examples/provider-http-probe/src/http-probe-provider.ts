/**
 * The `http-probe` pod provider: a pod's containers are HTTP checks. Each
 * container's image is the URL to GET; its args say what answer counts
 * (`--expect=2xx`), how often to ask (`--interval=5s`), how many times
 * (`--attempts=N`, 0 = until it answers), the per-request `--timeout` and an
 * optional `--contains=TEXT`. Every attempt is a line in `kubectl logs`.
 * Pods run on the plugin API's state machine toolkit (`podStates`), so
 * restart policies, back-off and deletion behave as for any pod.
 */
import {
  API_VERSION,
  providerError,
  type PodLifecycle,
  type PodObject,
  type PodProvider,
  type PodRef,
  type PodStatusReport,
  type ProviderContext,
} from '@nodelet/plugin-api/v1';
import { podLifecycleFromMachine, podStates } from '@nodelet/plugin-api/v1/toolkit';
import { ProbePod, type ProbePodOptions } from './probe-pod.ts';
import { parseProbeArgs, parseProbeUrl } from './probe-spec.ts';

/** Options of {@link createHttpProbeProvider}. */
export type HttpProbeProviderOptions = ProbePodOptions;

/** The RuntimeClass handler the provider serves. */
export const HTTP_PROBE_HANDLER = 'http-probe';

/** Refuses, before anything runs, a pod this provider can never run (core fails it as UnsupportedPodSpec). */
export function validateProbePod(pod: PodObject, allowHosts?: readonly string[]): void {
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    if (c.command?.length)
      throw providerError('InvalidArgument', `container "${c.name}": http-probe containers take no command (the image is the URL, args are flags)`);
    parseProbeUrl(c.name, c.image, allowHosts);
    // Args with $(VAR) references are checked once core has expanded them.
    if (!(c.args ?? []).some((a) => a.includes('$('))) parseProbeArgs(c.name, c.args ?? []);
  }
}

/** The provider: a `PodProvider` whose status answers at once (from the pods' state machines). */
export type HttpProbeProvider = Omit<PodProvider, 'pods'> & {
  readonly pods: Omit<PodLifecycle, 'getPodStatus'> & { getPodStatus(ref: PodRef): PodStatusReport | undefined };
};

/** Creates the provider. */
export function createHttpProbeProvider(opts: HttpProbeProviderOptions = {}): HttpProbeProvider {
  const pods = new Map<string, ProbePod>();
  let log: ProviderContext['log'] | undefined;
  const machine = podLifecycleFromMachine<ProbePod>((pod, ctx) => {
    const p = new ProbePod(pod, ctx, opts);
    pods.set(pod.metadata.uid, p);
    const states = podStates<ProbePod>();
    return { initial: states.Registered(), context: p, onAbort: () => states.Terminated() };
  });
  return {
    name: HTTP_PROBE_HANDLER,
    apiVersion: API_VERSION,
    // handlers: declared once, in package.json (nodelet.handlers: ["http-probe"]).
    architecture: process.arch,
    os: process.platform,
    runtimeVersion: 'nodelet-http-probe://0.1.0',
    async init(ctx) {
      log = ctx.log;
      log.info({ allowHosts: opts.allowHosts ?? 'any' }, 'http-probe provider ready');
    },
    pods: {
      async createPod(pod, ctx) {
        validateProbePod(pod, opts.allowHosts);
        await machine.createPod(pod, ctx);
      },
      async deletePod(pod, ctx, gracePeriodMs) {
        await machine.deletePod(pod, ctx, gracePeriodMs);
        pods.delete(pod.metadata.uid);
      },
      getPodStatus(ref) {
        const s = machine.getPodStatus(ref);
        const p = pods.get(ref.uid);
        return s && p ? p.report(s) : s;
      },
    },
    async shutdown() {
      await Promise.all([...pods.values()].map((p) => p.stop()));
    },
  };
}
