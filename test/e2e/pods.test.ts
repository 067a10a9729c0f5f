/**
 * Wasm pods end to end: the real scheduler binds them to nodelet, the WASI
 * provider runs real modules pulled from a real registry, and status, logs,
 * restarts, deletion, volumes and env behave as with the upstream kubelet.
 */
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady, podUntil } from './support/kube.ts';
import { kubectl, kubectlStream } from './support/kubectl.ts';
import { E2E_WASI_RUNTIME, startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

describe('Wasm pods on nodelet', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'pods-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['hello', 'exit-code', 'sleep', 'loop', 'read-file', 'fs-ops']) img[m] = await pushModule(reg, m);
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'pods');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      // No nodeName: the real scheduler binds the pod; the selector keeps it off other test files' nodes.
      body: {
        metadata: { name },
        spec: { tolerations: [WASM_TOLERATION], nodeSelector: { 'kubernetes.io/hostname': nodeName }, containers: [], ...spec } as V1PodSpec,
      },
    });
  const read = (name: string) => k.core.readNamespacedPod({ name, namespace: ns });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 60_000) => podUntil(k.core, ns, name, what, ok, ms);

  it('a pod without nodeName is scheduled onto nodelet by the real scheduler and Succeeds with exit 0', async () => {
    await create('ok', { restartPolicy: 'Never', containers: [{ name: 'main', image: img.hello, args: ['hi'] }] });
    const p = await until('ok', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    expect(p.spec?.nodeName).toBe(nodeName);
    const cs = p.status!.containerStatuses![0]!;
    expect(cs.state?.terminated?.exitCode).toBe(0);
    expect(cs.state?.terminated?.reason).toBe('Completed');
    expect(cs.containerID).toMatch(/^wasi:\/\//);
    expect(cs.imageID).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(p.status?.hostIP).toBe('127.0.0.1');
    const types = (p.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`);
    expect(types).toEqual(expect.arrayContaining(['PodScheduled=True', 'Initialized=True', 'Ready=False', 'ContainersReady=False']));
  });

  it('exit 3 with restartPolicy Never ends Failed with exitCode 3', async () => {
    await create('fail', { restartPolicy: 'Never', containers: [{ name: 'main', image: img['exit-code'], args: ['3'] }] });
    const p = await until('fail', 'Failed', (p) => p.status?.phase === 'Failed');
    const t = p.status!.containerStatuses![0]!.state!.terminated!;
    expect(t.exitCode).toBe(3);
    expect(t.reason).toBe('Error');
  });

  it('with OnFailure the restart count rises and CrashLoopBackOff shows between tries', async () => {
    await create('crash', { restartPolicy: 'OnFailure', containers: [{ name: 'main', image: img['exit-code'], args: ['3'] }] });
    const p = await until('crash', 'CrashLoopBackOff', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff');
    const cs = p.status!.containerStatuses![0]!;
    expect(cs.restartCount).toBeGreaterThanOrEqual(1);
    expect(cs.lastState?.terminated?.exitCode).toBe(3);
    expect(cs.state?.waiting?.message).toMatch(/^back-off \S+ restarting failed container=main pod=crash_/);
    await until('crash', 'restartCount >= 2', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2, 40_000);
    // Events are sent one at a time after the status (as upstream's broadcaster): wait for them.
    const events = await eventually(
      'crash events',
      async () => {
        const l = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=crash' });
        return ['Pulled', 'Created', 'Started', 'BackOff'].every((r) => l.items.some((e) => e.reason === r)) ? l : undefined;
      },
      10_000,
    );
    expect(events.items.map((e) => e.reason)).toEqual(expect.arrayContaining(['Pulled', 'Created', 'Started', 'BackOff']));
  });

  it('kubectl logs returns the output through the apiserver, --tail=2 the last two lines, -f streams while running', async () => {
    await create('ticker', { restartPolicy: 'Never', containers: [{ name: 'main', image: img.sleep, args: ['5'] }] });
    await until('ticker', 'Running', (p) => p.status?.phase === 'Running');
    const follow = kubectlStream(info, ['logs', '-f', '-n', ns, 'ticker']);
    await eventually('two streamed ticks', async () => follow.lines.filter((l) => l.startsWith('tick')).length >= 2, 20_000);
    const early = (await read('ticker')).status?.phase;
    expect(early).toBe('Running');
    expect(await follow.done).toBe(0);
    expect(follow.lines).toEqual(['sleeping 5', 'tick 1', 'tick 2', 'tick 3', 'tick 4', 'tick 5']);
    await until('ticker', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    const all = kubectl(info, ['logs', '-n', ns, 'ticker']);
    expect(all.status).toBe(0);
    expect(all.stdout.trim().split('\n')).toHaveLength(6);
    const tail = kubectl(info, ['logs', '--tail=2', '-n', ns, 'ticker']);
    expect(tail.stdout.trim().split('\n')).toEqual(['tick 4', 'tick 5']);
  });

  it('kubectl exec says the provider does not support it', async () => {
    await create('noexec', { containers: [{ name: 'main', image: img.sleep, args: ['3600'] }] });
    await until('noexec', 'Running', (p) => p.status?.phase === 'Running');
    const r = kubectl(info, ['exec', '-n', ns, 'noexec', '--', 'ls']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('not supported by provider "wasi"');
  });

  it('a sleeping module and a busy loop are stopped on delete within the grace period and the pod object disappears', async () => {
    await create('sleeper', { terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: img.sleep, args: ['3600'] }] });
    await create('spinner', { terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: img.loop }] });
    await until('sleeper', 'Running', (p) => p.status?.phase === 'Running');
    await until('spinner', 'Running', (p) => p.status?.phase === 'Running');
    const t0 = Date.now();
    await k.core.deleteNamespacedPod({ name: 'sleeper', namespace: ns });
    await k.core.deleteNamespacedPod({ name: 'spinner', namespace: ns });
    for (const name of ['sleeper', 'spinner']) {
      await eventually(
        `${name} gone`,
        async () =>
          await read(name).then(
            () => false,
            (e) => (e as { code?: number }).code === 404,
          ),
        15_000,
      );
    }
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('configMap and secret volumes and env vars from both are visible to the module', async () => {
    await k.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cfg' }, data: { color: 'blue', size: 'XL' } } });
    await k.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'sec' }, stringData: { password: 's3cret' } } });
    await create('vols', {
      restartPolicy: 'Never',
      volumes: [
        { name: 'cfg', configMap: { name: 'cfg' } },
        { name: 'sec', secret: { secretName: 'sec' } },
      ],
      containers: [
        {
          name: 'files',
          image: img['read-file'],
          args: ['/etc/cfg/color', '/etc/sec/password'],
          volumeMounts: [
            { name: 'cfg', mountPath: '/etc/cfg' },
            { name: 'sec', mountPath: '/etc/sec', readOnly: true },
          ],
        },
        {
          name: 'env',
          image: img.hello,
          env: [
            { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'color' } } },
            { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
            { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
          envFrom: [{ configMapRef: { name: 'cfg' }, prefix: 'CFG_' }],
        },
      ],
    });
    await until('vols', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    const files = kubectl(info, ['logs', '-n', ns, 'vols', '-c', 'files']).stdout;
    expect(files).toContain('content /etc/cfg/color: blue');
    expect(files).toContain('content /etc/sec/password: s3cret');
    const env = kubectl(info, ['logs', '-n', ns, 'vols', '-c', 'env']).stdout;
    for (const line of ['COLOR=blue', 'PASSWORD=s3cret', 'POD=vols', 'CFG_color=blue', 'CFG_size=XL']) expect(env).toContain(line);
  });

  it('paths with .. are refused by the apiserver, and a subPath symlink out of its volume is refused by nodelet', async () => {
    await expect(
      create('dotdot', {
        volumes: [{ name: 'd', emptyDir: {} }],
        containers: [{ name: 'm', image: img.hello, volumeMounts: [{ name: 'd', mountPath: '/d', subPath: '../../etc' }] }],
      }),
    ).rejects.toMatchObject({ code: 422 });
    // The classic subPath attack (CVE-2017-1002101): the volume holds a symlink that points out of it.
    const dir = mkdtempSync(join(tmpdir(), 'nodelet-escape-'));
    symlinkSync('/etc', join(dir, 'link'));
    await create('escape', {
      restartPolicy: 'Never',
      volumes: [{ name: 'd', hostPath: { path: dir, type: 'Directory' } }],
      containers: [{ name: 'm', image: img.hello, volumeMounts: [{ name: 'd', mountPath: '/x', subPath: 'link' }] }],
    });
    const p = await until(
      'escape',
      'CreateContainerConfigError',
      (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError',
    );
    expect(p.status!.containerStatuses![0]!.state!.waiting!.message).toMatch(/link/);
    // Events are sent one at a time after the status (as upstream's broadcaster): wait for them.
    const failed = await eventually(
      'escape Failed event',
      async () => {
        const l = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=escape' });
        return l.items.some((e) => e.reason === 'Failed' && /link/.test(e.message ?? ''));
      },
      10_000,
    );
    expect(failed).toBe(true);
  });

  it('the kubelet API answers an anonymous request with 401', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: nodelet.port, path: '/pods', rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(401);
  });

  it('on restart, pods deleted while nodelet was down are cleaned up and running pods run again (or, with the external WASI runtime, still run)', async () => {
    await create('gone', { containers: [{ name: 'main', image: img.sleep, args: ['3600'] }] });
    await create('stays', { containers: [{ name: 'main', image: img.sleep, args: ['3600'] }] });
    const gone = await until('gone', 'Running', (p) => p.status?.phase === 'Running');
    const before = await until('stays', 'Running', (p) => p.status?.phase === 'Running');
    const goneDir = join(nodelet.rootDir, 'pods', gone.metadata!.uid!);
    expect(existsSync(goneDir)).toBe(true);
    expect(await nodelet.stop()).toBe(0);
    await k.core.deleteNamespacedPod({ name: 'gone', namespace: ns, gracePeriodSeconds: 0 });
    await nodelet.restart();
    await eventually("the deleted pod's directory removed", async () => !existsSync(goneDir), 30_000);
    if (E2E_WASI_RUNTIME === 'external') {
      // The runtime kept the container across the restart: re-adopted, not restarted (runtime-restart.test.ts).
      await eventually('stays re-adopted', async () => readFileSync(nodelet.logFile, 'utf8').includes('re-adopted running container'), 60_000);
      const p = await until('stays', 'Running', (p) => p.status?.phase === 'Running');
      expect(p.status?.containerStatuses?.[0]).toMatchObject({ restartCount: 0, containerID: before.status?.containerStatuses?.[0]?.containerID });
      return;
    }
    const p = await until('stays', 'running again', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && p.status?.phase === 'Running');
    expect(p.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
  });
});
