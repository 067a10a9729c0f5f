/**
 * Serves the kubelet API for the pod controller. The serving certificate:
 * `--rotate-server-certificates` (serverTLSBootstrap): issued through
 * `kubernetes.io/kubelet-serving` CSRs and rotated; otherwise the flags'
 * files or a self-signed pair in `--cert-dir`, reloaded when the files change.
 * The client CA: `--client-ca-file`, else the kubeconfig's cluster CA, else
 * (standalone) a local one.
 *
 * Authentication and authorization as upstream's kubelet builds them:
 * - with a kubeconfig: bearer tokens by TokenReview (`--authentication-token-webhook`,
 *   default on, as the KubeletConfiguration default) and `--authorization-mode=Webhook`
 *   by SubjectAccessReview, both cached with upstream's TTLs;
 * - standalone (no apiserver to ask): no tokens, and Webhook falls back to
 *   AlwaysAllow for callers the client CA verified (by default only the local
 *   client certificate nodelet makes in `--cert-dir`); logged at start.
 * - `--anonymous-auth=true`: callers without credentials are `system:anonymous`
 *   and are still authorized (so Webhook mode asks about them too).
 */
import { readFileSync } from 'node:fs';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { NodeletOptions } from '../config/index.ts';
import { containerLogDir, podLogsRoot } from '../logs/index.ts';
import { targetHost } from '../probes/index.ts';
import type { PodReader } from '../pods/index.ts';
import {
  createKubeletServer,
  type ContainerTarget,
  type PodSource,
  loadServingCert,
  ensureLocalClient,
  localClientCa,
  type LocalClient,
  watchServingCert,
  alwaysAllow,
  type Authorizer,
  type AuthnOptions,
  apiTokenReviewer,
  cachedTokenAuthenticator,
  apiAccessReviewer,
  webhookAuthorizer,
} from '../server/index.ts';
import { CertificateManager, CertStore, KUBELET_SERVING_SIGNER, SERVING_USAGES, nodeClientSubject, splitAddresses } from '../certificates/index.ts';
import type { KubeClients } from '../kube/index.ts';
import { metricsText, nodeName as nodeNameGauge, setVolumeStats, type VolumeUsage } from '../metrics/index.ts';
import { StatsCollector, runningCounts } from './stats-collector.ts';
import { kubeletConfigOf } from './configz.ts';

/** The authenticators and the authorizer for `o` (see the module comment). */
function apiAuth(o: NodeletOptions, clients: KubeClients | undefined, log: Logger): { authn: AuthnOptions; authorizer: Authorizer } {
  const token =
    clients && o.authenticationTokenWebhook ? cachedTokenAuthenticator(apiTokenReviewer(clients), o.authenticationTokenWebhookCacheTtlMs) : undefined;
  let authorizer: Authorizer = alwaysAllow;
  if (o.authorizationMode === 'Webhook') {
    if (clients) {
      authorizer = webhookAuthorizer(apiAccessReviewer(clients), {
        authorizedTtlMs: o.authorizationWebhookCacheAuthorizedTtlMs,
        unauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTtlMs,
      });
    } else {
      log.info(
        'standalone mode: no apiserver for SubjectAccessReview, so --authorization-mode=Webhook allows every caller the client CA verified (AlwaysAllow)',
      );
    }
  } else {
    log.warn('--authorization-mode=AlwaysAllow: every authenticated caller of the kubelet API may do everything');
  }
  if (!clients && o.authenticationTokenWebhook) log.debug('standalone mode: bearer tokens are not accepted (no apiserver for TokenReview)');
  if (o.anonymousAuth) log.warn('--anonymous-auth=true: callers without credentials are served as system:anonymous (if authorized)');
  return { authn: { token, anonymous: o.anonymousAuth }, authorizer };
}

/** Adapts the pod controller to what the kubelet API reads. */
function podSourceFor(pods: PodReader, rootDir: string): PodSource {
  return {
    listPods: () => pods.pods(),
    podAddress: (pod) => targetHost(pod),
    findContainer(namespace, podName, container): ContainerTarget | undefined {
      const found = pods.lookup(`${namespace}/${podName}`);
      const c = found?.worker?.container(container);
      if (!found?.worker || !c) return undefined;
      const m = found.pod.metadata!;
      const provider = found.worker.provider;
      return {
        logDir: containerLogDir(rootDir, { namespace: m.namespace!, name: m.name!, uid: m.uid! }, container),
        restartCount: c.restartCount,
        running: c.running,
        providerName: found.worker.provider.name,
        exec: found.worker.provider.exec !== undefined,
        exited: c.exited,
        attach: provider.attach && c.running && c.id !== undefined ? (io) => provider.attach!(c.id!, io) : undefined,
      };
    },
  };
}

/** The client CA: `--client-ca-file`, else the kubeconfig's cluster CA (kubeadm's default), else a local one (standalone). */
async function clientCa(o: NodeletOptions, log: Logger, clients?: KubeClients): Promise<{ ca: string | Buffer; local?: LocalClient }> {
  if (o.clientCAFile) return { ca: readFileSync(o.clientCAFile) };
  const cluster = clients?.kc.getCurrentCluster();
  const fromKubeconfig = cluster?.caFile ? readFileSync(cluster.caFile) : cluster?.caData ? Buffer.from(cluster.caData, 'base64') : undefined;
  if (fromKubeconfig) {
    log.info({ caFile: cluster?.caFile }, "no --client-ca-file: the kubelet API trusts client certificates signed by the kubeconfig's cluster CA");
    return { ca: fromKubeconfig };
  }
  if (!clients) {
    const local = await ensureLocalClient(o.certDir);
    return { ca: localClientCa(local), local };
  }
  log.warn('no --client-ca-file and no CA in the kubeconfig: the kubelet API will refuse every request (401)');
  return { ca: '' };
}

/** Starts the HTTPS API and the healthz endpoint; resolves with the bound port. */
export async function startKubeletApi(
  o: NodeletOptions,
  log: Logger,
  pods: PodReader,
  nodeIP: string,
  clients?: KubeClients,
  /** Pod volume usage (CSI NodeGetVolumeStats): `kubelet_volume_stats_*` on /metrics, `volume` in /stats/summary. */
  volumeStats?: () => Promise<VolumeUsage[]>,
): Promise<{ port: number; close(): Promise<void> }> {
  const { ca, local } = await clientCa(o, log, clients);
  const apiLog = log.child({ component: 'kubelet-api' });
  let serving: { cert?: string; key?: string; certFile?: string } = {};
  let manager: CertificateManager | undefined;
  let stopWatch: (() => void) | undefined;
  if (o.serverTLSBootstrap && clients) {
    manager = new CertificateManager({
      name: 'serving',
      signerName: KUBELET_SERVING_SIGNER,
      usages: SERVING_USAGES,
      log: apiLog,
      store: new CertStore({ certDir: o.certDir, prefix: 'kubelet-server', fallbackCertFile: o.tlsCertFile, fallbackKeyFile: o.tlsPrivateKeyFile }),
      template: () => ({ ...nodeClientSubject(o.nodeName), ...splitAddresses([o.nodeName, nodeIP]) }),
      api: () => clients.transport,
      onChange: (pair) => server.updateTls({ cert: pair.cert, key: pair.key, ca }),
    });
    const current = manager.current();
    if (!current) apiLog.info('serverTLSBootstrap: no serving certificate yet; TLS handshakes fail until its CSR is approved and signed');
    serving = current ? { cert: current.cert, key: current.key, certFile: new CertStore({ certDir: o.certDir, prefix: 'kubelet-server' }).currentPath() } : {};
  } else {
    const loaded = await loadServingCert({
      certFile: o.tlsCertFile,
      keyFile: o.tlsPrivateKeyFile,
      certDir: o.certDir,
      nodeName: o.nodeName,
      addresses: [nodeIP, '127.0.0.1'],
    });
    serving = loaded;
    stopWatch = watchServingCert({
      certFile: loaded.certFile,
      keyFile: loaded.keyFile,
      initial: loaded,
      log: apiLog,
      onChange: (pair) => server.updateTls({ cert: pair.cert, key: pair.key, ca }),
    });
  }
  const stats = new StatsCollector(o.nodeName, pods, log.child({ component: 'stats' }));
  const volumes = async (): Promise<VolumeUsage[]> =>
    volumeStats ? volumeStats().catch((e: unknown) => (apiLog.warn({ err: String(e) }, 'volume stats failed'), [])) : [];
  nodeNameGauge.set({ node: o.nodeName }, 1);
  const server = createKubeletServer({
    nodeName: o.nodeName,
    log /* the server adds component=kubelet-api */,
    pods: podSourceFor(pods, o.rootDir),
    tls: { cert: serving.cert, key: serving.key, ca },
    address: o.address,
    port: o.port,
    healthzAddress: o.healthzBindAddress,
    healthzPort: o.healthzPort,
    logsRoot: podLogsRoot(o.rootDir),
    ...apiAuth(o, clients, log),
    stats: {
      snapshot: async () => ({ ...(await stats.snapshot()), volumes: await volumes() }),
      metrics: async () => {
        setVolumeStats(await volumes());
        return metricsText(runningCounts(pods));
      },
      configz: () => kubeletConfigOf(o),
    },
  });
  const bound = await server.start();
  manager?.start();
  log.info({ port: bound.port, healthzPort: bound.healthzPort }, 'kubelet API listening');
  if (local) {
    const curl = `curl --cacert ${serving.certFile} --cert ${local.certFile} --key ${local.keyFile} https://127.0.0.1:${bound.port}`;
    log.info(
      { pods: `${curl}/pods`, logs: `${curl}/containerLogs/<namespace>/<pod>/<container>` },
      'standalone mode: read the kubelet API with this local client certificate',
    );
  }
  return {
    port: bound.port,
    async close() {
      stopWatch?.();
      await manager?.stop();
      await server.close();
    },
  };
}
