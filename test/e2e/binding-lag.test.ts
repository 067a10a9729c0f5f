/**
 * The apiserver's own caches can lag a pod's binding: NodeRestriction reads the pod
 * from its lister, the Node authorizer from its graph. A kubelet that asks for a
 * pod's token (or reads its ConfigMap) in that window is refused. nodelet's
 * `ObjectSource` asks again after 20 ms, doubling (core/volumes/binding-lag-retry.ts).
 * Here the real apiserver's refusals are made on purpose (a pod not yet bound, a pod
 * bound to another node, a pod that does not exist), and the window itself is
 * reproduced: the pod is bound only after nodelet's first TokenRequest was refused.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { issueNodeCredentials } from '../cluster/control-plane.ts';
import { createKubeClients, type KubeClients } from '../../core/kube/index.ts';
import { createApiObjectSource } from '../../core/volumes/api-object-source.ts';
import { isBindingLag } from '../../core/volumes/binding-lag-retry.ts';
import { adminClients, podNamespace } from './support/kube.ts';

describe('requests refused while the apiserver lags a binding are asked again', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeA = 'lag-a';
  const nodeB = 'lag-b';
  let ns: string;
  let clientsA: KubeClients;
  let clientsB: KubeClients;

  /** An ObjectSource over node `clients`, counting its API calls; `onRefused` runs after each refused one. */
  const source = (clients: KubeClients, onRefused: (n: number) => unknown = () => undefined) => {
    const calls = { token: 0, configMap: 0 };
    const count = <T>(kind: keyof typeof calls, p: () => Promise<T>) => {
      calls[kind]++;
      return p().catch(async (e: unknown) => {
        await onRefused(calls[kind]);
        throw e;
      });
    };
    const core = clients.core;
    const src = createApiObjectSource({
      createNamespacedServiceAccountToken: (a) => count('token', () => core.createNamespacedServiceAccountToken(a)),
      readNamespacedConfigMap: (a) => count('configMap', () => core.readNamespacedConfigMap(a)),
      readNamespacedSecret: (a) => core.readNamespacedSecret(a),
    } as Pick<KubeClients['core'], 'readNamespacedConfigMap' | 'readNamespacedSecret' | 'createNamespacedServiceAccountToken'>);
    return { src, calls };
  };

  const pod = (name: string, nodeName?: string): V1Pod => ({
    metadata: { name },
    spec: {
      ...(nodeName ? { nodeName } : { nodeSelector: { 'binding-lag.test/none': 'none' } }), // unbound: no node matches
      tolerations: [{ operator: 'Exists' }],
      volumes: [{ name: 'cfg', configMap: { name: 'only-for-a' } }],
      containers: [{ name: 'main', image: 'registry.invalid/none:1' }],
    },
  });
  const tokenFor = (p: V1Pod) => ({ expirationSeconds: 3600, podName: p.metadata!.name!, podUID: p.metadata!.uid! });

  beforeAll(async () => {
    ns = await podNamespace(k.core, 'bindlag');
    await k.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'only-for-a' }, data: { k: 'v' } } });
    clientsA = createKubeClients(issueNodeCredentials(info, nodeA).kubeconfig);
    clientsB = createKubeClients(issueNodeCredentials(info, nodeB).kubeconfig);
  });
  afterAll(async () => {
    await k.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("the real apiserver's refusals for a pod of another node, and for a missing pod, are recognised, asked twelve more times (5.1 s), then returned", async () => {
    const onA = await k.core.createNamespacedPod({ namespace: ns, body: pod('on-a', nodeA) });
    // A pod of node B's own relates B to the service account: B's TokenRequests pass the Node authorizer and reach NodeRestriction.
    await k.core.createNamespacedPod({ namespace: ns, body: { ...pod('on-b', nodeB), spec: { ...pod('on-b', nodeB).spec!, volumes: [] } } });
    const b = source(clientsB);
    const err = await b.src.requestServiceAccountToken(ns, 'default', tokenFor(onA)).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'NDL_API_REQUEST',
      httpStatus: 403,
      detail: expect.stringContaining('node requested token bound to a pod scheduled on a different node'),
    });
    expect(isBindingLag(err)).toBe(true);
    expect(b.calls.token).toBe(13);

    const cmErr = await b.src.getConfigMap(ns, 'only-for-a').catch((e: unknown) => e);
    expect(cmErr).toMatchObject({ httpStatus: 403, detail: expect.stringContaining(`no relationship found between node '${nodeB}' and this object`) });
    expect(b.calls.configMap).toBe(13);

    const missing = await b.src
      .requestServiceAccountToken(ns, 'default', { expirationSeconds: 3600, podName: 'no-such-pod', podUID: onA.metadata!.uid! })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ httpStatus: 404, detail: 'pod "no-such-pod" not found' });
    expect(isBindingLag(missing)).toBe(true);
    expect(b.calls.token).toBe(26);

    // The node the pod is bound to gets both at the first ask.
    const a = source(clientsA);
    await expect(a.src.requestServiceAccountToken(ns, 'default', tokenFor(onA))).resolves.toMatchObject({ token: expect.any(String) });
    expect((await a.src.getConfigMap(ns, 'only-for-a'))?.data).toEqual({ k: 'v' });
    expect(a.calls).toEqual({ token: 1, configMap: 1 });
  });

  it('a TokenRequest refused because the pod was not yet bound to this node gets its token once the binding lands', async () => {
    const late = await k.core.createNamespacedPod({ namespace: ns, body: pod('bound-late') });
    let bound: Promise<unknown> | undefined;
    const b = source(clientsB, (n) => {
      // Bind the pod to node B only after the first ask was refused: the window the apiserver's caches leave.
      if (n === 1)
        bound = k.core.createNamespacedPodBinding({
          namespace: ns,
          name: 'bound-late',
          body: { metadata: { name: 'bound-late' }, target: { kind: 'Node', name: nodeB } },
        });
      return bound;
    });
    const token = await b.src.requestServiceAccountToken(ns, 'default', tokenFor(late));
    expect(token.token.split('.')).toHaveLength(3); // a JWT
    expect(b.calls.token).toBeGreaterThanOrEqual(2);
    expect((await k.core.readNamespacedPod({ namespace: ns, name: 'bound-late' })).spec?.nodeName).toBe(nodeB);
  });
});
