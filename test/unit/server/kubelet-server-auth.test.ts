import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import https from 'node:https';
import { pino } from 'pino';
import { createKubeletServer, type KubeletServer } from '../../../core/server/kubelet-server.ts';
import type { RequestAttributes } from '../../../core/server/authz.ts';
import { selfSignedCert } from '../../../core/server/serving-cert.ts';
import type { StatsSnapshot } from '../../../core/metrics/stats-types.ts';
import { makeCa, makeClientCert, type Pem } from './test-pki.ts';

const NODE = 'node-a';
const SA = 'system:serviceaccount:kube-system:metrics-server';
const at = new Date('2026-01-02T03:04:05.678Z');
const snapshot: StatsSnapshot = {
  node: {
    nodeName: NODE,
    startTime: new Date('2026-01-01T00:00:00Z'),
    timestamp: at,
    cpuNs: 12.5e9,
    workingSetBytes: 50 << 20,
    usageBytes: 50 << 20,
    rssBytes: 50 << 20,
  },
  pods: [
    {
      namespace: 'ns',
      name: 'busy',
      uid: 'uid-1',
      containers: [
        { name: 'main', startTime: new Date('2026-01-02T03:00:00Z'), timestamp: at, cpuNs: 3e9, nanoCores: 9e8, workingSetBytes: 131072, usageBytes: 131072 },
      ],
    },
  ],
  scrapeError: false,
};

let serving: Pem;
let client: Pem;
const servers: KubeletServer[] = [];
const asked: RequestAttributes[] = [];

async function start(anonymous: boolean): Promise<number> {
  const ca = await makeCa('client-ca');
  client ??= await makeClientCert(ca, 'alice', ['devs', 'ops']);
  const s = createKubeletServer({
    nodeName: NODE,
    log: pino({ level: 'silent' }),
    pods: { listPods: () => [], findContainer: () => undefined },
    tls: { cert: serving.cert, key: serving.key, ca: ca.cert },
    address: '127.0.0.1',
    port: 0,
    healthzAddress: '127.0.0.1',
    healthzPort: null,
    authn: {
      anonymous,
      token: async (t) => {
        if (t === 'broken') throw new Error('TokenReview failed');
        return t === 'sa-token' ? { name: SA, groups: ['system:serviceaccounts'] } : undefined;
      },
    },
    authorizer: (a) => {
      asked.push(a);
      if (a.user.name === 'flaky') throw new Error('SubjectAccessReview failed');
      return { allowed: a.user.name === SA || a.user.name === 'alice' };
    },
    stats: {
      snapshot: async () => snapshot,
      metrics: async () => ({ text: 'kubelet_running_pods 1\n', contentType: 'text/plain; version=0.0.4; charset=utf-8' }),
      configz: () => ({ kind: 'KubeletConfiguration', authorization: { mode: 'Webhook' } }),
    },
  });
  servers.push(s);
  return (await s.start()).port;
}

function get(port: number, path: string, o: { token?: string; cert?: Pem } = {}): Promise<{ status: number; body: string; type?: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        ca: serving.cert,
        servername: NODE,
        headers: o.token ? { authorization: `Bearer ${o.token}` } : {},
        ...(o.cert ? { cert: o.cert.cert, key: o.cert.key } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body, type: res.headers['content-type'] }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

let strict: number;
let open: number;
beforeAll(async () => {
  serving = await selfSignedCert(NODE, ['127.0.0.1']);
  strict = await start(false);
  open = await start(true);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('bearer tokens and anonymous callers', () => {
  it('accepts a token the reviewer knows and authorizes its user with upstream subresources', async () => {
    asked.length = 0;
    expect((await get(strict, '/stats/summary', { token: 'sa-token' })).status).toBe(200);
    expect((await get(strict, '/metrics/resource', { token: 'sa-token' })).status).toBe(200);
    expect((await get(strict, '/configz', { token: 'sa-token' })).status).toBe(200);
    expect(asked.map((a) => [a.user.name, a.subresource])).toEqual([
      [SA, 'stats'],
      [SA, 'metrics'],
      [SA, 'configz'],
    ]);
  });

  it('answers 401 to an unknown token, a failed review and no credentials', async () => {
    expect(await get(strict, '/pods', { token: 'nope' })).toMatchObject({ status: 401, body: 'Unauthorized' });
    expect(await get(strict, '/pods', { token: 'broken' })).toMatchObject({ status: 401, body: 'Unauthorized' });
    expect(await get(strict, '/pods')).toMatchObject({ status: 401 });
    expect(await get(open, '/pods', { token: 'nope' })).toMatchObject({ status: 401 }); // a bad token is never anonymous
  });

  it('carries the groups of a client certificate (O=)', async () => {
    asked.length = 0;
    expect((await get(strict, '/pods', { cert: client })).status).toBe(200);
    expect(asked[0]!.user).toEqual({ name: 'alice', groups: ['devs', 'ops'] });
  });

  it('serves anonymous callers as system:anonymous only with --anonymous-auth, still authorized', async () => {
    asked.length = 0;
    expect(await get(open, '/healthz')).toMatchObject({
      status: 403,
      body: 'Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[healthz proxy])\n',
    });
    expect(asked[0]!.user).toEqual({ name: 'system:anonymous', groups: ['system:unauthenticated'] });
  });
});

describe('metrics, stats and configz', () => {
  it("/stats/summary has upstream's Summary shape", async () => {
    const r = await get(strict, '/stats/summary', { token: 'sa-token' });
    expect(r.type).toMatch(/application\/json/);
    expect(JSON.parse(r.body)).toEqual({
      node: {
        nodeName: NODE,
        startTime: '2026-01-01T00:00:00Z',
        cpu: { time: '2026-01-02T03:04:05Z', usageCoreNanoSeconds: 12.5e9 },
        memory: { time: '2026-01-02T03:04:05Z', rssBytes: 50 << 20, usageBytes: 50 << 20, workingSetBytes: 50 << 20 },
      },
      pods: [
        {
          podRef: { name: 'busy', namespace: 'ns', uid: 'uid-1' },
          startTime: '2026-01-02T03:04:05Z',
          containers: [
            {
              name: 'main',
              startTime: '2026-01-02T03:00:00Z',
              cpu: { time: '2026-01-02T03:04:05Z', usageNanoCores: 9e8, usageCoreNanoSeconds: 3e9 },
              memory: { time: '2026-01-02T03:04:05Z', usageBytes: 131072, workingSetBytes: 131072 },
            },
          ],
          cpu: { time: '2026-01-02T03:04:05Z', usageNanoCores: 9e8, usageCoreNanoSeconds: 3e9 },
          memory: { time: '2026-01-02T03:04:05Z', usageBytes: 131072, workingSetBytes: 131072 },
        },
      ],
    });
  });

  it("/metrics/resource has upstream's series with timestamps", async () => {
    const r = await get(strict, '/metrics/resource', { token: 'sa-token' });
    expect(r.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    const ts = at.getTime();
    for (const line of [
      '# TYPE container_cpu_usage_seconds_total counter',
      `container_cpu_usage_seconds_total{container="main",namespace="ns",pod="busy"} 3 ${ts}`,
      `container_memory_working_set_bytes{container="main",namespace="ns",pod="busy"} 131072 ${ts}`,
      `container_start_time_seconds{container="main",namespace="ns",pod="busy"} ${Date.parse('2026-01-02T03:00:00Z') / 1000} ${ts}`,
      `node_cpu_usage_seconds_total 12.5 ${ts}`,
      `node_memory_working_set_bytes ${50 << 20} ${ts}`,
      `pod_cpu_usage_seconds_total{namespace="ns",pod="busy"} 3 ${ts}`,
      `pod_memory_working_set_bytes{namespace="ns",pod="busy"} 131072 ${ts}`,
      'resource_scrape_error 0',
      'scrape_error 0',
    ])
      expect(r.body.split('\n')).toContain(line);
  });

  it('/configz wraps the configuration; /metrics is the registry text', async () => {
    expect(JSON.parse((await get(strict, '/configz', { cert: client })).body)).toEqual({
      kubeletconfig: { kind: 'KubeletConfiguration', authorization: { mode: 'Webhook' } },
    });
    expect((await get(strict, '/metrics', { cert: client })).body).toBe('kubelet_running_pods 1\n');
  });
});
