import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { FLAGS, parseCommandLine, type CommandLine } from '../../../core/config/flags.ts';
import { BUNDLED_PROVIDERS_DIR, BUNDLED_STATIC_PODS_DIR, type NodeletOptions } from '../../../core/config/options.ts';
import { REPO_ROOT } from '../../../core/config/repo-root.ts';

const HOST = 'host-a';

function run(argv: string[]): NodeletOptions {
  const r: CommandLine = parseCommandLine(argv, { hostname: HOST });
  if (r.kind !== 'run') throw new Error(`expected run, got ${r.kind}`);
  return r.options;
}

function failure(argv: string[]): { code: string; message: string } {
  try {
    parseCommandLine(argv, { hostname: HOST });
  } catch (e) {
    if (!isNodeletError(e)) throw e;
    return { code: e.code, message: e.message };
  }
  throw new Error(`expected ${argv.join(' ')} to fail`);
}

/** A value for each flag and what it must produce; every flag in FLAGS must appear here. */
const SAMPLES: Record<string, [raw: string, check: (o: NodeletOptions) => unknown, expected: unknown]> = {
  address: ['10.1.2.3', (o) => o.address, '10.1.2.3'],
  'anonymous-auth': ['true', (o) => o.anonymousAuth, true],
  'authentication-token-webhook': ['false', (o) => o.authenticationTokenWebhook, false],
  'authentication-token-webhook-cache-ttl': ['10s', (o) => o.authenticationTokenWebhookCacheTtlMs, 10_000],
  'authorization-mode': ['AlwaysAllow', (o) => o.authorizationMode, 'AlwaysAllow'],
  'bootstrap-kubeconfig': ['/etc/bootstrap.kubeconfig', (o) => o.bootstrapKubeconfig, '/etc/bootstrap.kubeconfig'],
  'rotate-certificates': ['true', (o) => o.rotateCertificates, true],
  'rotate-server-certificates': ['true', (o) => o.serverTLSBootstrap, true],
  'authorization-webhook-cache-authorized-ttl': ['1m', (o) => o.authorizationWebhookCacheAuthorizedTtlMs, 60_000],
  'authorization-webhook-cache-unauthorized-ttl': ['0s', (o) => o.authorizationWebhookCacheUnauthorizedTtlMs, 0],
  'cert-dir': ['/etc/nodelet/pki', (o) => o.certDir, '/etc/nodelet/pki'],
  'client-ca-file': ['/etc/ca.crt', (o) => o.clientCAFile, '/etc/ca.crt'],
  'cluster-domain': ['Cluster.Local.', (o) => o.clusterDomain, 'cluster.local'],
  config: ['', () => 0, 0], // covered by kubelet-config.test.ts (needs a file)
  'container-log-max-files': ['3', (o) => o.containerLogMaxFiles, 3],
  'container-log-max-size': ['20Mi', (o) => o.containerLogMaxSize, '20Mi'],
  'healthz-bind-address': ['::1', (o) => o.healthzBindAddress, '::1'],
  'healthz-port': ['0', (o) => o.healthzPort, 0],
  'hostname-override': ['My-Node', (o) => o.nodeName, 'my-node'],
  'eviction-hard': ['memory.available<1Gi,nodefs.available<5%', (o) => o.evictionHard, { 'memory.available': '1Gi', 'nodefs.available': '5%' }],
  'eviction-max-pod-grace-period': ['20', (o) => o.evictionMaxPodGracePeriodSeconds, 20],
  'eviction-minimum-reclaim': ['imagefs.available=2Gi', (o) => o.evictionMinimumReclaim, { 'imagefs.available': '2Gi' }],
  'eviction-monitoring-period': ['2s', (o) => o.evictionMonitoringPeriodMs, 2000],
  'eviction-pressure-transition-period': ['30s', (o) => o.evictionPressureTransitionPeriodMs, 30_000],
  'eviction-soft': ['memory.available<2Gi', (o) => o.evictionSoft, { 'memory.available': '2Gi' }],
  'eviction-soft-grace-period': ['memory.available=1m30s', (o) => o.evictionSoftGracePeriodMs, { 'memory.available': 90_000 }],
  'image-gc-high-threshold': ['90', (o) => o.imageGCHighThresholdPercent, 90],
  'image-gc-low-threshold': ['50', (o) => o.imageGCLowThresholdPercent, 50],
  kubeconfig: ['/etc/kubeconfig', (o) => [o.kubeconfig, o.podManifestPath], ['/etc/kubeconfig', undefined]],
  'max-pods': ['7', (o) => o.maxPods, 7],
  'node-ip': ['fd00::5', (o) => o.nodeIP, 'fd00::5'],
  'pod-cidr': ['10.244.0.0/24,fd00:10:244::/64', (o) => o.podCIDR, ['10.244.0.0/24', 'fd00:10:244::/64']],
  'pod-interface': ['ndl-test0', (o) => o.podInterface, 'ndl-test0'],
  'pod-routes': ['host-gw', (o) => o.podRoutes, 'host-gw'],
  'node-labels': ['a=b,node.kubernetes.io/pool=w', (o) => o.nodeLabels, { a: 'b', 'node.kubernetes.io/pool': 'w' }],
  'node-status-update-frequency': ['2s', (o) => o.nodeStatusUpdateFrequencyMs, 2000],
  'pod-manifest-path': ['/etc/pods', (o) => o.podManifestPath, '/etc/pods'],
  port: ['12345', (o) => o.port, 12345],
  'register-node': ['false', (o) => o.registerNode, false],
  'register-with-taints': ['k=v:NoExecute', (o) => o.registerWithTaints, [{ key: 'k', value: 'v', effect: 'NoExecute' }]],
  'root-dir': ['/tmp/nl', (o) => o.rootDir, '/tmp/nl'],
  'sync-frequency': ['1m30s', (o) => o.syncFrequencyMs, 90_000],
  'file-check-frequency': ['5s', (o) => o.fileCheckFrequencyMs, 5_000],
  'volume-stats-agg-period': ['-1s', (o) => o.volumeStatsAggPeriodMs, -1_000],
  'tls-cert-file': ['/c.crt', (o) => o.tlsCertFile, '/c.crt'],
  'tls-private-key-file': ['/c.key', (o) => o.tlsPrivateKeyFile, '/c.key'],
  v: ['4', (o) => o.logLevel, 'trace'],
  'default-provider': ['other', (o) => o.defaultProvider, 'other'],
  'default-taint': ['false', (o) => o.defaultTaint, false],
  'device-endpoint-grace-period': ['30s', (o) => o.deviceEndpointGracePeriodMs, 30_000],
  'cdi-spec-dirs': ['/c1,/c2', (o) => o.cdiSpecDirs, ['/c1', '/c2']],
  'dra-plugin-deregistration-grace-period': ['2s', (o) => o.draDeregistrationGracePeriodMs, 2_000],
  'image-pull-progress-deadline': ['1m', (o) => o.imagePullProgressDeadlineMs, 60_000],
  'insecure-registries': ['localhost:5000,r.local', (o) => o.insecureRegistries, ['localhost:5000', 'r.local']],
  'log-level': ['warn', (o) => o.logLevel, 'warn'],
  'max-container-restart-period': ['2s', (o) => o.maxContainerRestartPeriodMs, 2000],
  'logging-format': ['json', (o) => o.loggingFormat, 'json'],
  'node-lease-duration-seconds': ['15', (o) => o.nodeLeaseDurationSeconds, 15],
  'node-status-report-frequency': ['1m', (o) => o.nodeStatusReportFrequencyMs, 60_000],
  'provider-config': ['wasi=/etc/nodelet/wasi.yaml,vm=/etc/vm.json', (o) => o.providerConfig, { wasi: '/etc/nodelet/wasi.yaml', vm: '/etc/vm.json' }],
  'providers-dir': ['/p1,/p2', (o) => o.providersDir, ['/p1', '/p2']],
  'shutdown-grace-period': ['30s', (o) => o.shutdownGracePeriodMs, 30_000],
  'shutdown-grace-period-critical-pods': ['0s', (o) => o.shutdownGracePeriodCriticalPodsMs, 0],
};

/** Flags that need a partner flag to validate. */
const PARTNERS: Record<string, string[]> = {
  'eviction-soft': ['--eviction-soft-grace-period=memory.available=10s'],
  'tls-cert-file': ['--tls-private-key-file=/k'],
  'tls-private-key-file': ['--tls-cert-file=/c'],
  'bootstrap-kubeconfig': ['--kubeconfig=/etc/kubeconfig'],
  'rotate-server-certificates': ['--kubeconfig=/etc/kubeconfig'],
  'image-gc-low-threshold': [],
  'image-gc-high-threshold': [],
};

describe('parseCommandLine: every flag', () => {
  it('has a sample for every flag in the table', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(FLAGS.map((f) => f.name).sort());
  });

  const testable = FLAGS.filter((f) => f.name !== 'config');
  it.each(testable.map((f) => [f.name, f] as const))('--%s parses in --flag=value form', (name) => {
    const [raw, check, expected] = SAMPLES[name]!;
    expect(check(run([`--${name}=${raw}`, ...(PARTNERS[name] ?? [])]))).toEqual(expected);
  });

  it.each(testable.filter((f) => f.type !== 'bool').map((f) => [f.name] as const))('--%s parses in --flag value form', (name) => {
    const [raw, check, expected] = SAMPLES[name]!;
    expect(check(run([`--${name}`, raw, ...(PARTNERS[name] ?? [])]))).toEqual(expected);
  });

  const bools = FLAGS.filter((f) => f.type === 'bool');
  it('has boolean flags to check', () => expect(bools.length).toBeGreaterThan(1));
  it.each(bools.map((f) => [f.name] as const))('bool --%s takes no value', (name) => {
    const r = failure([`--${name}`, 'false']);
    expect(r.code).toBe('NDL_CONFIG_UNEXPECTED_ARG');
    expect(r.message).toContain('"false"');
  });

  it('bare booleans mean true, =false means false', () => {
    expect(run(['--register-node=false', '--register-node']).registerNode).toBe(true);
    expect(run(['--default-taint=false']).defaultTaint).toBe(false);
    expect(run(['--default-taint=F']).defaultTaint).toBe(false);
    expect(run(['--default-taint']).defaultTaint).toBe(true);
  });
});

describe('parseCommandLine: defaults and derived values', () => {
  it('gives the upstream defaults with no flags', () => {
    const o = run([]);
    expect(o).toMatchObject({
      nodeName: HOST,
      maxPods: 110,
      rootDir: '/var/lib/nodelet',
      port: 10250,
      address: '0.0.0.0',
      healthzPort: 10248,
      healthzBindAddress: '127.0.0.1',
      certDir: '/var/lib/nodelet/pki',
      defaultProvider: 'wasi',
      logLevel: 'info',
      nodeStatusUpdateFrequencyMs: 10_000,
      nodeStatusReportFrequencyMs: 300_000,
      shutdownGracePeriodMs: 0,
      shutdownGracePeriodCriticalPodsMs: 0,
      nodeLeaseDurationSeconds: 40,
      syncFrequencyMs: 60_000,
      registerNode: true,
      defaultTaint: true,
      deviceEndpointGracePeriodMs: 300_000,
      cdiSpecDirs: ['/etc/cdi', '/var/run/cdi'],
      draDeregistrationGracePeriodMs: 30_000,
      imagePullProgressDeadlineMs: 300_000,
      imageGCHighThresholdPercent: 85,
      imageGCLowThresholdPercent: 80,
      containerLogMaxSize: '10Mi',
      containerLogMaxFiles: 5,
      authorizationMode: 'Webhook',
      nodeLabels: {},
      registerWithTaints: [],
      insecureRegistries: [],
    });
    expect(o.kubeconfig).toBeUndefined();
  });

  it('derives every directory from --root-dir', () => {
    const o = run(['--root-dir', '/srv/n']);
    expect(o).toMatchObject({
      certDir: '/srv/n/pki',
      pluginsRegistryDir: '/srv/n/plugins_registry',
      pluginsDir: '/srv/n/plugins',
      devicePluginsDir: '/srv/n/device-plugins',
      podResourcesDir: '/srv/n/pod-resources',
      podsDir: '/srv/n/pods',
      logsDir: '/srv/n/logs/pods',
      providersDir: ['/srv/n/providers', BUNDLED_PROVIDERS_DIR],
    });
  });

  it('resolves a relative --root-dir against the working directory', () => {
    expect(run(['--root-dir=rel/x']).podsDir).toBe(path.resolve('rel/x/pods'));
  });

  it('an explicit --cert-dir wins over the derived one', () => {
    expect(run(['--root-dir=/a', '--cert-dir=/b']).certDir).toBe('/b');
  });

  it('uses the bundled static pods only in standalone mode', () => {
    expect(run([]).podManifestPath).toBe(BUNDLED_STATIC_PODS_DIR);
    expect(BUNDLED_STATIC_PODS_DIR).toBe(path.join(REPO_ROOT, 'examples', 'static-pods'));
    expect(run(['--kubeconfig=/k']).podManifestPath).toBeUndefined();
    expect(run(['--kubeconfig=/k', '--pod-manifest-path=/m']).podManifestPath).toBe('/m');
  });

  it('lower-cases and trims the node name from the host name too', () => {
    const r = parseCommandLine([], { hostname: ' Big-Host ' });
    expect(r.kind === 'run' && r.options.nodeName).toBe('big-host');
  });

  it('maps --v to levels and lets --log-level win', () => {
    expect(run(['--v=0']).logLevel).toBe('info');
    expect(run(['--v=1']).logLevel).toBe('info');
    expect(run(['--v=2']).logLevel).toBe('debug');
    expect(run(['-v', '3']).logLevel).toBe('debug');
    expect(run(['--v=9']).logLevel).toBe('trace');
    expect(run(['--v=info']).logLevel).toBe('info');
    expect(run(['--log-level=error', '--v=5']).logLevel).toBe('error');
  });

  it('merges repeated --node-labels, accumulates list flags, and keeps the last taints', () => {
    const o = run([
      '--node-labels=a=1',
      '--node-labels=b=2',
      '--insecure-registries=r1',
      '--insecure-registries',
      'r2',
      '--providers-dir=/x',
      '--providers-dir=/y',
      '--register-with-taints=a:NoSchedule',
      '--register-with-taints=b:NoSchedule',
    ]);
    expect(o.nodeLabels).toEqual({ a: '1', b: '2' });
    expect(o.insecureRegistries).toEqual(['r1', 'r2']);
    expect(o.providersDir).toEqual(['/x', '/y']);
    expect(o.registerWithTaints).toEqual([{ key: 'b', effect: 'NoSchedule' }]);
  });

  it('last occurrence of a scalar flag wins', () => {
    expect(run(['--max-pods=3', '--max-pods', '4']).maxPods).toBe(4);
  });
});

describe('parseCommandLine: help, version, subcommands', () => {
  it.each([['--help'], ['-h'], ['--max-pods=3', '--help'], ['--help=true']])('%s gives help', (...argv) => {
    const r = parseCommandLine(argv);
    expect(r.kind).toBe('help');
    expect(r.kind === 'help' && r.text).toContain('--max-pods');
  });
  it('--version gives the version', () => {
    const r = parseCommandLine(['--version']);
    expect(r).toEqual({ kind: 'version', text: expect.stringMatching(/^nodelet v\d+\.\d+\.\d+ \(kubelet-compatible v1\.36\)$/) });
  });
  it('--help=false does not ask for help', () => {
    expect(parseCommandLine(['--help=false'], { hostname: HOST }).kind).toBe('run');
  });
  it('push and pull pass their arguments through untouched', () => {
    expect(parseCommandLine(['push', 'm.wasm', 'localhost:5000/m:1', '--insecure'])).toEqual({
      kind: 'subcommand',
      name: 'push',
      args: ['m.wasm', 'localhost:5000/m:1', '--insecure'],
    });
    expect(parseCommandLine(['pull', 'r/x:1'])).toEqual({ kind: 'subcommand', name: 'pull', args: ['r/x:1'] });
  });
  it('a subcommand name after flags is a stray argument', () => {
    expect(failure(['--v=2', 'push']).code).toBe('NDL_CONFIG_UNEXPECTED_ARG');
  });
});

describe('parseCommandLine: errors name the flag on one line', () => {
  it.each([
    [['--foo'], 'NDL_CONFIG_UNKNOWN_FLAG', 'unknown flag: --foo'],
    [['--foo=1'], 'NDL_CONFIG_UNKNOWN_FLAG', 'unknown flag: --foo'],
    [['-x'], 'NDL_CONFIG_UNKNOWN_FLAG', 'unknown flag: -x'],
    [['-max-pods=3'], 'NDL_CONFIG_UNKNOWN_FLAG', 'unknown flag: -max-pods'],
    [['--=x'], 'NDL_CONFIG_UNKNOWN_FLAG', 'unknown flag: --'],
    [['stray'], 'NDL_CONFIG_UNEXPECTED_ARG', 'unexpected argument: "stray"'],
    [['--', 'x'], 'NDL_CONFIG_UNEXPECTED_ARG', 'unexpected argument: "--"'],
    [['--max-pods'], 'NDL_CONFIG_INVALID_VALUE', '--max-pods: needs a value'],
    [['--max-pods=abc'], 'NDL_CONFIG_INVALID_VALUE', '"abc" for --max-pods: must be a positive integer'],
    [['--max-pods=0'], 'NDL_CONFIG_INVALID_VALUE', '"0" for --max-pods: must be a positive integer'],
    [['--max-pods=1.5'], 'NDL_CONFIG_INVALID_VALUE', '"1.5" for --max-pods: must be a positive integer'],
    [['--port=65536'], 'NDL_CONFIG_INVALID_VALUE', '"65536" for --port: must be between 0 and 65535'],
    [['--port=-1'], 'NDL_CONFIG_INVALID_VALUE', '"-1" for --port'],
    [['--healthz-port=x'], 'NDL_CONFIG_INVALID_VALUE', '"x" for --healthz-port: must be an integer'],
    [['--cluster-domain=cluster_local'], 'NDL_CONFIG_INVALID_VALUE', '"cluster_local" for --cluster-domain: not a DNS domain'],
    [['--address=localhost'], 'NDL_CONFIG_INVALID_VALUE', '"localhost" for --address: must be an IPv4 or IPv6 address'],
    [['--node-ip', '1.2.3.256'], 'NDL_CONFIG_INVALID_VALUE', '"1.2.3.256" for --node-ip'],
    [['--healthz-bind-address=::g'], 'NDL_CONFIG_INVALID_VALUE', 'for --healthz-bind-address'],
    [['--node-labels=k8s.io/x=y'], 'NDL_CONFIG_INVALID_VALUE', 'for --node-labels: label "k8s.io/x" is in the restricted'],
    [['--node-labels=a'], 'NDL_CONFIG_INVALID_VALUE', 'for --node-labels: malformed pair'],
    [['--provider-config=Wasi=/x'], 'NDL_CONFIG_INVALID_VALUE', 'for --provider-config: "Wasi=/x" is not NAME=PATH'],
    [['--provider-config=wasi='], 'NDL_CONFIG_INVALID_VALUE', 'for --provider-config: "wasi=" is not NAME=PATH'],
    [['--register-with-taints=a=b'], 'NDL_CONFIG_INVALID_VALUE', 'for --register-with-taints: invalid taint "a=b"'],
    [['--register-with-taints=a=b:Never'], 'NDL_CONFIG_INVALID_VALUE', 'effect must be one of'],
    [['--log-level=loud'], 'NDL_CONFIG_INVALID_VALUE', '"loud" for --log-level: must be one of trace, debug, info, warn, error'],
    [['--v=-1'], 'NDL_CONFIG_INVALID_VALUE', '"-1" for --v'],
    [['-v', 'loud'], 'NDL_CONFIG_INVALID_VALUE', '"loud" for -v'],
    [['--sync-frequency=10'], 'NDL_CONFIG_INVALID_VALUE', '"10" for --sync-frequency: missing unit'],
    [['--sync-frequency=0s'], 'NDL_CONFIG_INVALID_VALUE', '"0s" for --sync-frequency: must be a positive duration'],
    [['--node-status-update-frequency=-1s'], 'NDL_CONFIG_INVALID_VALUE', 'for --node-status-update-frequency'],
    [
      ['--shutdown-grace-period-critical-pods=20s', '--shutdown-grace-period=10s'],
      'NDL_CONFIG_INVALID_VALUE',
      '"20s" for --shutdown-grace-period-critical-pods: must be <= --shutdown-grace-period (10s)',
    ],
    [['--shutdown-grace-period=-1s'], 'NDL_CONFIG_INVALID_VALUE', 'for --shutdown-grace-period'],
    [['--register-node=maybe'], 'NDL_CONFIG_INVALID_VALUE', '"maybe" for --register-node: must be true or false'],
    [
      ['--max-container-restart-period=500ms'],
      'NDL_CONFIG_INVALID_VALUE',
      '"500ms" for --max-container-restart-period: CrashLoopBackOff.MaxContainerRestartPeriod (got: 0.5 seconds) must be set between 1s and 300s',
    ],
    [['--max-container-restart-period=5m1s'], 'NDL_CONFIG_INVALID_VALUE', '(got: 301 seconds) must be set between 1s and 300s'],
    [['--max-container-restart-period=0s'], 'NDL_CONFIG_INVALID_VALUE', '(got: 0 seconds) must be set between 1s and 300s'],
    [['--bootstrap-kubeconfig=/b'], 'NDL_CONFIG_INVALID_VALUE', '--kubeconfig: required with --bootstrap-kubeconfig'],
    [['--rotate-server-certificates'], 'NDL_CONFIG_INVALID_VALUE', '--rotate-server-certificates: needs --kubeconfig'],
    [['--anonymous-auth=maybe'], 'NDL_CONFIG_INVALID_VALUE', '"maybe" for --anonymous-auth: must be true or false'],
    [['--authorization-webhook-cache-unauthorized-ttl=soon'], 'NDL_CONFIG_INVALID_VALUE', '"soon" for --authorization-webhook-cache-unauthorized-ttl'],
    [['--authorization-mode=Node'], 'NDL_CONFIG_INVALID_VALUE', '"Node" for --authorization-mode: must be one of Webhook, AlwaysAllow'],
    [['--pod-routes=vxlan'], 'NDL_CONFIG_INVALID_VALUE', '"vxlan" for --pod-routes: must be one of none, host-gw'],
    [['--image-gc-high-threshold=101'], 'NDL_CONFIG_INVALID_VALUE', '"101" for --image-gc-high-threshold: must be between 0 and 100'],
    [['--image-gc-low-threshold=85'], 'NDL_CONFIG_INVALID_VALUE', '"85" for --image-gc-low-threshold: must be less than --image-gc-high-threshold (85)'],
    [['--container-log-max-files=1'], 'NDL_CONFIG_INVALID_VALUE', '"1" for --container-log-max-files: must be at least 2'],
    [['--container-log-max-size=10MB'], 'NDL_CONFIG_INVALID_VALUE', '"10MB" for --container-log-max-size: must be a quantity'],
    [['--container-log-max-size=0'], 'NDL_CONFIG_INVALID_VALUE', '"0" for --container-log-max-size: must be greater than zero'],
    [['--hostname-override=Bad_Name'], 'NDL_CONFIG_INVALID_VALUE', '"Bad_Name" for --hostname-override: node name must be'],
    [['--default-provider='], 'NDL_CONFIG_INVALID_VALUE', '"" for --default-provider: must not be empty'],
    [['--root-dir='], 'NDL_CONFIG_INVALID_VALUE', '"" for --root-dir: must be a non-empty path'],
    [['--tls-cert-file=/c'], 'NDL_CONFIG_INVALID_VALUE', '--tls-private-key-file: required when --tls-cert-file is set'],
    [['--version=maybe'], 'NDL_CONFIG_INVALID_VALUE', '"maybe" for --version'],
  ])('%j → %s', (argv, code, text) => {
    const r = failure(argv);
    expect(r.code).toBe(code);
    expect(r.message).toContain(text);
    expect(r.message).not.toContain('\n');
  });

  it('refuses an unusable host name unless overridden', () => {
    expect(() => parseCommandLine([], { hostname: 'under_score' })).toThrow(/host name "under_score" for --hostname-override/);
    expect(parseCommandLine(['--hostname-override=ok'], { hostname: 'under_score' }).kind).toBe('run');
  });
});
