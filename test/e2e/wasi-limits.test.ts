/**
 * WASI limits and isolation end to end, each asserting the exact pod status the
 * real apiserver ends up with: a memory limit ends OOMKilled (137), a trap ends
 * Error with the trap message, symlinks cannot lead a module out of its volumes,
 * readOnly volumes cannot be written, and terminationMessagePath /
 * FallbackToLogsOnError fill `terminated.message` as upstream.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ContainerStateTerminated, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

describe('WASI limits and isolation', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'limits-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let hostDir: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['alloc', 'trap', 'escape', 'write-file', 'exit-code']) img[m] = await pushModule(reg, m);
    // A host directory (a hostPath volume) holding symlinks that point out of it, and a secret beside it.
    hostDir = mkdtempSync(join(tmpdir(), 'nodelet-limits-'));
    writeFileSync(join(hostDir, 'outside-secret'), 'HOST SECRET');
    const vol = join(hostDir, 'vol');
    mkdirSync(vol);
    symlinkSync(join(hostDir, 'outside-secret'), join(vol, 'abs-link'));
    symlinkSync('../outside-secret', join(vol, 'rel-link'));
    symlinkSync('/etc', join(vol, 'etc-dir'));
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'limits');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
    if (hostDir) rmSync(hostDir, { recursive: true, force: true });
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name }, spec: { nodeName, tolerations: [WASM_TOLERATION], restartPolicy: 'Never', containers: [], ...spec } as V1PodSpec },
    });
  const finished = async (name: string): Promise<{ pod: V1Pod; t: V1ContainerStateTerminated }> => {
    let last: V1Pod | undefined;
    try {
      const pod = await eventually(`${name} finished`, async () => {
        last = await k.core.readNamespacedPod({ name, namespace: ns });
        return ['Succeeded', 'Failed'].includes(last.status?.phase ?? '') ? last : undefined;
      });
      return { pod, t: pod.status!.containerStatuses![0]!.state!.terminated! };
    } catch (e) {
      throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last?.status)}`);
    }
  };
  const logs = (name: string) => kubectl(info, ['logs', '-n', ns, name]).stdout;

  it('a module that outgrows resources.limits.memory ends OOMKilled with exit code 137', async () => {
    await create('oom', { containers: [{ name: 'main', image: img.alloc, resources: { limits: { memory: '16Mi' } } }] });
    const { pod, t } = await finished('oom');
    expect(pod.status?.phase).toBe('Failed');
    expect(t.reason).toBe('OOMKilled');
    expect(t.exitCode).toBe(137);
  });

  it('a trap ends with reason Error and the trap message in terminated.message', async () => {
    await create('trap', { containers: [{ name: 'main', image: img.trap }] });
    const { pod, t } = await finished('trap');
    expect(pod.status?.phase).toBe('Failed');
    expect(t.reason).toBe('Error');
    expect(t.exitCode).toBe(134);
    expect(t.message).toMatch(/^RuntimeError: unreachable\nwasm backtrace:\n {4}at /);
    expect(logs('trap')).toContain(`about to trap\nnodelet: the module trapped: ${t.message}`);
  });

  it('symlinks pointing out of a volume cannot be followed, whoever made them', async () => {
    const volumes = [{ name: 'data', hostPath: { path: join(hostDir, 'vol'), type: 'Directory' } }];
    const mount = [{ name: 'data', mountPath: '/data' }];
    const cases: Record<string, string[]> = {
      'esc-abs': ['/data/abs-link'],
      'esc-rel': ['/data/rel-link'],
      'esc-dir': ['/data/etc-dir/hostname'],
      'esc-own': ['/data/own-link', join(hostDir, 'outside-secret'), '/data/own-link'],
      'esc-dotdot': ['/data/../outside-secret'],
    };
    for (const [name, args] of Object.entries(cases))
      await create(name, { volumes, containers: [{ name: 'main', image: img.escape, args, volumeMounts: mount }] });
    for (const [name, args] of Object.entries(cases)) {
      const { pod, t } = await finished(name);
      const out = logs(name);
      expect(out, name).toContain(`cannot open ${args[0]}`);
      expect(out, name).not.toContain('HOST SECRET');
      expect(pod.status?.phase, name).toBe('Failed');
      expect(t.exitCode, name).toBe(1);
      expect(t.reason, name).toBe('Error');
    }
  });

  it('a readOnly volume cannot be written; the same volume read-write can', async () => {
    const volumes = [{ name: 'scratch', emptyDir: {} }];
    await create('ro', {
      volumes,
      containers: [
        { name: 'main', image: img['write-file'], args: ['/data/x', 'hi'], volumeMounts: [{ name: 'scratch', mountPath: '/data', readOnly: true }] },
      ],
    });
    await create('rw', {
      volumes,
      containers: [{ name: 'main', image: img['write-file'], args: ['/data/x', 'hi'], volumeMounts: [{ name: 'scratch', mountPath: '/data' }] }],
    });
    const ro = await finished('ro');
    expect(logs('ro')).toMatch(/^cannot write \/data\/x: /m);
    expect(ro.pod.status?.phase).toBe('Failed');
    expect(ro.t.exitCode).toBe(1);
    expect(ro.t.reason).toBe('Error');
    const rw = await finished('rw');
    expect(logs('rw')).toContain('wrote /data/x');
    expect(rw.pod.status?.phase).toBe('Succeeded');
    expect(rw.t.reason).toBe('Completed');
  });

  it('terminationMessagePath inside a volume becomes terminated.message; FallbackToLogsOnError uses the log tail on failure', async () => {
    await create('term-file', {
      volumes: [{ name: 'dev', emptyDir: {} }],
      containers: [{ name: 'main', image: img['write-file'], args: ['/dev/termination-log', 'all good'], volumeMounts: [{ name: 'dev', mountPath: '/dev' }] }],
    });
    await create('term-custom', {
      volumes: [{ name: 'term', emptyDir: {} }],
      containers: [
        {
          name: 'main',
          image: img['write-file'],
          args: ['/term/why', 'custom path'],
          terminationMessagePath: '/term/why',
          volumeMounts: [{ name: 'term', mountPath: '/term' }],
        },
      ],
    });
    await create('term-logs', { containers: [{ name: 'main', image: img['exit-code'], args: ['3'], terminationMessagePolicy: 'FallbackToLogsOnError' }] });
    await create('term-trap', { containers: [{ name: 'main', image: img.trap, terminationMessagePolicy: 'FallbackToLogsOnError' }] });
    await create('term-none', { containers: [{ name: 'main', image: img['exit-code'], args: ['3'] }] });
    expect((await finished('term-file')).t).toMatchObject({ reason: 'Completed', exitCode: 0, message: 'all good' });
    expect((await finished('term-custom')).t).toMatchObject({ reason: 'Completed', exitCode: 0, message: 'custom path' });
    expect((await finished('term-logs')).t).toMatchObject({ reason: 'Error', exitCode: 3, message: 'exiting with 3\n' });
    // The trap's report, then (FallbackToLogsOnError) the log's tail, which ends with the same report.
    const trap = (await finished('term-trap')).t;
    expect(trap).toMatchObject({ reason: 'Error', exitCode: 134 });
    expect(trap.message).toMatch(/^RuntimeError: unreachable\nwasm backtrace:\n[^]*: about to trap\nnodelet: the module trapped: RuntimeError: unreachable\n/);
    const none = (await finished('term-none')).t;
    expect(none.exitCode).toBe(3);
    expect(none.message).toBeUndefined();
  });

  it('leaves the host files alone', () => {
    expect(readFileSync(join(hostDir, 'outside-secret'), 'utf8')).toBe('HOST SECRET');
  });
});
