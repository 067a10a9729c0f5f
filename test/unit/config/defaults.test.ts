/** The flag table as the one source of the defaults and of the KubeletConfiguration fields. */
import { describe, expect, it } from 'vitest';
import { kubeletConfigOf } from '../../../core/agent/configz.ts';
import { FLAGS } from '../../../core/config/flag-table.ts';
import { parseCommandLine } from '../../../core/config/flags.ts';
import { mapKubeletConfig } from '../../../core/config/kubelet-config.ts';
import type { NodeletOptions, Settings } from '../../../core/config/options.ts';

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** Every required option; TypeScript fails here when one is added to NodeletOptions. */
const REQUIRED: Record<RequiredKeys<NodeletOptions>, true> = {
  pluginsRegistryDir: true,
  pluginsDir: true,
  devicePluginsDir: true,
  podResourcesDir: true,
  podsDir: true,
  logsDir: true,
  rotateCertificates: true,
  serverTLSBootstrap: true,
  nodeName: true,
  nodeLabels: true,
  registerWithTaints: true,
  maxPods: true,
  podCIDR: true,
  podInterface: true,
  podRoutes: true,
  rootDir: true,
  port: true,
  address: true,
  healthzPort: true,
  healthzBindAddress: true,
  certDir: true,
  providersDir: true,
  providerConfig: true,
  defaultProvider: true,
  insecureRegistries: true,
  logLevel: true,
  authorizationMode: true,
  anonymousAuth: true,
  authenticationTokenWebhook: true,
  authenticationTokenWebhookCacheTtlMs: true,
  authorizationWebhookCacheAuthorizedTtlMs: true,
  authorizationWebhookCacheUnauthorizedTtlMs: true,
  nodeStatusUpdateFrequencyMs: true,
  nodeStatusReportFrequencyMs: true,
  shutdownGracePeriodMs: true,
  shutdownGracePeriodCriticalPodsMs: true,
  nodeLeaseDurationSeconds: true,
  syncFrequencyMs: true,
  maxContainerRestartPeriodMs: true,
  fileCheckFrequencyMs: true,
  volumeStatsAggPeriodMs: true,
  registerNode: true,
  defaultTaint: true,
  deviceEndpointGracePeriodMs: true,
  cdiSpecDirs: true,
  draDeregistrationGracePeriodMs: true,
  imagePullProgressDeadlineMs: true,
  imageGCHighThresholdPercent: true,
  imageGCLowThresholdPercent: true,
  evictionHard: true,
  evictionSoft: true,
  evictionSoftGracePeriodMs: true,
  evictionMinimumReclaim: true,
  evictionPressureTransitionPeriodMs: true,
  evictionMaxPodGracePeriodSeconds: true,
  evictionMonitoringPeriodMs: true,
  containerLogMaxSize: true,
  containerLogMaxFiles: true,
};

function options(argv: string[] = []): NodeletOptions {
  const r = parseCommandLine(argv, { hostname: 'host' });
  if (r.kind !== 'run') throw new Error(`not a run: ${r.kind}`);
  return r.options;
}

/** Flags whose default is a value (not none, not computed from other settings). */
const valued = FLAGS.filter((f) => f.default !== '' && !f.default.startsWith('<'));

/** What `apply` sets for `raw` on empty settings. */
const applied = (f: (typeof FLAGS)[number], raw: string): Settings => {
  const s: Settings = {};
  f.apply(s, raw);
  return s;
};

const HEAD = { apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration' };

/** A KubeletConfiguration document setting the dotted `field` to `value`. */
function doc(field: string, value: unknown): Record<string, unknown> {
  const d: Record<string, unknown> = { ...HEAD };
  let at = d;
  const parts = field.split('.');
  for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
  at[parts.at(-1)!] = value;
  return d;
}

describe('defaults: the flag table, read once', () => {
  it('gives every required option a value with no flags and no file', () => {
    const o = options();
    const missing = Object.keys(REQUIRED).filter((k) => o[k as keyof NodeletOptions] === undefined);
    expect(missing).toEqual([]);
  });

  it.each(valued.map((f) => [f.name, f] as const))("--%s: the options without flags hold its default, read by the flag's own parser", (_name, f) => {
    const o = options() as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(applied(f, f.default))) {
      if (key === 'verbosityLevel') expect(o.logLevel).toBe(value);
      else expect(o[key], key).toEqual(value);
    }
  });

  it('keeps upstream order for the default hard eviction thresholds (the order they are checked in)', () => {
    expect(Object.keys(options().evictionHard)).toEqual(['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available']);
  });
});

describe('KubeletConfiguration: the fields the flag table names', () => {
  const withField = FLAGS.filter((f) => f.config !== undefined);

  it('supports exactly the fields of the table', () => {
    const all = withField.reduce<Record<string, unknown>>(
      (d, f) => {
        let at = d;
        const parts = f.config!.split('.');
        for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
        at[parts.at(-1)!] = null;
        return d;
      },
      { ...HEAD },
    );
    expect(mapKubeletConfig(all, '/c.yaml').warnings).toEqual([]);
    expect(new Set(withField.map((f) => f.config)).size).toBe(withField.length);
    expect(mapKubeletConfig(doc('maxOpenFiles', 10), '/c.yaml').warnings).toEqual([
      'KubeletConfiguration /c.yaml: nodelet ignores unsupported fields: maxOpenFiles',
    ]);
  });

  it.each(withField.filter((f) => f.fromConfig === undefined && f.default !== '' && !f.default.startsWith('<')).map((f) => [f.config!, f] as const))(
    '%s sets what its flag sets for the same text',
    (field, f) => {
      expect(mapKubeletConfig(doc(field, f.default), '/c.yaml').settings).toEqual(applied(f, f.default));
    },
  );
});

describe('/configz: the fields of the table', () => {
  it('serves only KubeletConfiguration fields the table names, and --config reads back what it serves', () => {
    const o = options(['--kubeconfig=/k', '--pod-manifest-path=/m', '--tls-cert-file=/c', '--tls-private-key-file=/k.key', '--client-ca-file=/ca']);
    const served = kubeletConfigOf(o);
    const read = mapKubeletConfig(served, '/c.yaml');
    expect(read.warnings).toEqual([]);
    for (const [key, value] of Object.entries(read.settings)) expect(value, key).toEqual(o[key as keyof NodeletOptions]);
  });
});
