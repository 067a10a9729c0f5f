/**
 * @nodelet/provider-http-probe: pods whose containers are HTTP checks. The
 * host loads this entry and calls the default export. The hosts probes may
 * reach can be limited with `NODELET_HTTP_PROBE_ALLOW_HOSTS` (comma-separated
 * host names; unset = any host the node can reach).
 */
import { createHttpProbeProvider, type HttpProbeProvider, type HttpProbeProviderOptions } from './http-probe-provider.ts';

export {
  createHttpProbeProvider,
  validateProbePod,
  validateHttpProbeConfig,
  HTTP_PROBE_HANDLER,
  type HttpProbeConfig,
  type HttpProbeProvider,
  type HttpProbeProviderOptions,
} from './http-probe-provider.ts';
export { runProbe, STOPPED_EXIT_CODE, MAX_BODY_BYTES, type ProbeExit, type ProbeLog } from './probe.ts';
export { parseDuration, parseProbeArgs, parseProbeUrl, statusMatches, PROBE_DEFAULTS, type ProbeSpec } from './probe-spec.ts';

/** Allowed hosts from the environment, or undefined for any. */
function allowHostsFromEnv(): string[] | undefined {
  const v = process.env.NODELET_HTTP_PROBE_ALLOW_HOSTS;
  return v === undefined
    ? undefined
    : v
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean);
}

/** Creates the `http-probe` provider (options override the environment). */
export function createProvider(opts: HttpProbeProviderOptions = {}): HttpProbeProvider {
  return createHttpProbeProvider({ allowHosts: allowHostsFromEnv(), ...opts });
}

export default createProvider;
