/**
 * Wires nodelet together: image service, provider, node registration and
 * lease, the pod controller and its sources, and the kubelet API.
 *
 *   startNodelet ──► images ──► provider.init ──► (kubeconfig? node + lease + informer)
 *                                                └─► static pods ──► kubelet API
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import {
  bootstrapClientCert, CertificateManager, CertStore, CLIENT_KUBELET_SIGNER, CLIENT_USAGES, kubeconfigKeyPair, nodeClientSubject, type KeyPair,
} from '../certificates/index.ts';
import type { Logger, NodeContribution, Provider } from '@nodelet/plugin-api/v1';
import type { NodeletOptions } from '../config/options.ts';
import { packageVersion, KUBELET_COMPATIBLE_VERSION } from '../config/repo-root.ts';
import { createKubeClients, type KubeClients } from '../kube/client.ts';
import { NodeController } from '../node/node-controller.ts';
import { LeaseController } from '../node/lease.ts';
import { detectNodeIP, readHostInfo } from '../node/host-info.ts';
import { nodeLabels, nodeResources, type NodeShape } from '../node/node-object.ts';
import { PodController } from '../pods/pod-controller.ts';
import { startApiPodSource, apiStatusSink } from '../pods/sources/api-pod-source.ts';
import { readStaticPods } from '../pods/sources/static-pod-source.ts';
import { memoryStatusSink } from '../pods/sources/memory-status-sink.ts';
import { ensureMirrorPod, mirrorAwareSink } from '../pods/sources/mirror-pods.ts';
import { EventRecorder, logEvents } from '../events/event-recorder.ts';
import { openImageService, podImages } from '../images/local-images.ts';
import { createPodSetup } from '../pods/pod-setup-impl.ts';
import { startKubeletApi } from './kubelet-api.ts';
import { reportProviderFailures, startProviders } from '../providers/host-providers.ts';
import { reportRefusedManifests } from '../pods/sources/refused-manifests.ts';
import { startPluginRegistration } from './plugin-registration.ts';
import { DEVICE_PLUGIN_TYPE, startDevicePlugins } from '../devices/index.ts';
import { withDevicePlugins } from '../devices/pod-setup-devices.ts';

/** A running nodelet. */
export interface Nodelet {
  readonly pods: PodController;
  stop(): Promise<void>;
  /** The longest a stop may take (the largest grace period plus slack). */
  maxShutdownMs(): number;
}

function shapeFor(o: NodeletOptions, provider: Provider, nodeIP: string, port: number, contribution: NodeContribution): NodeShape {
  return {
    nodeName: o.nodeName, nodeIP, kubeletPort: port, maxPods: o.maxPods, labels: o.nodeLabels,
    taints: o.registerWithTaints, defaultTaint: o.defaultTaint, architecture: provider.architecture, os: provider.os,
    kubeletVersion: `${KUBELET_COMPATIBLE_VERSION}.0-nodelet.${packageVersion()}`,
    runtimeVersion: provider.runtimeVersion, contributions: [contribution],
  };
}

/**
 * TLS bootstrap (`--bootstrap-kubeconfig`) and client certificate rotation
 * (`rotateCertificates`). Returns the rotating credentials for the API clients,
 * or undefined when the kubeconfig's own credentials are used as they are.
 */
async function startClientCertificates(o: NodeletOptions, log: Logger, signal: AbortSignal) {
  if (!o.kubeconfig) return undefined;
  const certLog = log.child({ component: 'certificates' });
  if (o.bootstrapKubeconfig) {
    await bootstrapClientCert({ kubeconfig: o.kubeconfig, bootstrapKubeconfig: o.bootstrapKubeconfig, certDir: o.certDir, nodeName: o.nodeName, log: certLog, signal });
  }
  if (!o.rotateCertificates) return undefined;
  let initial: KeyPair | undefined;
  try { initial = kubeconfigKeyPair(o.kubeconfig); } catch (e) { certLog.warn({ err: (e as Error).message }, 'the kubeconfig\'s client certificate is unusable; requesting one'); }
  let manager: CertificateManager | undefined;
  return {
    credentials: () => { const p = manager?.current(); return p ? { cert: p.cert, key: p.key } : undefined; },
    start(kubeConfig: () => KubeConfig) {
      manager = new CertificateManager({
        name: 'client', signerName: CLIENT_KUBELET_SIGNER, usages: CLIENT_USAGES, log: certLog, initial,
        store: new CertStore({ certDir: o.certDir, prefix: 'kubelet-client' }),
        template: () => nodeClientSubject(o.nodeName), kubeConfig,
      });
      manager.start();
    },
    stop: async () => manager?.stop(),
  };
}

/** Starts every part of nodelet; throws if a required part cannot start. */
export async function startNodelet(o: NodeletOptions, log: Logger): Promise<Nodelet> {
  for (const d of [o.rootDir, o.podsDir, o.logsDir, o.certDir]) mkdirSync(d, { recursive: true, mode: 0o750 });
  const abort = new AbortController();
  const images = await openImageService(o, log);
  const nodeIP = o.nodeIP ?? detectNodeIP();
  const certs = await startClientCertificates(o, log, abort.signal);
  const clients: KubeClients | undefined = o.kubeconfig ? createKubeClients(o.kubeconfig, certs?.credentials) : undefined;
  certs?.start(() => clients!.kc);
  const providers = await startProviders(o, log, images, abort.signal, clients);
  const provider = providers.primary;
  const shape = shapeFor(o, provider, nodeIP, o.port, providers.contribution);
  const events = clients ? new EventRecorder(clients, o.nodeName, log.child({ component: 'events' })) : logEvents(log.child({ component: 'events' }));
  reportProviderFailures(events, o.nodeName, providers.failures);
  const setup = createPodSetup(o, clients, nodeIP, log);
  const host = readHostInfo(o.rootDir);
  const labels = nodeLabels(shape);
  const { allocatable } = nodeResources(shape, host);
  let podsRef: PodController | undefined;
  let sourcesReady = !clients;
  const devices = await startDevicePlugins(o, { activePods: () => podsRef?.pods() ?? [], sourcesReady: () => sourcesReady }, log);
  const pods = new PodController({
    nodeName: o.nodeName, hostIP: nodeIP, log: log.child({ component: 'pods' }),
    route: providers.route, setup: withDevicePlugins(setup, devices, events), events, resyncMs: o.syncFrequencyMs,
    sink: clients ? mirrorAwareSink(clients, apiStatusSink(clients)) : memoryStatusSink(log.child({ component: 'pods' })),
    admitHook: (pod) => devices.admit(pod),
    admitContext: () => ({ nodeName: o.nodeName, nodeLabels: labels, allocatable: { ...allocatable, ...devices.admissionAllocatable() } }),
  });
  podsRef = pods;
  const api = await startKubeletApi(o, log, pods, nodeIP, clients);
  shape.kubeletPort = api.port;
  let lease: LeaseController | undefined;
  let node: NodeController | undefined;
  let stopSource: (() => void) | undefined;
  if (clients && o.registerNode) {
    node = new NodeController(clients, { shape, host, rootDir: o.rootDir, updateMs: o.nodeStatusUpdateFrequencyMs, reportMs: o.nodeStatusReportFrequencyMs, log: log.child({ component: 'node' }), images: () => images.nodeImages(), extraResources: () => devices.extraResources() });
    await node.register(abort.signal);
    node.start();
    const poke = node.poke.bind(node);
    devices.onChange(poke);
    lease = new LeaseController(clients, { nodeName: o.nodeName, nodeUID: node.uid, durationSeconds: o.nodeLeaseDurationSeconds, log: log.child({ component: 'lease' }) });
    lease.start();
  }
  const registration = await startPluginRegistration(o, clients, log, { [DEVICE_PLUGIN_TYPE]: devices.handler });
  if (clients) {
    const src = await startApiPodSource(clients, o.nodeName, pods, log.child({ component: 'pod-source' }));
    stopSource = src.stop;
    sourcesReady = true;
    await setup.cleanupOrphans(src.pods).catch((e) => log.warn({ err: String(e) }, 'orphan cleanup failed'));
  }
  const manifests = o.podManifestPath ? await readStaticPods(o.podManifestPath, o.nodeName, log) : { pods: [], refused: [] };
  const staticPods: V1Pod[] = manifests.pods;
  reportRefusedManifests(events, o.nodeName, manifests.refused);
  const nodeRef = clients && node?.uid ? { name: o.nodeName, uid: node.uid } : undefined;
  if (clients && nodeRef) await Promise.all(staticPods.map((p) => ensureMirrorPod(clients, p, nodeRef, log)));
  for (const p of staticPods) pods.upsert(p);
  pods.start();
  const stopImageGc = images.startGc(() => podImages(pods.pods()));
  log.info({ node: o.nodeName, nodeIP, port: api.port, mode: clients ? 'cluster' : 'standalone', staticPods: staticPods.length, logs: join(o.logsDir) }, 'nodelet is running');
  const grace = () => Math.max(0, ...pods.pods().map((p) => p.spec?.terminationGracePeriodSeconds ?? 30)) * 1000;
  return {
    pods,
    maxShutdownMs: () => grace() + 15_000,
    async stop() {
      stopSource?.();
      stopImageGc();
      await pods.shutdown();
      lease?.stop();
      node?.stop();
      abort.abort();
      await registration.stop();
      await devices.stop();
      await providers.stop();
      await api.close();
      await certs?.stop();
    },
  };
}
