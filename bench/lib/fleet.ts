/**
 * A fleet of N nodes of one kind on the bench's control plane, for the fleet figure:
 *   - nodelet: N nodelet processes (real binary, no trace preload), each with its own node identity,
 *     root dir, kubelet API and /healthz ports and pod bridge;
 *   - hollow: N kubemark hollow nodes (the upstream kubelet, fake runtime), one process each, as kubemark runs them;
 *   - kwok: N fake Nodes managed by one kwok process, with an identity of its own (see {@link prepareKwokIdentity}).
 * Every node carries the label FLEET_LABEL=<kind>; pods select it and tolerate the kind's taint, so
 * the scheduler spreads them over the fleet.
 */
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { issueClientCert, type ClusterInfo } from '../../test/cluster/control-plane.ts';
import { HOLLOW_TAINT, startHollowNode, type HollowNode } from '../../test/cluster/hollow-node.ts';
import { WASM_TOLERATION } from '../../test/e2e/support/images.ts';
import type { FLEET_KINDS } from './fleet-stats.ts';
import { benchDataBase, disposeRoot, KWOK_TAINT, startBenchNodelet, startKwok, waitNodesReady, type BenchNodelet, type Clients } from './env.ts';

/** The kinds of node the fleet figure compares. */
export type FleetKind = (typeof FLEET_KINDS)[number];

/** The node label that puts a pod on a fleet (its value is the kind). */
export const FLEET_LABEL = 'nodelet.dev/bench-fleet';

/** kwok's user in the fleet figure, and the FlowSchema that counts its requests. */
export const KWOK_USER = 'bench-kwok';

/**
 * The FlowSchemas a kind's requests match: a node identity's (group system:nodes) go to
 * system-node-high (Node, Lease) or system-nodes (the rest); kwok's to {@link KWOK_USER}'s own.
 */
export const FLEET_FLOW_SCHEMAS: Record<FleetKind, readonly string[]> = {
  nodelet: ['system-node-high', 'system-nodes'],
  hollow: ['system-node-high', 'system-nodes'],
  kwok: [KWOK_USER],
};

/** A running fleet. */
export interface Fleet {
  kind: FleetKind;
  nodes: string[];
  /** The process trees that make the fleet (one per node; kwok: its one process), by name. */
  roots: Record<string, number>;
  /** How long from the first process start until every node was Ready. */
  readyMs: number;
  /** The image its pods run. */
  image: string;
  toleration: k8s.V1Toleration;
  /** Processes of the fleet that exited while it ran (name and code). */
  exits: string[];
  stop(): Promise<void>;
}

/**
 * Gives kwok a user of its own (a client certificate for {@link KWOK_USER}, bound to cluster-admin, as
 * kwokctl's clusters run it with full rights) and a FlowSchema matching only that user on the exempt
 * priority level (as the admin's requests it used to make are): the apiserver then counts kwok's
 * requests apart. Returns kwok's kubeconfig.
 */
export function prepareKwokIdentity(info: ClusterInfo): string {
  const cert = issueClientCert(info, KWOK_USER, KWOK_USER);
  const kubeconfig = join(info.dir, `${KWOK_USER}.kubeconfig`);
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: bench',
      '  cluster:',
      `    server: ${info.server}`,
      `    certificate-authority: ${info.caCert}`,
      'users:',
      `- name: ${KWOK_USER}`,
      '  user:',
      `    client-certificate: ${cert.cert}`,
      `    client-key: ${cert.key}`,
      'contexts:',
      '- name: bench',
      '  context:',
      '    cluster: bench',
      `    user: ${KWOK_USER}`,
      'current-context: bench',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const manifest = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: KWOK_USER },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: KWOK_USER }],
      },
      {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'FlowSchema',
        metadata: { name: KWOK_USER },
        spec: {
          matchingPrecedence: 2,
          priorityLevelConfiguration: { name: 'exempt' },
          rules: [
            {
              subjects: [{ kind: 'User', user: { name: KWOK_USER } }],
              resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
              nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
            },
          ],
        },
      },
    ],
  };
  execFileSync(join(info.binDir, 'kubectl'), [`--kubeconfig=${info.adminKubeconfig}`, 'apply', '-f', '-'], {
    input: JSON.stringify(manifest),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  return kubeconfig;
}

/** Options of {@link startFleet}. */
export interface FleetOpts {
  info: ClusterInfo;
  c: Clients;
  /** The image nodelet's pods run (the pause module in the bench's registry). */
  nodeletImage: string;
  /** From {@link prepareKwokIdentity}. */
  kwokKubeconfig: string;
  /** How long every node may take to be Ready. */
  readyTimeoutMs: number;
}

const nodeNames = (kind: FleetKind, n: number) => Array.from({ length: n }, (_, i) => `fleet-${kind}-${i}`);

/** Deletes Nodes (each process's own Node stays after it stops, as a kubelet's does). */
async function deleteNodes(c: Clients, names: readonly string[]): Promise<void> {
  await Promise.all(names.map((name) => c.core.deleteNode({ name }).catch(() => undefined)));
}

/** Starts N nodes of `kind` and waits until every one is Ready (stopping what started if they are not). */
export async function startFleet(kind: FleetKind, n: number, o: FleetOpts): Promise<Fleet> {
  const nodes = nodeNames(kind, n);
  const exits: string[] = [];
  const t0 = Date.now();
  if (kind === 'kwok') {
    const kwok = await startKwok(o.info, o.c, 110, { nodes, labels: { [FLEET_LABEL]: kind }, kubeconfig: o.kwokKubeconfig });
    return {
      kind,
      nodes,
      roots: { kwok: kwok.peer.proc.pid! },
      readyMs: Date.now() - t0,
      image: 'registry.invalid/kwok-fake:1',
      toleration: { ...KWOK_TAINT, operator: 'Equal' },
      exits,
      async stop() {
        await kwok.stop();
        await deleteNodes(o.c, nodes);
      },
    };
  }
  const procs: Array<{ name: string; pid: number; stop(): Promise<void> }> = [];
  const stopAll = async () => {
    await Promise.all(procs.map((p) => p.stop().catch((e) => console.log(`  stopping ${p.name}: ${String(e)}`))));
    await deleteNodes(o.c, nodes);
  };
  try {
    for (const [i, name] of nodes.entries()) {
      if (kind === 'nodelet') {
        // A bridge per nodelet (one per nodelet on a machine; at most 15 characters).
        const bridge = `nfl${process.pid % 100_000}x${i}`;
        const nl: BenchNodelet = await startBenchNodelet(o.info, {
          maxPods: 110,
          nodeName: name,
          noTrace: true,
          extraArgs: [`--node-labels=${FLEET_LABEL}=${kind}`, `--pod-interface=${bridge}`],
        });
        void nl.exited.then((code) => exits.push(`${name} exited (${code}); log tail:\n${nl.logTail(10)}`));
        procs.push({
          name,
          pid: nl.pid,
          async stop() {
            await nl.stop();
            disposeRoot(nl.rootDir);
            await new Promise((done) => execFile('ip', ['link', 'del', bridge], () => done(undefined)));
          },
        });
      } else {
        const h: HollowNode = await startHollowNode(o.info, name, { maxPods: 110, labels: { [FLEET_LABEL]: kind }, noWait: true, dataBase: benchDataBase() });
        h.peer.proc.once('exit', (code, sig) => exits.push(`${name} exited (${code ?? sig}); log tail:\n${h.logTail(10)}`));
        procs.push({ name, pid: h.peer.proc.pid!, stop: () => h.stop() });
      }
    }
    await waitNodesReady(o.c, nodes, o.readyTimeoutMs);
  } catch (e) {
    await stopAll();
    throw new Error(`${(e as Error).message}${exits.length ? `; exited: ${exits.join('\n')}` : ''}`);
  }
  return {
    kind,
    nodes,
    roots: Object.fromEntries(procs.map((p) => [p.name, p.pid])),
    readyMs: Date.now() - t0,
    image: kind === 'nodelet' ? o.nodeletImage : 'registry.invalid/hollow-fake:1',
    toleration: kind === 'nodelet' ? WASM_TOLERATION : { ...HOLLOW_TAINT, operator: 'Equal' },
    exits,
    stop: stopAll,
  };
}
