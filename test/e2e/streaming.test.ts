/**
 * kubectl port-forward and attach through the real apiserver, end to end
 * kubectl 1.36 speaks WebSocket to the apiserver, which tunnels
 * port-forward and translates attach to SPDY/3.1 towards nodelet. nodelet runs in a network
 * namespace of the test's own, so the pod IP it forwards to exists only there.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl, kubectlStream } from './support/kubectl.ts';
import { startIsolatedNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { netnsUnavailable } from '../harness/test-network.ts';

const unavailable = netnsUnavailable();

describe.skipIf(unavailable !== undefined)(`kubectl port-forward and attach (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'streaming-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};
  const stops: (() => void)[] = [];

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['http-server', 'stdin-echo', 'sleep']) img[m] = await pushModule(reg, m);
    // nodelet's default WASI runtime (external): attach's stdin is forwarded through it.
    nodelet = await startIsolatedNodelet(info, nodeName, { env: { NODELET_WASI_RUNTIME: 'external' }, forward: [Number(new URL(reg.url).port)] });
    ns = await podNamespace(k.core, 'streaming');
    await waitNodeReady(k.core, nodeName);
    await eventually('the node pod CIDR', async () => (await k.core.readNode({ name: nodeName })).spec?.podCIDR);
  }, 600_000);
  afterAll(async () => {
    for (const stop of stops) stop();
    await nodelet?.dispose();
    await reg?.stop();
  });

  const create = (name: string, container: Record<string, unknown>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name }, spec: { nodeName, tolerations: [WASM_TOLERATION], containers: [{ name: 'main', ...container }] } },
    });

  it('port-forward to a serving pod on its pod IP: HTTP GETs through the local port answer', async () => {
    await create('web', { image: img['http-server'], ports: [{ containerPort: 8080 }] });
    const p = await podUntil(k.core, ns, 'web', 'Running with an IP', (x) => x.status?.phase === 'Running' && !!x.status.podIP);
    expect(p.status!.podIP).not.toBe('127.0.0.1');
    const pf = kubectlStream(info, ['port-forward', '-n', ns, 'pod/web', ':8080']);
    stops.push(pf.kill);
    const local = await eventually(
      'kubectl port-forward listening',
      async () => {
        const line = pf.lines.find((l) => /^Forwarding from 127\.0\.0\.1:\d+ -> 8080$/.test(l));
        return line ? Number(/:(\d+) ->/.exec(line)![1]) : undefined;
      },
      60_000,
    );
    // Two requests: two forwarded connections (two stream pairs) on the one session.
    for (const n of [1, 2]) {
      const res = await fetch(`http://127.0.0.1:${local}/`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`hello from wasm ${n}\n`);
    }
    pf.kill();
    await pf.done;
  });

  it('port-forward to a port nothing listens on: kubectl reports the error of the forwarded connection', async () => {
    const pf = kubectlStream(info, ['port-forward', '-n', ns, 'pod/web', ':9']);
    stops.push(pf.kill);
    const local = await eventually('kubectl port-forward listening', async () => {
      const line = pf.lines.find((l) => /^Forwarding from 127\.0\.0\.1:\d+ -> 9$/.test(l));
      return line ? Number(/:(\d+) ->/.exec(line)![1]) : undefined;
    });
    await fetch(`http://127.0.0.1:${local}/`).catch(() => undefined);
    await eventually(
      'the error in kubectl output',
      async () => /error forwarding port 9 to pod web, uid .*connect ECONNREFUSED/.test(pf.stderr()) || undefined,
    );
    pf.kill();
    await pf.done;
  });

  it('attach -i to a container with stdin: a line sent is echoed by the module to its log and to the attached client', async () => {
    await create('echo', { image: img['stdin-echo'], stdin: true });
    await podUntil(k.core, ns, 'echo', 'Running', (x) => x.status?.phase === 'Running');
    await eventually('the module started', async () => kubectl(info, ['logs', '-n', ns, 'echo']).stdout.includes('ready') || undefined);
    const at = kubectlStream(info, ['attach', '-i', '-n', ns, 'echo', '-c', 'main'], undefined, { stdin: true });
    stops.push(at.kill);
    // kubectl prints this once the streams are up; stdin sent before could be lost with the session start.
    await eventually('kubectl attached', async () => at.stderr().includes("If you don't see a command prompt") || undefined, 60_000);
    at.write('hello nodelet\n');
    await eventually('the echo in the pod log', async () => kubectl(info, ['logs', '-n', ns, 'echo']).stdout.includes('echo: hello nodelet') || undefined);
    await eventually('the echo on the attached stdout', async () => at.lines.includes('echo: hello nodelet') || undefined);
    at.write('second line\n');
    await eventually('the second echo', async () => at.lines.includes('echo: second line') || undefined);
    at.kill();
    await at.done;
    expect(kubectl(info, ['logs', '-n', ns, 'echo']).stdout.split('\n')).toEqual(['ready', 'echo: hello nodelet', 'echo: second line', '']);
  });

  it('kubectl exec stays a clear refusal (the WASI provider cannot exec)', async () => {
    await create('plain', { image: img.sleep, args: ['3600'] });
    await podUntil(k.core, ns, 'plain', 'Running', (x) => x.status?.phase === 'Running');
    const r = kubectl(info, ['exec', '-n', ns, 'plain', '--', 'ls']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('not supported by provider "wasi": exec');
  });
});
