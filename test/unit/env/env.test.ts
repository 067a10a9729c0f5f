import type { V1Container } from '@kubernetes/client-node';
import { beforeEach, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { expand, isEnvVarName, mappingFuncFor, resolveEnv, type ResolveEnvOptions } from '../../../core/pods/env.ts';
import { resolveArgv } from '../../../core/pods/argv.ts';
import { FakeObjectSource, pod } from '../volumes/fakes.ts';

describe('expand (upstream expansion.Expand semantics)', () => {
  const m = mappingFuncFor({ VAR_A: 'A', EMPTY: '', NESTED: '$(VAR_A)' }, { SVC: 'svc', VAR_A: 'shadowed' });
  it.each([
    ['$(VAR_A)', 'A'],
    ['___$(VAR_A)___', '___A___'],
    ['$(VAR_A)$(VAR_A)', 'AA'],
    ['$(EMPTY)x', 'x'],
    ['$(SVC)', 'svc'],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$$(VAR_A)', '$(VAR_A)'],
    ['$$$(VAR_A)', '$A'],
    ['$$$$(VAR_A)', '$$(VAR_A)'],
    ['$(NESTED)', '$(VAR_A)'],
    ['$VAR_A', '$VAR_A'],
    ['$(VAR_A', '$(VAR_A'],
    ['tail$', 'tail$'],
    ['$', '$'],
    ['$()', '$()'],
    ['$(VAR_A)-$(', 'A-$('],
    ['f(x) = $(VAR_A)', 'f(x) = A'],
    ['$(VAR_A))', 'A)'],
  ])('%s → %s', (input, want) => {
    expect(expand(input, m)).toBe(want);
  });

  it('knows valid env var names', () => {
    expect(isEnvVarName('A_b.c-1')).toBe(true);
    expect(isEnvVarName('1BAD')).toBe(false);
    expect(isEnvVarName('has space')).toBe(false);
  });
});

describe('resolveEnv', () => {
  let source: FakeObjectSource;
  let warnings: Array<[string, string]>;
  let opts: ResolveEnvOptions;
  beforeEach(() => {
    source = new FakeObjectSource();
    warnings = [];
    opts = {
      source,
      nodeName: 'node-a',
      hostIP: '10.0.0.5',
      podIPs: ['10.1.0.7'],
      nodeAllocatable: { cpu: '4', memory: '8Gi' },
      onWarning: (r, m) => warnings.push([r, m]),
    };
  });
  const c = (x: Partial<V1Container>): V1Container => ({ name: 'app', image: 'i', ...x });

  it('applies envFrom (with prefix) then env, env overriding, in definition order', async () => {
    source.addConfigMap('ns1', 'cm', { LOG: 'info', B: 'cm-b' });
    source.addSecret('ns1', 'sec', { PASSWORD: 'pw' });
    const env = await resolveEnv(
      pod(),
      c({
        envFrom: [{ configMapRef: { name: 'cm' } }, { prefix: 'DB_', secretRef: { name: 'sec' } }],
        env: [
          { name: 'B', value: 'env-b' },
          { name: 'URL', value: 'db://$(DB_PASSWORD)@$(HOST)/$(LOG)' },
        ],
      }),
      opts,
    );
    expect(env).toEqual({ LOG: 'info', B: 'env-b', DB_PASSWORD: 'pw', URL: 'db://pw@$(HOST)/info' });
    expect(Object.keys(env)).toEqual(['LOG', 'DB_PASSWORD', 'B', 'URL']);
  });

  it('expands only against previously defined vars', async () => {
    const env = await resolveEnv(
      pod(),
      c({
        env: [
          { name: 'A', value: '$(B)' },
          { name: 'B', value: 'b' },
          { name: 'C', value: '$(B)$$(B)' },
        ],
      }),
      opts,
    );
    expect(env).toEqual({ A: '$(B)', B: 'b', C: 'b$(B)' });
  });

  it('skips and reports invalid envFrom keys, sorted', async () => {
    source.addConfigMap('ns1', 'cm', { '2bad': 'x', good: 'y', '1bad': 'z' });
    const env = await resolveEnv(pod(), c({ envFrom: [{ configMapRef: { name: 'cm' } }] }), opts);
    expect(env).toEqual({ good: 'y' });
    expect(warnings).toEqual([
      [
        'InvalidEnvironmentVariableNames',
        'Keys [1bad, 2bad] from the EnvFrom configMap ns1/cm were skipped since they are considered invalid environment variable names.',
      ],
    ]);
  });

  it('resolves fieldRef and resourceFieldRef (limits default to node allocatable)', async () => {
    const env = await resolveEnv(
      pod({}, { labels: { app: 'web' } }),
      c({
        resources: { limits: { memory: '128Mi' } },
        env: [
          { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
          { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
          { name: 'ECHO', value: '$(POD)@$(NODE)' },
        ],
      }),
      opts,
    );
    expect(env).toEqual({
      POD: 'web',
      NS: 'ns1',
      UID: 'uid-1234',
      APP: 'web',
      NODE: 'node-a',
      SA: 'builder',
      HOST_IP: '10.0.0.5',
      POD_IP: '10.1.0.7',
      MEM_MI: '128',
      CPU: '4',
      ECHO: 'web@node-a',
    });
  });

  it('resolves configMapKeyRef/secretKeyRef, fetching each object once', async () => {
    source.addConfigMap('ns1', 'cm', { a: '1', b: '2' });
    source.addSecret('ns1', 'sec', { token: 'tkn' });
    const env = await resolveEnv(
      pod(),
      c({
        envFrom: [{ configMapRef: { name: 'cm' } }],
        env: [
          { name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: 'a' } } },
          { name: 'B', valueFrom: { configMapKeyRef: { name: 'cm', key: 'b' } } },
          { name: 'T', valueFrom: { secretKeyRef: { name: 'sec', key: 'token' } } },
        ],
      }),
      opts,
    );
    expect(env).toMatchObject({ A: '1', B: '2', T: 'tkn' });
    expect(source.reads).toBe(2);
  });

  it('skips optional missing refs and keys', async () => {
    source.addConfigMap('ns1', 'cm', { a: '1' });
    const env = await resolveEnv(
      pod(),
      c({
        envFrom: [{ configMapRef: { name: 'nope', optional: true } }, { secretRef: { name: 'nope', optional: true } }],
        env: [
          { name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'missing', optional: true } } },
          { name: 'Y', valueFrom: { secretKeyRef: { name: 'gone', key: 'k', optional: true } } },
          { name: 'Z', value: 'z' },
        ],
      }),
      opts,
    );
    expect(env).toEqual({ Z: 'z' });
  });

  it.each([
    [{ envFrom: [{ configMapRef: { name: 'nope' } }] }, 'configmap "nope" not found'],
    [{ envFrom: [{ secretRef: { name: 'nope' } }] }, 'secret "nope" not found'],
    [{ env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'missing' } } }] }, "couldn't find key missing in ConfigMap ns1/cm"],
    [{ env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'sec', key: 'missing' } } }] }, "couldn't find key missing in Secret ns1/sec"],
    [{ env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }] }, 'secret "nope" not found'],
    [{ env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.containers' } } }] }, 'field label not supported: spec.containers'],
    [{ env: [{ name: 'X', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }] }, 'unsupported container resource : limits.gpu'],
  ] as Array<[Partial<V1Container>, string]>)('fails with the upstream message: %j', async (spec, detail) => {
    source.addConfigMap('ns1', 'cm', { a: '1' });
    source.addSecret('ns1', 'sec', { a: '1' });
    const err = await resolveEnv(pod(), c(spec), opts).catch((e: unknown) => e);
    expect(isNodeletError(err, 'NDL_CONTAINER_CONFIG')).toBe(true);
    expect((err as { detail: string }).detail).toBe(detail);
  });

  it('puts extra first (lowest precedence) and service env below container vars', async () => {
    const env = await resolveEnv(
      pod(),
      c({
        env: [
          { name: 'DEV', value: 'mine' },
          { name: 'URL', value: 'http://$(KUBERNETES_SERVICE_HOST)' },
        ],
      }),
      {
        ...opts,
        extra: { DEV: 'device', NVIDIA_VISIBLE_DEVICES: '0' },
        serviceEnv: { KUBERNETES_SERVICE_HOST: '10.96.0.1', URL: 'svc-url' },
      },
    );
    expect(env).toEqual({ NVIDIA_VISIBLE_DEVICES: '0', KUBERNETES_SERVICE_HOST: '10.96.0.1', DEV: 'mine', URL: 'http://10.96.0.1' });
  });
});

describe('resolveArgv', () => {
  it('joins command and args with $(VAR) expansion', () => {
    expect(resolveArgv({ name: 'app', command: ['/bin/app.wasm', '--name=$(POD)'], args: ['$(MISSING)', '$$(POD)'] }, { POD: 'web' })).toEqual([
      '/bin/app.wasm',
      '--name=web',
      '$(MISSING)',
      '$(POD)',
    ]);
  });

  it('uses the container name as argv[0] when there is no command', () => {
    expect(resolveArgv({ name: 'worker', image: 'example/worker:1', args: ['-v', '$(LEVEL)'] }, { LEVEL: '3' })).toEqual(['worker', '-v', '3']);
    expect(resolveArgv({ name: 'worker' }, {})).toEqual(['worker']);
  });
});
