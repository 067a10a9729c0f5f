/**
 * The platform interfaces Spin 3 and wasmCloud apps import, end to end, with the platform-app
 * component (test/fixtures/components/platform-app, cargo wasm32-wasip2; wasi:keyvalue@0.2.0-draft2,
 * wasi:config/store@0.2.0-draft-2024-09-27, wasi:logging/logging@0.1.0-draft) served per request:
 *  - wasi:keyvalue on the node's default store (SQLite under the pod's dir): a counter kept across
 *    requests and across a restart of the container (a liveness probe on `/live` restarts it on
 *    demand); every operation of store, atomics (increment, cas/swap) and batch works on it;
 *  - wasi:keyvalue on Redis (a real redis-server the test starts on a loopback port, forwarded into
 *    both nodes' network namespaces): two pods on two nodes, each annotated
 *    `wasi.nodelet.dev/keyvalue-default: redis://…`, count on one counter; every operation works there too;
 *  - wasi:config/store reads a ConfigMap value (envFrom with the prefix SPIN_VARIABLE_) and a Secret
 *    value (env valueFrom), and get-all lists them;
 *  - wasi:logging lines are in `kubectl logs`, each with its level;
 *  - a store label the pod does not configure opens `no-such-store`.
 * Each nodelet runs in a network namespace of the test's own (test/harness/test-network.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../harness/ports.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { until } from '../harness/until.ts';
import { netnsUnavailable, type TestHost } from '../harness/test-network.ts';
import { pushComponent, WASM_TOLERATION } from './support/images.ts';
import { adminClients, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startIsolatedNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const unavailable = netnsUnavailable();
const noRedis = spawnSync('redis-server', ['--version']).status === 0 ? undefined : 'has no redis-server';

describe.skipIf(unavailable !== undefined || noRedis !== undefined)(
  `WASI platform interfaces for components: wasi:keyvalue, wasi:config, wasi:logging (skipped where the machine ${unavailable ?? noRedis ?? 'lacks CAP_NET_ADMIN or redis-server'})`,
  () => {
    const info = inject('cluster');
    const k = adminClients(info);
    const nodes = ['platform-n1', 'platform-n2'] as const;
    const container = 'app';
    let reg: TestRegistry;
    let image: string;
    let ns: string;
    let redis: ChildProcess | undefined;
    let redisPort: number;
    const nodelets: Array<NodeletProcess & { host: TestHost }> = [];
    /** Each pod's node and address. */
    const pods = new Map<string, { host: TestHost; ip: string; port: number }>();

    const isReady = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    /** GET `path` of pod `name`, from inside its node's namespace. */
    const get = async (name: string, path: string) => {
      const p = pods.get(name)!;
      return p.host.httpGet(p.ip, p.port, path);
    };
    /** Creates pod `name` on node `node` (index) with `annotations` and container fields `extra(port)`; waits Ready. */
    const runPod = async (name: string, node: number, annotations: Record<string, string> = {}, extra: (port: number) => Partial<V1Container> = () => ({})) => {
      const port = await freePort();
      await k.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name, annotations },
          spec: {
            nodeName: nodes[node],
            tolerations: [WASM_TOLERATION],
            restartPolicy: 'Always',
            containers: [{ name: container, image, ports: [{ containerPort: port }], ...extra(port) }],
          } as V1PodSpec,
        },
      });
      const pod = await podUntil(k.core, ns, name, 'Ready', isReady, 120_000);
      const ip = pod.status?.podIP && pod.status.podIP !== '127.0.0.1' ? pod.status.podIP : '127.0.0.1';
      pods.set(name, { host: nodelets[node]!.host, ip, port });
      await until(`pod ${name} answers`, async () => (await get(name, '/').catch(() => ({ status: 0 }))).status === 200, 30_000);
    };
    /** `kubectl logs` of pod `name` once `ready` holds of its lines (at most 10 s), or the last lines read. */
    const logsUntil = async (name: string, ready: (lines: string[]) => boolean): Promise<string[]> => {
      let last: ReturnType<typeof kubectl> = { status: null, stdout: '', stderr: 'kubectl was not run' };
      await until(
        `the log of ${name}`,
        () => {
          last = kubectl(info, ['logs', '-n', ns, name, '-c', container]);
          return last.status === 0 && ready(last.stdout.split('\n'));
        },
        10_000,
      ).catch(() => undefined);
      expect(last.status, `kubectl logs ${name}: ${last.stderr}`).toBe(0);
      return last.stdout.split('\n');
    };

    beforeAll(async () => {
      redisPort = await freePort();
      // A throwaway server: loopback only, no persistence, no config file.
      redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], {
        stdio: 'ignore',
      });
      reg = await startRegistry();
      image = await pushComponent(reg, 'platform-app');
      const forward = [Number(new URL(reg.url).port), redisPort];
      for (const n of nodes) nodelets.push(await startIsolatedNodelet(info, n, { forward }));
      ns = await podNamespace(k.core, 'wasi-platform');
      await Promise.all(nodes.map((n) => waitNodeReady(k.core, n)));
      await k.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'app-config' }, data: { greeting: 'hello from a ConfigMap' } } });
      await k.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'app-secret' }, stringData: { token: 's3cr3t' } } });
      const redisUrl = `redis://127.0.0.1:${redisPort}`;
      await Promise.all([
        runPod('local', 0, {}, (port) => ({
          livenessProbe: { httpGet: { path: '/live', port }, periodSeconds: 1, failureThreshold: 1 },
          envFrom: [{ configMapRef: { name: 'app-config' }, prefix: 'SPIN_VARIABLE_' }],
          env: [{ name: 'SPIN_VARIABLE_API_TOKEN', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'token' } } }],
        })),
        runPod('shared-1', 0, { 'wasi.nodelet.dev/keyvalue-default': redisUrl }),
        runPod('shared-2', 1, { 'wasi.nodelet.dev/keyvalue-default': redisUrl }),
      ]);
    }, 600_000);
    afterAll(async () => {
      for (const n of nodelets) await n.dispose();
      await reg?.stop();
      redis?.kill();
    });

    it('wasi:keyvalue on the default store (SQLite on the node): a counter keeps counting across requests and across a restart of the container', async () => {
      expect((await get('local', '/count')).body).toBe('1');
      expect((await get('local', '/count')).body).toBe('2');
      expect((await get('local', '/count')).body).toBe('3');
      // The liveness probe answers 500 once: the container is restarted.
      expect((await get('local', '/unhealthy')).body).toBe('armed');
      await podUntil(k.core, ns, 'local', 'restarted', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && isReady(p), 60_000);
      await until('the restarted container answers', async () => (await get('local', '/').catch(() => ({ status: 0 }))).status === 200, 30_000);
      expect((await get('local', '/count')).body).toBe('4');
    });

    it('wasi:keyvalue on the default store: get, set, exists, list-keys, get-many, set-many, delete-many, delete and cas/swap', async () => {
      expect(await get('local', '/kv')).toEqual({ status: 200, body: 'ok' });
    });

    it('wasi:keyvalue on Redis: two pods on two nodes count on one counter', async () => {
      const seen: string[] = [];
      for (let i = 0; i < 3; i++) {
        seen.push((await get('shared-1', '/count')).body);
        seen.push((await get('shared-2', '/count')).body);
      }
      expect(seen).toEqual(['1', '2', '3', '4', '5', '6']);
      // The value is where Redis keeps it: a Redis key of the same name, as Spin's Redis store keeps it.
      const cli = spawnSync('redis-cli', ['-p', String(redisPort), 'GET', 'hits'], { encoding: 'utf8' });
      expect(cli.stdout.trim()).toBe('6');
    });

    it('wasi:keyvalue on Redis: every operation works, and the pods are not restarted', async () => {
      expect(await get('shared-2', '/kv')).toEqual({ status: 200, body: 'ok' });
      const p = await k.core.readNamespacedPod({ name: 'shared-2', namespace: ns });
      expect(p.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    });

    it('a store label the pod does not configure opens no-such-store', async () => {
      expect((await get('local', '/open/elsewhere')).body).toBe('Error::NoSuchStore');
      expect((await get('local', '/open/default')).body).toBe('opened');
    });

    it('wasi:config/store reads a ConfigMap value (envFrom, prefix SPIN_VARIABLE_) and a Secret value (env valueFrom); get-all lists them', async () => {
      expect((await get('local', '/config/greeting')).body).toBe('hello from a ConfigMap');
      expect((await get('local', '/config/api_token')).body).toBe('s3cr3t');
      expect((await get('local', '/config/missing')).body).toBe('<none>');
      expect((await get('local', '/config-all')).body).toBe('api_token=s3cr3t\ngreeting=hello from a ConfigMap\n');
    });

    it('wasi:logging lines are in kubectl logs, each with its level', async () => {
      expect((await get('shared-1', '/log')).body).toBe('logged');
      const levels = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL'];
      const lines = await logsUntil('shared-1', (l) => l.some((x) => x.includes('a critical line')));
      for (const level of levels) {
        expect(lines, lines.join('\n')).toContain(`${level.padEnd(8)} platform-app: a ${level.toLowerCase()} line`);
      }
    });
  },
);
