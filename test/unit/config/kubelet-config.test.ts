import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { parseCommandLine } from '../../../core/config/flags.ts';
import { loadKubeletConfig, mapKubeletConfig } from '../../../core/config/kubelet-config.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'nodelet-kcfg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function writeConfig(body: string): string {
  const file = path.join(dir, `c${n++}.yaml`);
  writeFileSync(file, body);
  return file;
}
const HEAD = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

const FULL = `${HEAD}
address: 10.0.0.9
port: 11250
healthzPort: 11248
healthzBindAddress: 0.0.0.0
maxPods: 20
registerNode: false
registerWithTaints:
  - key: dedicated
    value: wasm
    effect: NoSchedule
  - key: example.com/only
    effect: NoExecute
nodeStatusUpdateFrequency: 5s
nodeStatusReportFrequency: 1m30s
shutdownGracePeriod: 30s
shutdownGracePeriodCriticalPods: 10s
nodeLeaseDurationSeconds: 20
syncFrequency: 5m0s
staticPodPath: manifests
tlsCertFile: /pki/serving.crt
tlsPrivateKeyFile: pki/serving.key
authentication:
  x509:
    clientCAFile: /pki/ca.crt
  anonymous:
    enabled: true
  webhook:
    enabled: false
    cacheTTL: 10s
authorization:
  mode: AlwaysAllow
  webhook:
    cacheAuthorizedTTL: 1m
    cacheUnauthorizedTTL: 5s
imageGCHighThresholdPercent: 70
imageGCLowThresholdPercent: 60
containerLogMaxSize: 1Mi
containerLogMaxFiles: 2
crashLoopBackOff:
  maxContainerRestartPeriod: 30s
rotateCertificates: true
logging:
  verbosity: 2
  format: text
`;

function run(argv: string[]) {
  const r = parseCommandLine(argv, { hostname: 'h' });
  if (r.kind !== 'run') throw new Error(r.kind);
  return r;
}

describe('KubeletConfiguration file', () => {
  it('maps every supported field, resolving relative paths against the file', () => {
    const file = writeConfig(FULL);
    const { options: o, warnings } = run([`--config=${file}`]);
    expect(warnings).toEqual([]);
    expect(o).toMatchObject({
      config: file,
      address: '10.0.0.9',
      port: 11250,
      healthzPort: 11248,
      healthzBindAddress: '0.0.0.0',
      maxPods: 20,
      registerNode: false,
      registerWithTaints: [
        { key: 'dedicated', value: 'wasm', effect: 'NoSchedule' },
        { key: 'example.com/only', effect: 'NoExecute' },
      ],
      nodeStatusUpdateFrequencyMs: 5000,
      nodeStatusReportFrequencyMs: 90_000,
      shutdownGracePeriodMs: 30_000,
      shutdownGracePeriodCriticalPodsMs: 10_000,
      nodeLeaseDurationSeconds: 20,
      syncFrequencyMs: 300_000,
      podManifestPath: path.join(dir, 'manifests'),
      tlsCertFile: '/pki/serving.crt',
      tlsPrivateKeyFile: path.join(dir, 'pki/serving.key'),
      clientCAFile: '/pki/ca.crt',
      authorizationMode: 'AlwaysAllow',
      anonymousAuth: true,
      authenticationTokenWebhook: false,
      authenticationTokenWebhookCacheTtlMs: 10_000,
      authorizationWebhookCacheAuthorizedTtlMs: 60_000,
      authorizationWebhookCacheUnauthorizedTtlMs: 5_000,
      imageGCHighThresholdPercent: 70,
      imageGCLowThresholdPercent: 60,
      containerLogMaxSize: '1Mi',
      containerLogMaxFiles: 2,
      maxContainerRestartPeriodMs: 30_000,
      logLevel: 'debug',
      loggingFormat: 'text',
      rotateCertificates: true,
      serverTLSBootstrap: false,
    });
  });

  it('maps serverTLSBootstrap (which needs --kubeconfig)', () => {
    const file = writeConfig(`${HEAD}\nserverTLSBootstrap: true\n`);
    expect(run([`--config=${file}`, '--kubeconfig=/k']).options.serverTLSBootstrap).toBe(true);
    expect(() => run([`--config=${file}`])).toThrow(/needs --kubeconfig/);
  });

  it('flags override the file', () => {
    const file = writeConfig(FULL);
    const o = run([
      '--port=9999',
      `--config=${file}`,
      '--max-pods',
      '3',
      '--register-node',
      '--v=0',
      '--register-with-taints=x:NoSchedule',
      '--sync-frequency=2s',
    ]).options;
    expect(o.port).toBe(9999);
    expect(o.maxPods).toBe(3);
    expect(o.registerNode).toBe(true);
    expect(o.logLevel).toBe('info');
    expect(o.registerWithTaints).toEqual([{ key: 'x', effect: 'NoSchedule' }]);
    expect(o.syncFrequencyMs).toBe(2000);
    expect(o.address).toBe('10.0.0.9'); // not overridden: from the file
  });

  it('the file overrides the defaults, and cross-field checks see the merged result', () => {
    const file = writeConfig(`${HEAD}imageGCHighThresholdPercent: 50\n`);
    expect(() => run([`--config=${file}`])).toThrow(/"80" for --image-gc-low-threshold: must be less than --image-gc-high-threshold \(50\)/);
    expect(run([`--config=${file}`, '--image-gc-low-threshold=40']).options.imageGCHighThresholdPercent).toBe(50);
  });

  it('warns once about unsupported fields, listing them, and still loads', () => {
    const file = writeConfig(
      `${HEAD}maxPods: 9\ncgroupDriver: systemd\nclusterDNS: [10.96.0.10]\nauthentication:\n  webhook:\n    enabled: true\n  x509:\n    clientCRLFile: x\n`,
    );
    const { options, warnings } = run([`--config=${file}`]);
    expect(options.maxPods).toBe(9);
    expect(warnings).toEqual([`KubeletConfiguration ${file}: nodelet ignores unsupported fields: cgroupDriver, clusterDNS, authentication.x509.clientCRLFile`]);
  });

  it('treats null fields as unset', () => {
    const file = writeConfig(`${HEAD}maxPods: null\nstaticPodPath: ""\n`);
    const o = run([`--config=${file}`, '--kubeconfig=/k']).options;
    expect(o.maxPods).toBe(110);
    expect(o.podManifestPath).toBeUndefined();
  });

  it.each([
    ['apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n', /apiVersion "kubelet.config.k8s.io\/v1alpha1" is not supported/],
    ['kind: KubeletConfiguration\n', /apiVersion "" is not supported/],
    ['apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n', /kind "KubeProxyConfiguration" is not KubeletConfiguration/],
    ['- a\n- b\n', /not a YAML mapping/],
    ['', /not a YAML mapping/],
    ['a: [\n', /not valid YAML/],
    [`${HEAD}port: 70000\n`, /port: 70000 must be between 0 and 65535/],
    [`${HEAD}maxPods: many\n`, /maxPods: "many" must be a positive integer/],
    [`${HEAD}syncFrequency: 10\n`, /syncFrequency: 10 missing unit/],
    [`${HEAD}address: {a: 1}\n`, /address: \{"a":1\} must be a scalar value/],
    [`${HEAD}registerWithTaints: dedicated\n`, /registerWithTaints: "dedicated" must be a list/],
    [`${HEAD}registerWithTaints: [{key: a, effect: Never}]\n`, /registerWithTaints: .* effect must be one of/],
    [`${HEAD}authentication:\n  anonymous:\n    enabled: maybe\n`, /authentication\.anonymous\.enabled: "maybe" must be true or false/],
    [`${HEAD}authentication:\n  webhook:\n    cacheTTL: -1s\n`, /authentication\.webhook\.cacheTTL: "-1s" must be a duration/],
    [`${HEAD}authorization:\n  mode: Node\n`, /authorization\.mode: "Node" must be Webhook or AlwaysAllow/],
    [`${HEAD}containerLogMaxFiles: 1\n`, /containerLogMaxFiles: 1 must be at least 2/],
    [`${HEAD}imageGCHighThresholdPercent: 150\n`, /imageGCHighThresholdPercent: 150 must be between 0 and 100/],
    [
      `${HEAD}crashLoopBackOff:\n  maxContainerRestartPeriod: 10m\n`,
      /crashLoopBackOff\.maxContainerRestartPeriod: "10m" CrashLoopBackOff\.MaxContainerRestartPeriod \(got: 600 seconds\) must be set between 1s and 300s/,
    ],
  ])('rejects %j', (body, msg) => {
    const file = writeConfig(body);
    let err: unknown;
    try {
      const r = loadKubeletConfig(file);
      if (r.warnings.length > 0) throw new Error(r.warnings[0]);
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).toMatch(msg);
    expect((err as Error).message).toContain(file);
    expect((err as Error).message).not.toContain('\n');
  });

  it('errors carry the NDL_CONFIG_FILE code', () => {
    const file = writeConfig('kind: Pod\n');
    expect(() => run([`--config=${file}`])).toThrow(expect.objectContaining({ code: 'NDL_CONFIG_FILE' }));
  });

  it('names a missing file', () => {
    const missing = path.join(dir, 'nope.yaml');
    try {
      run([`--config=${missing}`]);
      expect.unreachable();
    } catch (e) {
      expect(isNodeletError(e, 'NDL_CONFIG_FILE')).toBe(true);
      expect((e as Error).message).toBe(`invalid KubeletConfiguration file: ${missing}: cannot read: ENOENT`);
    }
  });

  it('maps an in-memory document', () => {
    expect(mapKubeletConfig({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', port: 1 }, 'x').settings).toEqual({ port: 1 });
  });
});
