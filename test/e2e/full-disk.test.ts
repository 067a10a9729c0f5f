/**
 * A full disk end to end: nodelet's root dir (container logs, images, pod dirs, IP records, the
 * WASI runtime's own files) is a 96 MiB tmpfs of its own, and a pod writing 100 GB to stdout
 * fills it; the test then keeps it full, as a runaway writer would, taking any space that comes
 * free. While it is full nodelet stays up and healthy and its own log (kept elsewhere) grows by
 * a few KB; the node reports DiskPressure; the writer ends Completed, its 100 GB dropped with one
 * `FailedLogWrite` event and its log files ending with a whole record; the pod printing a line a
 * second runs on, not restarted, its log stopped at the filesystem's last block; a pull fails
 * with an ErrImagePull naming `no space left on device`, a pod needing an IP record fails its
 * sandbox with ENOSPC, a pod that can start runs with its output dropped, and every state file
 * under the root is whole JSON with no temporary copy left. Once the space is freed, DiskPressure
 * goes False, the waiting pods start and the logs go on, with whole records only.
 *
 * The disk threshold is soft, with a grace period longer than the test: a condition is True as
 * soon as a threshold is met, but no pod is evicted, so what is seen is nodelet on a full
 * filesystem, not eviction (memory-pressure.test.ts covers that). Under DiskPressure only
 * critical pods are admitted, and only pods tolerating the controller's disk-pressure taint are
 * scheduled: the pods started while the disk is full are `system-node-critical`, in kube-system.
 * Timings are printed (`full disk:` lines).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { parseCriLine } from '@nodelet/plugin-api/v1/toolkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { fillUp as fill, freeBytes as available } from '../harness/small-fs.ts';
import { unmountUnder } from '../harness/unmount-under.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, condition, eventsOnce, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const MI = 1024 * 1024;
/** The root filesystem's size. */
const ROOT_MIB = 96;
/** Left free before the writer starts: above the 10% threshold, and less than its 50 MB of rotated logs (it cannot free any). */
const LEFT_MIB = 24;
/** How long the disk stays full at least, so the logs have time to (not) grow. */
const FULL_MS = 15_000;

/** Every file below `dir` (volume mounts below it included). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** The contents of a CRI log file's records; throws at a line that is not a whole record. */
function logContents(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (text !== '' && !text.endsWith('\n')) throw new Error(`${file} ends inside a record: ${JSON.stringify(text.slice(-80))}`);
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const r = parseCriLine(l);
      if (!r || r.partial) throw new Error(`${file}: not a whole record: ${JSON.stringify(l.slice(0, 200))}`);
      return r.content;
    });
}

describe('a full disk under nodelet', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'full-disk-n1';
  let base: string;
  let root: string;
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};
  /** Pods made in kube-system (critical), deleted at the end. */
  const critical: string[] = [];
  let keeper: NodeJS.Timeout | undefined;
  let fullAt = 0;
  let nodeletLogAtFull = 0;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'nodelet-full-disk-'));
    root = join(base, 'root');
    mkdirSync(root);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${ROOT_MIB}m,mode=0755`, 'tmpfs', root]);
    reg = await startRegistry();
    for (const m of ['sleep', 'spew', 'hello']) img[m] = await pushModule(reg, m);
    nodelet = await startNodelet(
      info,
      nodeName,
      [
        // No hard threshold (none evicts); a soft one the test never outlasts (reported, not acted on).
        '--eviction-hard=',
        '--eviction-soft=nodefs.available<10%,imagefs.available<10%',
        '--eviction-soft-grace-period=nodefs.available=10m,imagefs.available=10m',
        '--eviction-monitoring-period=1s',
        '--eviction-pressure-transition-period=5s',
      ],
      'issued',
      // The WASI runtime process (nodelet's default), whose own log and pid file are on the full disk too.
      { NODELET_WASI_RUNTIME: 'external' },
      // nodelet's own log off the full disk: the test measures it.
      { rootDir: root, logFile: join(base, 'nodelet.log') },
    );
    ns = await podNamespace(k.core, 'full-disk');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    if (keeper) clearInterval(keeper);
    for (const name of critical) await k.core.deleteNamespacedPod({ name, namespace: 'kube-system', gracePeriodSeconds: 0 }).catch(() => undefined);
    await nodelet?.dispose();
    await reg?.stop();
    if (base) {
      unmountUnder(base);
      rmSync(base, { recursive: true, force: true });
    }
  });

  const create = (namespace: string, name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace,
      body: { metadata: { name }, spec: { tolerations: [WASM_TOLERATION], nodeSelector: { 'kubernetes.io/hostname': nodeName }, ...spec } as V1PodSpec },
    });
  /** A pod admitted under DiskPressure: critical, tolerating the disk-pressure taint. */
  const createCritical = (name: string, spec: Partial<V1PodSpec>) => {
    critical.push(name);
    return create('kube-system', name, {
      priorityClassName: 'system-node-critical',
      tolerations: [WASM_TOLERATION, { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' }],
      terminationGracePeriodSeconds: 0,
      ...spec,
    });
  };
  /** Nothing for the pod to write on the root fs before its containers: no IP record, no token volume's file list. */
  const nothingToWrite: Partial<V1PodSpec> = { hostNetwork: true, automountServiceAccountToken: false };
  const read = (name: string, namespace = ns) => k.core.readNamespacedPod({ name, namespace });
  const node = () => k.core.readNode({ name: nodeName });
  const main = (p: V1Pod) => p.status?.containerStatuses?.[0];
  const running = (p: V1Pod) => p.status?.phase === 'Running' && main(p)?.state?.running !== undefined;
  const logDir = (p: V1Pod) => join(root, 'logs', 'pods', `${p.metadata!.namespace}_${p.metadata!.name}_${p.metadata!.uid}`, 'main');
  const healthz = async () => (await fetch(`http://127.0.0.1:${nodelet.healthzPort}/healthz`)).status;
  const since = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;
  const ticks = (lines: string[]) => lines.filter((l) => l.startsWith('tick ')).map((l) => Number(l.slice(5)));
  let sleeperBefore: V1Pod;

  it('runs a pod printing a line every second', async () => {
    await create(ns, 'sleeper', { containers: [{ name: 'main', image: img.sleep!, args: ['3600'] }] });
    sleeperBefore = await podUntil(k.core, ns, 'sleeper', 'Running', running);
    await eventually('sleeper ticking', () => readFileSync(join(logDir(sleeperBefore), '0.log'), 'utf8').includes('stdout F tick 2'), 30_000, 250);
  });

  it('a pod writing 100 GB to stdout fills the disk: DiskPressure, nodelet healthy, the writer Completed with its output dropped', async () => {
    expect(condition(await node(), 'DiskPressure')?.status).toBe('False');
    fill(join(root, 'filler-1'), available(root) - LEFT_MIB * MI);
    await create(ns, 'spew', { restartPolicy: 'Never', containers: [{ name: 'main', image: img.spew!, args: ['100000'] }] });
    // DiskPressure is due once less than the threshold (10%) is free: the writer gets there first.
    let underAt: number | undefined;
    await eventually(
      'the writer filled the disk',
      () => {
        const free = available(root);
        if (free < (ROOT_MIB * MI) / 10) underAt ??= Date.now();
        return free < MI;
      },
      60_000,
      50,
    );
    // Kept full from now on: whatever comes free (a finished container's files) is taken at once.
    const filler = join(root, 'filler-2');
    fill(filler);
    keeper = setInterval(() => fill(filler), 100);
    fullAt = Date.now();
    nodeletLogAtFull = statSync(nodelet.logFile).size;
    await eventually('DiskPressure True', async () => condition(await node(), 'DiskPressure')?.status === 'True', 15_000, 100);
    console.log(`full disk: DiskPressure True ${since(underAt!)} after the free space fell under the threshold (monitoring period 1 s)`);
    expect(condition(await node(), 'DiskPressure')).toMatchObject({ reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' });
    await eventsOnce(k.core, 'default', `involvedObject.name=${nodeName},reason=NodeHasDiskPressure`);
    expect(await healthz()).toBe(200);

    // 100 GB refused by a full disk: each write fails at once, the module sees it written and ends 0.
    const spew = await podUntil(k.core, ns, 'spew', 'Succeeded', (p) => p.status?.phase === 'Succeeded', 120_000);
    console.log(`full disk: the 100 GB writer Completed ${since(fullAt)} after the disk was full`);
    expect(main(spew)).toMatchObject({ restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } });
    const warned = await eventsOnce(k.core, ns, 'involvedObject.name=spew,reason=FailedLogWrite');
    expect(warned.map((e) => [e.type, e.count ?? 1])).toEqual([['Warning', 1]]);
    expect(warned[0]!.message).toMatch(/^container main: cannot write the container's log: ENOSPC: no space left on device, write; its output is dropped/);
    // Its log files (rotated ones too) end with a whole record: a write cut short by the full disk was cut off.
    const files = readdirSync(logDir(spew));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) {
      const lines = logContents(join(logDir(spew), f));
      expect(lines.every((l) => /^line \d+ x+$/.test(l) && l.length === 99)).toBe(true);
    }
  });

  it('a pull fails naming the lack of space, a pod needing an IP record fails its sandbox, a pod that can start runs with its output dropped', async () => {
    await createCritical('full-disk-pull', { ...nothingToWrite, restartPolicy: 'Never', containers: [{ name: 'main', image: img.hello! }] });
    await createCritical('full-disk-ip', { containers: [{ name: 'main', image: img.sleep!, args: ['3600'] }] });
    await createCritical('full-disk-ticker', { ...nothingToWrite, containers: [{ name: 'main', image: img.sleep!, args: ['3600'] }] });

    const pulling = await podUntil(
      k.core,
      'kube-system',
      'full-disk-pull',
      'ErrImagePull',
      (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(main(p)?.state?.waiting?.reason ?? ''),
      30_000,
    );
    expect(main(pulling)?.state?.waiting?.message).toContain(`failed to pull image "${img.hello}": ENOSPC: no space left on device`);
    const pullEvents = await eventsOnce(k.core, 'kube-system', 'involvedObject.name=full-disk-pull,reason=Failed');
    expect(pullEvents.map((e) => e.message)).toContain(
      `Failed to pull image "${img.hello}": failed to pull image "${img.hello}": ENOSPC: no space left on device, write`,
    );

    const sandbox = await eventsOnce(k.core, 'kube-system', 'involvedObject.name=full-disk-ip,reason=FailedCreatePodSandBox', 30_000);
    expect(sandbox[0]!.message).toMatch(/^Failed to create pod sandbox: .*cannot record the allocation of pod .*: ENOSPC: no space left on device/i);
    expect(main(await read('full-disk-ip', 'kube-system'))?.state?.waiting?.reason).toBe('ContainerCreating');

    const ticker = await podUntil(k.core, 'kube-system', 'full-disk-ticker', 'Running', running, 30_000);
    const dropped = await eventsOnce(k.core, 'kube-system', 'involvedObject.name=full-disk-ticker,reason=FailedLogWrite', 15_000);
    expect(dropped[0]!.message).toContain('ENOSPC: no space left on device');
    expect(statSync(join(logDir(ticker), '0.log')).size).toBe(0);
  });

  it('while full: nodelet stays healthy, its log grows a little, the logs stay put, every state file is whole', async () => {
    const sleeperLog = join(logDir(sleeperBefore), '0.log');
    const before = statSync(sleeperLog);
    await new Promise((r) => setTimeout(r, Math.max(5000, fullAt + FULL_MS - Date.now())));
    // The log takes what is left in its last block, then nothing.
    const after = statSync(sleeperLog);
    expect(after.blocks).toBe(before.blocks);
    expect(after.size).toBeLessThanOrEqual(after.blocks * 512);
    const sleeper = await read('sleeper');
    expect(running(sleeper)).toBe(true);
    expect(main(sleeper)).toMatchObject({ restartCount: 0, containerID: main(sleeperBefore)!.containerID });

    expect(nodelet.peer.proc.exitCode).toBeNull();
    expect(await healthz()).toBe(200);
    const grew = statSync(nodelet.logFile).size - nodeletLogAtFull;
    console.log(`full disk: nodelet's log grew ${grew} bytes in ${since(fullAt)} of full disk`);
    expect(grew).toBeLessThan(MI);

    // State files: whole JSON (IP records, the image index, volume file lists, checkpoints), no temporary copy left.
    const files = filesUnder(root).map((f) => f.slice(root.length + 1));
    const state = files.filter((f) => /\.json$|\.nodelet-files$|checkpoint|_state$/.test(f));
    expect(state).toEqual(expect.arrayContaining(['images/index.json', expect.stringMatching(/^network\/allocations\/.+\.json$/)]));
    for (const f of state) expect(() => JSON.parse(readFileSync(join(root, f), 'utf8')), f).not.toThrow();
    await eventually('no temporary file left', () => filesUnder(root).every((f) => !/\.tmp\b|\.tmp-|nodelet-tmp|\/images\/tmp\//.test(f)), 5000, 100);
    expect(readFileSync(join(root, 'providers-data', 'wasi', 'runtime.pid'), 'utf8')).toMatch(/^\d+\n$/);
  });

  it('space returns: DiskPressure False, the waiting pods start, the logs go on', async () => {
    clearInterval(keeper);
    keeper = undefined;
    const sleeperLog = join(logDir(sleeperBefore), '0.log');
    const sleeperSize = statSync(sleeperLog).size;
    rmSync(join(root, 'filler-1'));
    rmSync(join(root, 'filler-2'));
    const freedAt = Date.now();
    console.log(`full disk: ${since(fullAt)} full, ${(available(root) / MI).toFixed(0)} MiB free again`);

    await eventually('sleeper log growing again', () => statSync(sleeperLog).size > sleeperSize, 10_000, 100);
    console.log(`full disk: the sleeper's log grows again ${since(freedAt)} after the space was freed`);
    await eventually('DiskPressure False', async () => condition(await node(), 'DiskPressure')?.status === 'False', 30_000, 250);
    console.log(`full disk: DiskPressure False ${since(freedAt)} after the space was freed (transition period 5 s)`);
    await eventsOnce(k.core, 'default', `involvedObject.name=${nodeName},reason=NodeHasNoDiskPressure`);

    const ticker = await read('full-disk-ticker', 'kube-system');
    await eventually('ticker log written', () => statSync(join(logDir(ticker), '0.log')).size > 0, 10_000, 100);
    const pulled = await podUntil(k.core, 'kube-system', 'full-disk-pull', 'Succeeded', (p) => p.status?.phase === 'Succeeded', 90_000);
    console.log(`full disk: the pull pod pulled and ran ${since(freedAt)} after the space was freed`);
    expect(logContents(join(logDir(pulled), '0.log'))).toContain('arg 0 main');
    const ip = await podUntil(k.core, 'kube-system', 'full-disk-ip', 'Running', running, 90_000);
    console.log(`full disk: the pod needing an IP record Running ${since(freedAt)} after the space was freed`);
    expect(ip.status?.podIP).toMatch(/^10\./);
    expect(JSON.parse(readFileSync(join(root, 'network', 'allocations', `${ip.metadata!.uid}.json`), 'utf8'))).toMatchObject({ ips: [ip.status!.podIP] });

    // Whole records only; ticks in order, those printed while the disk was full missing.
    await eventually('a few more ticks', () => statSync(sleeperLog).size > sleeperSize + 200, 10_000, 250);
    const sleeperTicks = ticks(logContents(sleeperLog));
    expect(sleeperTicks.every((t, i) => i === 0 || t > sleeperTicks[i - 1]!)).toBe(true);
    const tickerLines = logContents(join(logDir(ticker), '0.log'));
    expect(tickerLines[0]).toMatch(/^tick \d+$/); // "sleeping 3600" and the first ticks were dropped
    expect(ticks(tickerLines)[0]).toBeGreaterThan(1);
    for (const [namespace, name] of [
      [ns, 'sleeper'],
      ['kube-system', 'full-disk-ticker'],
    ] as const)
      expect(main(await read(name, namespace))?.restartCount, name).toBe(0);
    // The runtime's log (on the same disk) notes what was dropped, once the log takes writes again.
    await eventually(
      'the runtime notes the resumed log',
      () =>
        /the container's log takes writes again; \d+ bytes of output were dropped/.test(
          readFileSync(join(root, 'providers-data', 'wasi', 'runtime.log'), 'utf8'),
        ),
      10_000,
      250,
    );
    expect(existsSync(join(root, 'filler-1'))).toBe(false);
  });
});
