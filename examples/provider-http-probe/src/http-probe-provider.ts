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

/**
 * The provider's configuration file (`--provider-config http-probe=<file>`, YAML or JSON):
 * `allowHosts`, the hosts probes may reach (lower case; overrides `NODELET_HTTP_PROBE_ALLOW_HOSTS`).
 */
export interface HttpProbeConfig {
  readonly allowHosts?: readonly string[];
}

/** Checks a parsed configuration file; throws with the reason (core then skips the provider, naming the file). */
export function validateHttpProbeConfig(raw: unknown): HttpProbeConfig {
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error('the configuration must be a mapping');
  const { allowHosts, ...unknown } = raw as Record<string, unknown>;
  const extra = Object.keys(unknown);
  if (extra.length > 0) throw new Error(`unknown field(s) ${extra.join(', ')} (known: allowHosts)`);
  if (allowHosts === undefined) return {};
  if (!Array.isArray(allowHosts) || allowHosts.some((h) => typeof h !== 'string' || h.trim() === '')) {
    throw new Error('allowHosts must be a list of host names');
  }
  return { allowHosts: allowHosts.map((h: string) => h.trim().toLowerCase()) };
}

/** Creates the provider. */
export function createHttpProbeProvider(opts: HttpProbeProviderOptions = {}): HttpProbeProvider {
  const pods = new Map<string, ProbePod>();
  let log: ProviderContext['log'] | undefined;
  // The allow-list in force: the options', or the configuration file's once init has it.
  let current: HttpProbeProviderOptions = opts;
  const machine = podLifecycleFromMachine<ProbePod>((pod, ctx) => {
    const p = new ProbePod(pod, ctx, current);
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
    validateConfig: validateHttpProbeConfig,
    async init(ctx: ProviderContext<HttpProbeConfig>) {
      log = ctx.log;
      if (ctx.config?.allowHosts) current = { ...opts, allowHosts: ctx.config.allowHosts };
      log.info({ allowHosts: current.allowHosts ?? 'any', configured: ctx.config !== undefined }, 'http-probe provider ready');
    },
    pods: {
      async createPod(pod, ctx) {
        validateProbePod(pod, current.allowHosts);
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
