/**
 * Hostile WASI pods against a real control plane:
 *  - 20 (combined acceptance): a pod exhausting its descriptors and a module
 *    looping in its start function run side by side for 60 s while 10 other
 *    pods start and run; /healthz answers throughout, the Lease is renewed on
 *    schedule and never expires, the node stays Ready,
 *    both hostile pods end with precise reasons and are deleted within their
 *    grace period, and no nodelet thread keeps computing afterwards;
 *  - 21.1: a subPath directory renamed away and replaced by a symlink out of
 *    the volume reads and writes nothing on the host;
 *  - 21.2: the same at /dev with terminationMessagePath: the host file does not
 *    reach the pod status, the pod gets a precise message instead.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pushWasmArtifact } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { START_LOOP_MODULE } from '../harness/wasm-modules.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

/** CPU time (clock ticks) of every thread of process `pid`, by thread id. */
function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, Number(f[11]) + Number(f[12])); // utime + stime (fields 14 and 15)
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

const START_TIMEOUT_S = 20;

describe('hostile WASI pods', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const coordination = k.kc.makeApiClient(k8s.CoordinationV1Api);
  const nodeName = 'hostile-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let hostDir: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['fd-hog', 'sleep', 'fs-steps']) img[m] = await pushModule(reg, m);
    await pushWasmArtifact(reg.host, 'start-loop', 'v1', Buffer.from(START_LOOP_MODULE), { format: 'cncf' });
    img['start-loop'] = `${reg.host}/start-loop:v1`;
    hostDir = mkdtempSync(join(tmpdir(), 'nodelet-hostile-'));
    // A start timeout longer than the grace periods below: a deletion must not wait for it.
    nodelet = await startNodelet(info, nodeName, [], 'issued', { NODELET_WASI_START_TIMEOUT_MS: String(START_TIMEOUT_S * 1000) });
    ns = await podNamespace(k.core, 'hostile');
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
  const logs = (name: string) => kubectl(info, ['logs', '-n', ns, name]).stdout;
  const finished = (name: string) => podUntil(k.core, ns, name, 'finished', (p) => ['Succeeded', 'Failed'].includes(p.status?.phase ?? ''));
  const gone = async (name: string, withinMs: number) => {
    await eventually(
      `${name} deleted`,
      async () => {
        try {
          await k.core.readNamespacedPod({ name, namespace: ns });
          return false;
        } catch (e) {
          return (e as { code?: number }).code === 404;
        }
      },
      withinMs,
    );
  };

  /** A volume dir holding `s/secret`, `d/termination-log` and symlinks `l`, `dir-link` to a host dir beside it. */
  function hostileVolume(name: string): { vol: string; host: string } {
    const vol = join(hostDir, name, 'vol');
    const host = join(hostDir, name, 'host');
    mkdirSync(join(vol, 's'), { recursive: true });
    mkdirSync(join(vol, 'd'));
    mkdirSync(host);
    writeFileSync(join(host, 'secret'), 'HOST SECRET');
    writeFileSync(join(host, 'termination-log'), 'HOST FILE');
    writeFileSync(join(vol, 's', 'secret'), 'volume file');
    symlinkSync(host, join(vol, 'l'));
    symlinkSync(host, join(vol, 'dir-link'));
    return { vol, host };
  }

  it('21.1: a subPath renamed away for a symlink out of the volume reads and writes nothing outside it', async () => {
    const { vol, host } = hostileVolume('subpath');
    await create('subpath-rename', {
      volumes: [{ name: 'hp', hostPath: { path: vol, type: 'Directory' } }],
      containers: [
        {
          name: 'main',
          image: img['fs-steps'],
          args: ['read=/s/secret', 'rename=/hp/s=/hp/away', 'rename=/hp/l=/hp/s', 'read=/s/secret', 'write=/s/planted', 'ls=/s'],
          volumeMounts: [
            { name: 'hp', mountPath: '/hp' },
            { name: 'hp', mountPath: '/s', subPath: 's' },
          ],
        },
      ],
    });
    const pod = await finished('subpath-rename');
    const out = logs('subpath-rename');
    expect(out).toBe(
      [
        'ok read=/s/secret: volume file',
        'ok rename=/hp/s=/hp/away',
        'ok rename=/hp/l=/hp/s',
        'fail read=/s/secret: Capabilities insufficient',
        'fail write=/s/planted: Capabilities insufficient',
        'fail ls=/s: Capabilities insufficient',
        '',
      ].join('\n'),
    );
    expect(pod.status?.phase).toBe('Failed');
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(readdirSync(host).sort()).toEqual(['secret', 'termination-log']);
    expect(readFileSync(join(host, 'secret'), 'utf8')).toBe('HOST SECRET');
    expect(readdirSync(join(vol, 'away'))).toEqual(['secret']);
    const ev = await eventually(
      'VolumeReplaced event',
      async () => {
        const list = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=subpath-rename' });
        return list.items.find((e) => e.reason === 'VolumeReplaced');
      },
      15_000,
    );
    expect(ev.type).toBe('Warning');
    expect(ev.message).toBe(
      'container main: volume hp mounted at /s: its directory was renamed or replaced (e.g. by a symlink) after the container started; every access to it is refused',
    );
  });

  it('21.2: a termination message subPath renamed over by a symlink does not read the host file', async () => {
    const { vol, host } = hostileVolume('termlog');
    await create('termlog-rename', {
      volumes: [{ name: 'hp', hostPath: { path: vol, type: 'Directory' } }],
      containers: [
        {
          name: 'main',
          image: img['fs-steps'],
          args: ['write=/dev/termination-log', 'rename=/hp/d=/hp/away', 'rename=/hp/dir-link=/hp/d'],
          volumeMounts: [
            { name: 'hp', mountPath: '/hp' },
            { name: 'hp', mountPath: '/dev', subPath: 'd' },
          ],
        },
      ],
    });
    const pod = await finished('termlog-rename');
    expect(logs('termlog-rename')).toBe('ok write=/dev/termination-log\nok rename=/hp/d=/hp/away\nok rename=/hp/dir-link=/hp/d\n');
    const t = pod.status?.containerStatuses?.[0]?.state?.terminated;
    expect(t).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(t?.message).toBe("Error on reading termination log /dev/termination-log: path escapes its root: hp: the volume's path was replaced by a symlink");
    expect(readFileSync(join(vol, 'away', 'termination-log'), 'utf8')).toBe('written by fs-steps');
    expect(readdirSync(host).sort()).toEqual(['secret', 'termination-log']);
    expect(readFileSync(join(host, 'termination-log'), 'utf8')).toBe('HOST FILE');
  });

  it('20.2: a pod deleted while its module loops in its start function is gone within its grace period', async () => {
    const grace = 5;
    await create('loop-deleted', { terminationGracePeriodSeconds: grace, containers: [{ name: 'main', image: img['start-loop'] }] });
    // Instantiating: the start was asked for (Pulled) and has not ended (no Failed event yet).
    await eventually(
      'loop-deleted instantiating',
      async () => {
        const ev = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=loop-deleted' });
        return ev.items.some((e) => e.reason === 'Pulled') && !ev.items.some((e) => e.reason === 'Failed');
      },
      30_000,
    );
    await new Promise((r) => setTimeout(r, 1_000)); // a fixed wait: the module is then looping inside its start (nothing shows it)
    await k.core.deleteNamespacedPod({ name: 'loop-deleted', namespace: ns });
    // Well before the 20 s start timeout would have ended the start.
    await gone('loop-deleted', grace * 1000);
    const ev = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=loop-deleted' });
    expect(ev.items.filter((e) => e.reason === 'Failed').map((e) => e.message)).toEqual([]);
  });

  it('20: descriptor exhaustion and a start-section loop beside 10 normal pods for 60 s; the node stays healthy', async () => {
    const data = join(hostDir, 'hog');
    mkdirSync(data);
    writeFileSync(join(data, 'f'), 'x');
    const grace = 30;
    const hog = (name: string, mode: string) =>
      create(name, {
        terminationGracePeriodSeconds: grace,
        restartPolicy: 'Always',
        volumes: [{ name: 'data', hostPath: { path: data, type: 'Directory' } }],
        containers: [
          {
            name: 'main',
            image: img['fd-hog'],
            args: [mode, '/data/f'],
            terminationMessagePolicy: 'FallbackToLogsOnError',
            volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true }],
          },
        ],
      });
    // One holds its descriptors until deleted; one fails at once, again and again (restartPolicy Always).
    const pid = nodelet.peer.proc.pid!;
    const nodeletFds = () => readdirSync(`/proc/${pid}/fd`).length;
    const fdsBefore = nodeletFds();
    await hog('hog-1', 'hog-hold');
    await hog('hog-2', 'hog-fail');
    await create('start-loop', { terminationGracePeriodSeconds: grace, containers: [{ name: 'main', image: img['start-loop'] }] });
    const normal = Array.from({ length: 10 }, (_, i) => `normal-${i}`);
    for (const name of normal) await create(name, { containers: [{ name: 'main', image: img.sleep, args: ['3600'] }] });

    // 60 s side by side: /healthz, the Node and its Lease every 2 s, the start-loop's reasons as they come.
    const healthz = `http://127.0.0.1:${nodelet.healthzPort}/healthz`;
    const loopWaiting = new Set<string>();
    const end = Date.now() + 60_000;
    let checks = 0;
    const ages: number[] = [];
    const renewals = new Set<string>();
    while (Date.now() < end) {
      const res = await fetch(healthz, { signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('ok');
      // The Lease never expires: renewed every ~10 s, and a renewal stuck in the apiserver or on a
      // dead connection is given up after the 10 s heartbeat timeout and tried again (heartbeat-timeout.test.ts).
      const lease = await coordination.readNamespacedLease({ name: nodeName, namespace: 'kube-node-lease' });
      const age = Date.now() - new Date(lease.spec!.renewTime!).getTime();
      ages.push(age);
      renewals.add(String(lease.spec!.renewTime));
      expect(age, `lease age (ms) at each check: ${ages.join(', ')}`).toBeLessThan(lease.spec!.leaseDurationSeconds! * 1000);
      const node = await k.core.readNode({ name: nodeName });
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'node Ready').toBe('True');
      const loop = await k.core.readNamespacedPod({ name: 'start-loop', namespace: ns });
      const w = loop.status?.containerStatuses?.[0]?.state?.waiting;
      if (w?.reason && w.message) loopWaiting.add(`${w.reason}: ${w.message}`);
      checks++;
      await new Promise((r) => setTimeout(r, 2_000)); // a fixed interval: the node must stay healthy through the whole 60 s window
    }
    expect(checks).toBeGreaterThan(10);
    // Renewed on schedule (5 or 6 renewals in 60 s), at most one of them late.
    expect(renewals.size, `lease age (ms) at each check: ${ages.join(', ')}`).toBeGreaterThanOrEqual(4);
    // The hogs hold at most their budgets (1024 each): nodelet keeps the rest of its descriptors.
    const fdsDuring = nodeletFds();
    console.log(
      `nodelet descriptors: ${fdsBefore} before the pods, ${fdsDuring} at the end of the soak (hog-1 holding its budget; hog-2 failing and restarting)`,
    );
    expect(fdsDuring - fdsBefore).toBeLessThan(2 * 1024 + 300);

    // The 10 normal pods started and run.
    for (const name of normal) {
      const p = await podUntil(k.core, ns, name, 'Running', (x: V1Pod) => x.status?.phase === 'Running', 30_000);
      expect(p.status?.containerStatuses?.[0]?.ready, name).toBe(true);
      expect(logs(name), name).toContain('tick 1\n');
    }
    // Precise reasons: the hogs got EMFILE from their own budget and keep running; the loop a start timeout.
    const hog1 = await k.core.readNamespacedPod({ name: 'hog-1', namespace: ns });
    // 1024 descriptors per container; each mount (the service account token's too) holds one.
    const opened = `opened ${1024 - hog1.spec!.containers[0]!.volumeMounts!.length}: No file descriptors available\n`;
    expect(logs('hog-1')).toBe(`${opened}holding\n`);
    expect(hog1.status?.phase).toBe('Running');
    const hog2 = await k.core.readNamespacedPod({ name: 'hog-2', namespace: ns });
    const hog2Status = hog2.status!.containerStatuses![0]!;
    expect(hog2Status.restartCount).toBeGreaterThan(0);
    const lastRun = hog2Status.lastState?.terminated ?? hog2Status.state?.terminated;
    expect(lastRun).toMatchObject({ exitCode: 1, reason: 'Error', message: opened });
    const image = img['start-loop'];
    expect([...loopWaiting]).toContain(
      `CreateContainerError: the module of image ${image} did not finish instantiating within ${START_TIMEOUT_S}s: its start function (run before _start) does not return; its thread was terminated`,
    );
    const loopPod = await k.core.readNamespacedPod({ name: 'start-loop', namespace: ns });
    expect(loopPod.status?.phase).toBe('Pending');

    // Deleted within their grace period.
    for (const name of ['hog-1', 'hog-2', 'start-loop']) await k.core.deleteNamespacedPod({ name, namespace: ns });
    await Promise.all(['hog-1', 'hog-2', 'start-loop'].map((name) => gone(name, grace * 1000)));

    // No nodelet thread keeps computing once they are gone (a looping module's thread
    // would add ~100 ticks per second). Wait for one quiet window.
    await eventually(
      'nodelet threads idle',
      async () => {
        const before = threadTicks(pid);
        await new Promise((r) => setTimeout(r, 3_000)); // the window CPU time is measured over
        const after = threadTicks(pid);
        const busiest = Math.max(0, ...[...after].map(([tid, t]) => t - (before.get(tid) ?? t)));
        return busiest < 60; // < 0.6 s of CPU in 3 s for every thread
      },
      30_000,
      0,
    );
    for (const name of normal) await k.core.deleteNamespacedPod({ name, namespace: ns });
  }, 240_000);
});
