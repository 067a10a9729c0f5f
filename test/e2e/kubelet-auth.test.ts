/**
 * The kubelet API's authentication and authorization against the real
 * apiserver: client certificates the cluster CA signed (CN/O), service-account
 * tokens by TokenReview, every request by SubjectAccessReview (Webhook mode,
 * nodelet's default), as upstream's kubelet, with its fine-grained
 * subresources (nodes/pods, nodes/healthz, … before nodes/proxy). The node runs
 * with a 2 s denied cache so a new RBAC grant shows without waiting upstream's 30 s.
 */
import type { V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { issueClientCert } from '../cluster/control-plane.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { kubeletGet, kubeletRequest, type Caller } from './support/kubelet-api.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

describe('kubelet API authn/authz (Webhook)', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'authz-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const get = (path: string, who: Caller = {}) => kubeletGet(nodelet.port, path, info.caCert, who);
  const ok = (what: string) => {
    const r = kubectl(info, what.split(' '));
    if (r.status !== 0) throw new Error(`kubectl ${what}: ${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    reg = await startRegistry();
    const image = await pushModule(reg, 'sleep');
    nodelet = await startNodelet(info, nodeName, ['--authorization-webhook-cache-unauthorized-ttl=2s']);
    ns = await podNamespace(k.core, 'authz');
    await waitNodeReady(k.core, nodeName);
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'sleeper' },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          containers: [{ name: 'main', image, args: ['3600'] }],
        } as V1PodSpec,
      },
    });
    await podUntil(k.core, ns, 'sleeper', 'Running', (p) => p.status?.phase === 'Running');
  });
  afterAll(async () => {
    const fine = ['pods', 'proxy-rw', 'healthz', 'proxy-get', 'configz'].map((r) => `authz-e2e-fg-${r}`);
    kubectl(info, ['delete', 'clusterrolebinding', 'authz-e2e-eve', 'authz-e2e-sa', ...fine, '--ignore-not-found']);
    kubectl(info, ['delete', 'clusterrole', 'authz-e2e-node-proxy', 'authz-e2e-node-stats', ...fine, '--ignore-not-found']);
    await nodelet?.dispose();
    await reg?.stop();
  });

  it('a certificate for another user is refused with 403 until RBAC grants nodes/proxy, then served', async () => {
    const eve = issueClientCert(info, 'authz-eve', 'eve', ['auditors']);
    const logsPath = `/containerLogs/${ns}/sleeper/main`;
    expect(await get('/pods', eve)).toEqual({ status: 403, body: 'Forbidden (user=eve, verb=get, resource=nodes, subresource(s)=[pods proxy])\n' });
    expect(await get(logsPath, eve)).toEqual({ status: 403, body: 'Forbidden (user=eve, verb=get, resource=nodes, subresource(s)=[proxy])\n' });
    ok('create clusterrole authz-e2e-node-proxy --verb=get --resource=nodes/proxy');
    ok('create clusterrolebinding authz-e2e-eve --clusterrole=authz-e2e-node-proxy --group=auditors');
    // The denial was cached for 2 s (--authorization-webhook-cache-unauthorized-ttl); RBAC itself is eventually consistent.
    const pods = await eventually(
      'eve reads /pods',
      async () => {
        const r = await get('/pods', eve);
        return r.status === 200 ? r : undefined;
      },
      30_000,
      500,
    );
    expect(JSON.parse(pods.body).items.map((p: { metadata: { name: string } }) => p.metadata.name)).toContain('sleeper');
    const logs = await get(logsPath, eve);
    expect(logs.status).toBe(200);
    expect(logs.body).toContain('sleeping 3600');
    // nodes/proxy does not grant nodes/stats (no fallback for /stats).
    expect(await get('/stats/summary', eve)).toEqual({ status: 403, body: 'Forbidden (user=eve, verb=get, resource=nodes, subresource(s)=[stats])\n' });
  });

  it('a service-account token is authenticated by TokenReview and authorized by SubjectAccessReview', async () => {
    ok(`-n ${ns} create serviceaccount scraper`);
    const token = ok(`-n ${ns} create token scraper --duration=10m`).trim();
    const user = `system:serviceaccount:${ns}:scraper`;
    // Authenticated (else 401), not yet authorized.
    expect(await get('/stats/summary', { token })).toEqual({
      status: 403,
      body: `Forbidden (user=${user}, verb=get, resource=nodes, subresource(s)=[stats])\n`,
    });
    ok('create clusterrole authz-e2e-node-stats --verb=get --resource=nodes/stats,nodes/metrics');
    ok(`create clusterrolebinding authz-e2e-sa --clusterrole=authz-e2e-node-stats --serviceaccount=${ns}:scraper`);
    const summary = await eventually(
      'the token reads /stats/summary',
      async () => {
        const r = await get('/stats/summary', { token });
        return r.status === 200 ? r : undefined;
      },
      30_000,
      500,
    );
    const s = JSON.parse(summary.body);
    expect(s.node.nodeName).toBe(nodeName);
    expect(s.pods.map((p: { podRef: { name: string } }) => p.podRef.name)).toContain('sleeper');
    expect((await get('/pods', { token })).status).toBe(403);
  });

  /** Polls `call` until it answers `status` (RBAC and the 2 s denied cache settle), then returns that answer. */
  const until = (what: string, status: number, call: () => Promise<{ status: number; body: string }>) =>
    eventually(
      what,
      async () => {
        const r = await call();
        return r.status === status ? r : undefined;
      },
      30_000,
      500,
    );

  it('KubeletFineGrainedAuthz: nodes/pods alone reads /pods but cannot exec; nodes/proxy alone does both', async () => {
    const pat = issueClientCert(info, 'authz-pat', 'pat', ['authz-pods-readers']);
    const pru = issueClientCert(info, 'authz-pru', 'pru', ['authz-proxy-users']);
    ok('create clusterrole authz-e2e-fg-pods --verb=get --resource=nodes/pods');
    ok('create clusterrolebinding authz-e2e-fg-pods --clusterrole=authz-e2e-fg-pods --group=authz-pods-readers');
    ok('create clusterrole authz-e2e-fg-proxy-rw --verb=get,create --resource=nodes/proxy');
    ok('create clusterrolebinding authz-e2e-fg-proxy-rw --clusterrole=authz-e2e-fg-proxy-rw --group=authz-proxy-users');
    const execPath = `/exec/${ns}/sleeper/main?command=true&stdout=1`;
    const names = (body: string) => JSON.parse(body).items.map((p: { metadata: { name: string } }) => p.metadata.name);

    // nodes/pods (asked first for /pods) is enough for /pods ...
    expect(names((await until('pat reads /pods', 200, () => get('/pods', pat))).body)).toContain('sleeper');
    // ... and grants nothing that needs nodes/proxy: exec (POST → create) and container logs.
    expect(await kubeletRequest(nodelet.port, 'POST', execPath, info.caCert, pat)).toEqual({
      status: 403,
      body: 'Forbidden (user=pat, verb=create, resource=nodes, subresource(s)=[proxy])\n',
    });
    expect(await get(`/containerLogs/${ns}/sleeper/main`, pat)).toEqual({
      status: 403,
      body: 'Forbidden (user=pat, verb=get, resource=nodes, subresource(s)=[proxy])\n',
    });

    // nodes/proxy is the fallback for /pods, and what exec needs: pru passes authorization for both
    // (exec then gets the provider's answer: the WASI provider cannot exec).
    expect(names((await until('pru reads /pods', 200, () => get('/pods', pru))).body)).toContain('sleeper');
    const exec = await kubeletRequest(nodelet.port, 'POST', execPath, info.caCert, pru);
    expect(exec.status).toBe(400);
    expect(JSON.parse(exec.body)).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'not supported by provider "wasi": exec' });
  });

  // Ported from upstream test/e2e/node/kubelet_authz.go, [Feature:KubeletFineGrainedAuthz] "when calling kubelet API":
  // "check /healthz enpoint is accessible via nodes/healthz RBAC", "... via nodes/proxy RBAC",
  // "check /healthz enpoint is not accessible via nodes/configz RBAC" (service-account tokens, verb get).
  it('/healthz is served to nodes/healthz and nodes/proxy, refused to nodes/configz', async () => {
    const tokenFor = (sub: string, role: string) => {
      const sa = `fg-${sub}`;
      ok(`-n ${ns} create serviceaccount ${sa}`);
      ok(`create clusterrole ${role} --verb=get --resource=nodes/${sub}`);
      ok(`create clusterrolebinding ${role} --clusterrole=${role} --serviceaccount=${ns}:${sa}`);
      return { token: ok(`-n ${ns} create token ${sa} --duration=10m`).trim() };
    };
    const healthz = tokenFor('healthz', 'authz-e2e-fg-healthz');
    const proxy = tokenFor('proxy', 'authz-e2e-fg-proxy-get');
    const configz = tokenFor('configz', 'authz-e2e-fg-configz');
    expect((await until('nodes/healthz reads /healthz', 200, () => get('/healthz', healthz))).body).toBe('ok');
    expect((await until('nodes/proxy reads /healthz', 200, () => get('/healthz', proxy))).body).toBe('ok');
    // The configz grant is in effect (it reads /configz) yet does not open /healthz.
    await until('nodes/configz reads /configz', 200, () => get('/configz', configz));
    expect(await get('/healthz', configz)).toEqual({
      status: 403,
      body: `Forbidden (user=system:serviceaccount:${ns}:fg-configz, verb=get, resource=nodes, subresource(s)=[healthz proxy])\n`,
    });
  });

  it('anonymous callers and unknown tokens get 401', async () => {
    expect(await get('/pods')).toEqual({ status: 401, body: 'Unauthorized' });
    expect(await get('/healthz')).toEqual({ status: 401, body: 'Unauthorized' });
    expect(await get('/pods', { token: 'not-a-token' })).toEqual({ status: 401, body: 'Unauthorized' });
  });

  it('with --anonymous-auth=true, callers without credentials are system:anonymous and still need RBAC', async () => {
    const open = await startNodelet(info, 'authz-n2', ['--anonymous-auth=true']);
    try {
      await waitNodeReady(k.core, 'authz-n2');
      const r = await kubeletGet(open.port, '/pods', info.caCert);
      expect(r).toEqual({ status: 403, body: 'Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[pods proxy])\n' });
      expect((await kubeletGet(open.port, '/pods', info.caCert, { token: 'not-a-token' })).status).toBe(401);
    } finally {
      await open.dispose();
    }
  });

  it('the apiserver reaches the kubelet API with its own client certificate (kubectl logs)', async () => {
    const out = await eventually(
      'kubectl logs',
      () => {
        const r = kubectl(info, ['-n', ns, 'logs', 'sleeper']);
        return r.status === 0 ? r.stdout : undefined;
      },
      30_000,
      500,
    );
    expect(out).toContain('sleeping 3600');
  });
});
