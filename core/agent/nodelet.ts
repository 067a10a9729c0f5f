/**
 * The composition root: builds every subsystem of nodelet in order and passes
 * each explicitly. The extension points are lists built here (see
 * docs/architecture.md):
 *
 *   volume plugins        probeVolumePlugins({ csi, image })  → pod set-up
 *   admit handlers        [node shutdown, eviction, devices, predicates] → PodController.addAdmitHandlers
 *   admission allocatable [node, devices]                     → PodController
 *   container options     [devices, dra]                      → pod set-up
 *   pod resources         [dra]                               → pod set-up (before the volumes)
 *   pod status            [observed generation, resize, devices, dra] (observedGeneration; containerStatuses[].resources,
 *                         PodResizePending/InProgress; allocatedResourcesStatus) → PodController
 *   allocation            AllocationManager (in-place pod resize: allocations, checkpoints, decisions) → PodController
 *   resize admit handlers [node shutdown, eviction, predicates] → AllocationManager.addAdmitHandlers
 *   standalone admission  + DRA refusal (pods with resourceClaims: UnsupportedPodSpec) → PodController
 *   pod network           PodNetworkManager (pod CIDR, bridge) → PodController
 *   pod routes            PodRoutes (--pod-routes=host-gw: Nodes → routes; NetworkUnavailable) → NodeController
 *   registration handlers { CSIPlugin: csi, DevicePlugin: devices, DRAPlugin: dra } → PluginManager
 *   prober                ProbeManager (one keep-alive agent)  → PodController (container runs' probes and hooks)
 *   Service resolver      startServices (Services, EndpointSlices) → providers (`ProviderContext.services`)
 *   own Node              watchOwnNode (an informer of the node's own Node) → NodeController (each tick's read-back)
 *
 * Each part is built after what it uses, so none is handed a reference to
 * fill in later. Parts that must tell a later one something subscribe it when
 * that one is built (device and DRA health, changed ConfigMaps → the pod controller;
 * node shutdown, eviction and device plugins → the node controller).
 *
 *   startNodelet ──► images ──► pod store ──► (kubeconfig? Services) ──► providers ──► events ──► DRA ──► devices ──► CSI
 *                ──► (kubeconfig? pod certificates) ──► pod set-up + pod network ──► allocation ──► pod controller ──► node shutdown, eviction (their admit handlers)
 *                ──► kubelet API ──► (kubeconfig? node + lease) ──► plugin registration
 *                ──► (kubeconfig? informer + orphans) ──► static pods
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger, NodeContribution, Provider } from '@nodelet/plugin-api/v1';
import { type NodeletOptions, packageVersion, KUBELET_COMPATIBLE_VERSION } from '../config/index.ts';
import { createKubeClients, type KubeClients, withTimeout } from '../kube/index.ts';
import {
  NodeController,
  LeaseController,
  heartbeatTimeoutMs,
  detectNodeIP,
  readHostInfo,
  nodeLabels,
  nodeResources,
  watchOwnNode,
  type NodeShape,
} from '../node/index.ts';
import {
  PodController,
  PodStarts,
  PodStore,
  predicateAdmitHandler,
  fixedAllocatable,
  observedGenerationContributor,
  startApiPodSource,
  apiStatusSink,
  readStaticPods,
  memoryStatusSink,
  ensureMirrorPod,
  mirrorAwareSink,
  createPodSetup,
  reportRefusedManifests,
  deleteDanglingPods,
  releaseUnclaimedContainers,
} from '../pods/index.ts';
import { EventRecorder, logEvents } from '../events/index.ts';
import { openImageService, podImages } from '../images/index.ts';
import { startKubeletApi } from './kubelet-api.ts';
import { reportProviderFailures, startProviders } from '../providers/index.ts';
import { startPluginRegistration } from './plugin-registration.ts';
import { startClientCertificates } from './client-certificates.ts';
import { probeVolumePlugins } from './volume-plugins.ts';
import { watchManifests } from './static-pods.ts';
import { deviceAdmitHandler, deviceAllocatable, deviceContainerOptions, startDevicePlugins } from '../devices/index.ts';
import { createTmpfsMounter, imageVolumePlugin, startCsi } from '../volumes/index.ts';
import { dirMaker, fileWriter, helperShell, mountSyscalls } from '../exec/index.ts';
import { startDra } from '../dra/index.ts';
import { apiNodeSource, PodNetworkManager, PodRoutes } from '../network/index.ts';
import { startServices } from '../services/index.ts';
import { NodeShutdownManager } from '../nodeshutdown/index.ts';
import { diskUsage, EvictionManager, startEmptyDirLimits, type PodUsageStats } from '../eviction/index.ts';
import { StatsCollector } from './stats-collector.ts';
import { ProbeManager } from '../probes/index.ts';
import { CSI_PLUGIN, DEVICE_PLUGIN, DRA_PLUGIN } from '../../sockets/pluginregistration.ts';
import { standaloneDraAdmitHandler } from '../dra/index.ts';
import { apiPodCertificates, PodCertificateManager } from '../certificates/index.ts';
import { reportPodCertificateStates } from '../metrics/index.ts';
import { AllocationManager } from '../allocation/index.ts';

/** A running nodelet. */
export interface Nodelet {
  readonly pods: PodController;
  stop(): Promise<void>;
  /** The longest a stop may take (the largest grace period plus slack). */
  maxShutdownMs(): number;
}

function shapeFor(o: NodeletOptions, provider: Provider, nodeIP: string, port: number, contribution: NodeContribution): NodeShape {
  return {
    nodeName: o.nodeName,
    nodeIP,
    kubeletPort: port,
    maxPods: o.maxPods,
    labels: o.nodeLabels,
    taints: o.registerWithTaints,
    defaultTaint: o.defaultTaint,
    architecture: provider.architecture,
    os: provider.os,
    kubeletVersion: `${KUBELET_COMPATIBLE_VERSION}.0-nodelet.${packageVersion()}`,
    runtimeVersion: provider.runtimeVersion,
    contributions: [contribution],
  };
}

/** The node's `spec.podCIDRs` (or `spec.podCIDR`), as kube-controller-manager allocated them. */
async function nodePodCIDRs(clients: KubeClients, name: string): Promise<string[] | undefined> {
  const node = await clients.core.readNode({ name });
  return node.spec?.podCIDRs?.length ? node.spec.podCIDRs : node.spec?.podCIDR ? [node.spec.podCIDR] : undefined;
}

/** What the node controller reads from the subsystems that report node conditions and resources. */
interface NodeParts {
  readonly shape: NodeShape;
  readonly host: ReturnType<typeof readHostInfo>;
  readonly images: Awaited<ReturnType<typeof openImageService>>;
  readonly devices: Awaited<ReturnType<typeof startDevicePlugins>>;
  readonly shutdown: NodeShutdownManager;
  readonly eviction: EvictionManager;
  readonly network: PodNetworkManager;
  readonly routes?: PodRoutes;
}

/**
 * Registers the Node and starts its status and Lease (cluster mode with
 * `--register-node`). The node controller is built last of the node's parts:
 * node shutdown, eviction and device plugins are told to notify it here.
 */
async function joinCluster(o: NodeletOptions, clients: KubeClients, parts: NodeParts, log: Logger, signal: AbortSignal) {
  // The node's status and Lease go through requests that time out (upstream's heartbeat client).
  const heartbeat = withTimeout(clients, heartbeatTimeoutMs(o.nodeStatusUpdateFrequencyMs, o.nodeLeaseDurationSeconds));
  // The node's own Node from an informer (upstream's node lister): each status tick reads it back without a GET.
  const own = watchOwnNode(clients, o.nodeName, log.child({ component: 'node' }));
  const node = new NodeController(heartbeat, {
    shape: parts.shape,
    host: parts.host,
    rootDir: o.rootDir,
    updateMs: o.nodeStatusUpdateFrequencyMs,
    reportMs: o.nodeStatusReportFrequencyMs,
    log: log.child({ component: 'node' }),
    notReadyReasons: () => parts.shutdown.notReadyReasons(),
    images: () => parts.images.nodeImages(),
    extraResources: () => parts.devices.extraResources(),
    pressure: () => parts.eviction.pressure(),
    conditions: () => parts.routes?.conditions() ?? [],
    cachedNode: () => own.get(),
  });
  parts.shutdown.onShutdownStarting(() => node.syncNow());
  parts.eviction.onConditionsChanged(() => node.poke());
  await node.register(signal);
  node.start();
  // kube-controller-manager gives the registered node its pod CIDR: start looking now (never rejects).
  void parts.network.settle();
  parts.routes?.onChange(() => node.poke());
  parts.routes?.start();
  parts.devices.onChange(() => node.poke());
  const lease = new LeaseController(heartbeat, {
    nodeName: o.nodeName,
    nodeUID: node.uid,
    durationSeconds: o.nodeLeaseDurationSeconds,
    log: log.child({ component: 'lease' }),
  });
  lease.start();
  return { node, lease, own };
}

/** Starts every part of nodelet in dependency order; throws if a required part cannot start. */
export async function startNodelet(o: NodeletOptions, log: Logger): Promise<Nodelet> {
  for (const d of [o.rootDir, o.podsDir, o.logsDir, o.certDir]) mkdirSync(d, { recursive: true, mode: 0o750 });
  const abort = new AbortController();
  const images = await openImageService(o, log);
  const nodeIP = o.nodeIP ?? detectNodeIP();
  const certs = await startClientCertificates(o, log, abort.signal);
  const clients: KubeClients | undefined = o.kubeconfig ? createKubeClients(o.kubeconfig, certs?.credentials) : undefined;
  certs?.start(() => clients!.transport);
  // The node's pods and their states (upstream's pod manager): the pod controller writes it; device plugins
  // and DRA, built before the controller because pod set-up uses them, read it; so does the Service resolver.
  const store = new PodStore();
  // Services for Wasm pods' own outbound paths (no kube-proxy): one informer pair for the node, handed to providers.
  const services = clients
    ? await startServices({
        clients,
        nodeName: o.nodeName,
        clusterDomain: o.clusterDomain ?? '',
        zone: o.nodeLabels['topology.kubernetes.io/zone'],
        pod: (ref) => store.lookup(`${ref.namespace}/${ref.name}`)?.pod,
        log: log.child({ component: 'services' }),
      })
    : undefined;
  const providers = await startProviders(o, log, images, abort.signal, clients, services?.resolver);
  const provider = providers.primary;
  const shape = shapeFor(o, provider, nodeIP, o.port, providers.contribution);
  // Pods in their first sync, counted by the pod controller; events wait for them (core/pods/pod-starts.ts).
  const starts = new PodStarts();
  const events = clients ? new EventRecorder(clients, o.nodeName, log.child({ component: 'events' }), starts) : logEvents(log.child({ component: 'events' }));
  reportProviderFailures(events, o.nodeName, providers.failures);
  const host = readHostInfo(o.rootDir);
  const labels = nodeLabels(shape);
  const { allocatable } = nodeResources(shape, host);
  // Device plugins and DRA free what gone pods held only once the pod sources listed every pod here.
  const sources = { ready: !clients };
  // DRA needs the API (claims, ResourceSlices): cluster mode only.
  const dra = clients
    ? startDra(
        o,
        {
          clients,
          activePods: () => store.pods().filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'),
          sourcesReady: () => sources.ready,
        },
        log,
      )
    : undefined;
  const devices = await startDevicePlugins(
    o,
    {
      activePods: () => store.pods(),
      sourcesReady: () => sources.ready,
      dynamicResources: (pod, container) => dra?.manager.dynamicResources(pod, container) ?? [],
    },
    log,
  );
  // CSI recovers its staging refcounts before any pod is set up or cleaned up.
  const csi = await startCsi({ clients, options: o, nodeName: o.nodeName, log });
  // One Perl helper (core/exec) makes the tmpfs mounts and the pods' own dirs, and writes the pod
  // IP records: system calls in another process, one round trip each, none on the main thread.
  // Without perl: /bin/sh's `mount` and libuv's pool.
  const syscalls = mountSyscalls();
  const syscallHelper = syscalls ? helperShell({ errorCode: 'NDL_VOLUME_TMPFS', program: syscalls }) : undefined;
  const dirs = dirMaker(syscallHelper);
  const tmpfs = createTmpfsMounter({ syscalls: syscallHelper });
  // podCertificate projected sources (cluster mode): keys made here, certificates from PodCertificateRequests.
  const certLog = log.child({ component: 'pod-certificates' });
  const podCertificates = clients
    ? new PodCertificateManager({ api: apiPodCertificates(clients, o.nodeName, certLog), nodeName: o.nodeName, events, log: certLog })
    : undefined;
  if (podCertificates) reportPodCertificateStates(() => podCertificates.metricReport());
  const setup = createPodSetup(o, clients, nodeIP, log, {
    dirs,
    volumePlugins: probeVolumePlugins({ csi: csi.volumePlugin, tmpfs, image: imageVolumePlugin({ images, events }) }),
    containerOptions: [deviceContainerOptions(devices.manager), ...(dra ? [dra.containerOptions] : [])],
    podResources: dra ? [dra.preparer] : [],
    events,
    podCertificates,
  });
  const nodeEvent = (type: 'Normal' | 'Warning', reason: string, note: string) =>
    events.emit({ kind: 'Node', namespace: 'default', name: o.nodeName, uid: o.nodeName }, type, reason, note);
  const network = new PodNetworkManager({
    rootDir: o.rootDir,
    interfaceName: o.podInterface,
    podCIDRs: o.podCIDR,
    nodePodCIDRs: clients ? () => nodePodCIDRs(clients, o.nodeName) : undefined,
    log: log.child({ component: 'network' }),
    nodeEvent,
    files: fileWriter(syscallHelper, 'NDL_NETWORK_STATE'),
  });
  // Routes to the other nodes' pod CIDRs (cluster mode; started once the node is registered).
  const routesLog = log.child({ component: 'pod-routes' });
  const routes =
    o.podRoutes === 'host-gw' && clients
      ? new PodRoutes({ nodeName: o.nodeName, podInterface: o.podInterface, nodes: apiNodeSource(clients, routesLog), log: routesLog, nodeEvent })
      : undefined;
  if (o.podRoutes === 'host-gw' && !clients) routesLog.warn({}, '--pod-routes=host-gw needs a cluster (--kubeconfig) to learn the other nodes: no routes');
  const probes = new ProbeManager();
  const admitNode = { nodeName: o.nodeName, nodeLabels: labels, allocatable: [fixedAllocatable(allocatable), deviceAllocatable(devices.manager)] };
  // In-place pod resize: what each pod's containers are allocated (checkpointed under the root dir) and each resize's decision.
  const allocation = new AllocationManager({
    dir: o.rootDir,
    log: log.child({ component: 'allocation' }),
    events,
    pods: store,
    admitNode,
    providerOf: (pod) => {
      const routed = providers.route(pod);
      return 'provider' in routed ? routed.provider : undefined;
    },
    sourcesReady: () => sources.ready,
  });
  const pods = new PodController({
    store,
    starts,
    network,
    nodeName: o.nodeName,
    hostIP: nodeIP,
    log: log.child({ component: 'pods' }),
    route: providers.route,
    setup,
    events,
    resyncMs: o.syncFrequencyMs,
    restartBackoffMaxMs: o.maxContainerRestartPeriodMs,
    sink: clients ? mirrorAwareSink(clients, apiStatusSink(clients)) : memoryStatusSink(log.child({ component: 'pods' })),
    admitNode,
    probes,
    // Device plugins before DRA, as upstream's container manager.
    statusContributors: [observedGenerationContributor, allocation.statusContributor, devices.statusContributor, ...(dra ? [dra.statusContributor] : [])],
    allocation,
  });
  allocation.onResync((uids) => pods.resyncPods(uids));
  setup.onObjectsChanged((uids) => pods.resyncPods(uids));
  devices.onHealthChange((uids) => pods.resyncPods(uids));
  dra?.onHealthChange((uids) => pods.resyncPods(uids));
  // Graceful node shutdown (SIGPWR): stops pods through the controller, posts NotReady through the node controller.
  const shutdown = new NodeShutdownManager({
    nodeName: o.nodeName,
    gracePeriodMs: o.shutdownGracePeriodMs,
    criticalPodsMs: o.shutdownGracePeriodCriticalPodsMs,
    log: log.child({ component: 'nodeshutdown' }),
    events,
    activePods: () => pods.activePods(),
    terminate: (pod, t) => pods.terminateAbnormally(pod, t),
  });
  // Listen at once: a SIGPWR during start-up would otherwise kill the process (the signal's default action).
  shutdown.start();
  // The eviction manager (pressure conditions, thresholds, one eviction per period); started once pods run.
  const evictionStats = new StatsCollector(o.nodeName, pods, log.child({ component: 'eviction' }));
  const eviction = new EvictionManager({
    nodeName: o.nodeName,
    settings: o,
    log: log.child({ component: 'eviction' }),
    events,
    signals: { nodefsPath: o.rootDir, imagefsPath: images.storeDir },
    activePods: () => pods.activePods(),
    podStats: async () => {
      const snap = await evictionStats.snapshot();
      return new Map<string, PodUsageStats>(snap.pods.map((p) => [p.uid, { containers: p.containers }]));
    },
    podDiskUsage: async (pod) => {
      const m = pod.metadata!;
      const dirs = [join(setup.podDir(pod), 'volumes', 'kubernetes.io~empty-dir'), join(o.logsDir, `${m.namespace}_${m.name}_${m.uid}`)];
      return (await Promise.all(dirs.map((d) => diskUsage(d)))).reduce((a, b) => a + b, 0);
    },
    reclaimImages: (bytes) => images.reclaim(bytes, podImages(pods.pods())),
    terminate: (pod, t) => pods.terminateAbnormally(pod, t),
  });
  // Upstream's AddPodAdmitHandlers, in order; the first rejection wins. Standalone: no scheduler allocates
  // claims, so a pod with resourceClaims is refused (UnsupportedPodSpec).
  pods.addAdmitHandlers([
    shutdown.admitHandler(),
    eviction.admitHandler(),
    ...(dra ? [] : [standaloneDraAdmitHandler()]),
    deviceAdmitHandler(devices.manager),
    predicateAdmitHandler,
  ]);
  // A resize passes the same checks but the device allocation (its devices do not change).
  allocation.addAdmitHandlers([shutdown.admitHandler(), eviction.admitHandler(), predicateAdmitHandler]);
  const api = await startKubeletApi(o, log, pods, nodeIP, clients, async () =>
    (await csi.volumePlugin.volumeStats()).map(({ volume: v, ...usage }) => ({
      ...usage,
      podUid: v.podUid,
      podNamespace: v.podNamespace,
      podName: v.podName,
      name: v.name,
      pvcName: v.pvcName,
    })),
  );
  shape.kubeletPort = api.port;
  const cluster =
    clients && o.registerNode
      ? await joinCluster(o, clients, { shape, host, images, devices, shutdown, eviction, network, routes }, log, abort.signal)
      : undefined;
  const registration = await startPluginRegistration(o, log, {
    [CSI_PLUGIN]: csi.handler,
    [DEVICE_PLUGIN]: devices.handler,
    ...(dra ? { [DRA_PLUGIN]: dra.handler } : {}),
  });
  const source = clients ? await startApiPodSource(clients, o.nodeName, pods, log.child({ component: 'pod-source' })) : undefined;
  if (source) {
    sources.ready = true;
    // Pods created since the first list arrive through the watch meanwhile and start at once: the store knows them.
    const listed = new Set(source.pods.map((p) => p.metadata?.uid));
    const known = (uid: string) => listed.has(uid) || store.pods().some((p) => p.metadata?.uid === uid);
    await setup.cleanupOrphans(known).catch((e) => log.warn({ err: String(e) }, 'orphan cleanup failed'));
  }
  const livePods: V1Pod[] = source?.pods ?? [];
  const manifests = o.podManifestPath ? await readStaticPods(o.podManifestPath, o.nodeName, log) : { pods: [], refused: [] };
  const staticPods: V1Pod[] = manifests.pods;
  reportRefusedManifests(events, o.nodeName, manifests.refused);
  const nodeRef = clients && cluster?.node.uid ? { name: o.nodeName, uid: cluster.node.uid } : undefined;
  if (clients && nodeRef) await Promise.all(staticPods.map((p) => ensureMirrorPod(clients, p, nodeRef, log)));
  await network.releaseExcept([...livePods, ...staticPods, ...store.pods()]);
  allocation.removeOrphans(new Set([...livePods, ...staticPods, ...store.pods()].map((p) => p.metadata!.uid!)));
  // Containers kept by a provider across the restart: pods re-adopt theirs, the rest are released.
  await releaseUnclaimedContainers(providers.providers, livePods, log.child({ component: 'pods' }), staticPods);
  // Pods a pod provider kept across the restart that are no longer bound here are deleted.
  await deleteDanglingPods(providers.providers, [...livePods, ...staticPods], o.podsDir, log.child({ component: 'pods' }));
  for (const p of staticPods) pods.upsert(p);
  pods.start();
  allocation.start();
  // Manifests added, changed or removed while nodelet runs (upstream's file source: watch + --file-check-frequency).
  const stopManifestWatch = o.podManifestPath
    ? watchManifests({
        path: o.podManifestPath,
        nodeName: o.nodeName,
        periodMs: o.fileCheckFrequencyMs,
        initial: staticPods,
        initialRefused: manifests.refused,
        pods,
        events,
        log: log.child({ component: 'static-pods' }),
        mirror: clients && nodeRef ? { clients, node: nodeRef } : undefined,
      })
    : undefined;
  const stopImageGc = images.startGc(() => podImages(pods.pods()));
  eviction.start();
  const stopEviction = startEmptyDirLimits({
    log: log.child({ component: 'eviction' }),
    events,
    activePods: () => pods.activePods(),
    podDir: (pod) => setup.podDir(pod),
    terminate: (pod, t) => pods.terminateAbnormally(pod, t),
  });
  log.info(
    { node: o.nodeName, nodeIP, port: api.port, mode: clients ? 'cluster' : 'standalone', staticPods: staticPods.length, logs: join(o.logsDir) },
    'nodelet is running',
  );
  const grace = () => Math.max(0, ...pods.pods().map((p) => p.spec?.terminationGracePeriodSeconds ?? 30)) * 1000;
  return {
    pods,
    maxShutdownMs: () => grace() + 15_000,
    async stop() {
      shutdown.stop();
      source?.stop();
      stopManifestWatch?.();
      stopImageGc();
      stopEviction();
      eviction.stop();
      await pods.shutdown();
      await allocation.stop();
      setup.stop();
      podCertificates?.stop();
      await probes.close();
      cluster?.lease.stop();
      cluster?.node.stop();
      cluster?.own.stop();
      await routes?.stop();
      abort.abort();
      await registration.stop();
      csi.stop();
      dra?.stop();
      await devices.stop();
      await providers.stop();
      services?.stop();
      await api.close();
      await certs?.stop();
    },
  };
}
