/**
 * Serves the kubelet API for the pod controller: TLS material from the flags
 * (or a self-signed serving cert in `--cert-dir`), the client CA from
 * `--client-ca-file`, and authn/authz as upstream's kubelet builds them:
 *
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
import type { NodeletOptions } from '../config/options.ts';
import { containerLogDir, podLogsRoot } from '../logs/log-paths.ts';
import type { PodController } from '../pods/pod-controller.ts';
import { createKubeletServer } from '../server/kubelet-server.ts';
import type { ContainerTarget, PodSource } from '../server/pod-source.ts';
import { loadServingCert } from '../server/serving-cert.ts';
import { ensureLocalClient, localClientCa } from '../server/standalone-client.ts';
import type { Logger as PinoLogger } from 'pino';
import type { KubeClients } from '../kube/client.ts';
import { alwaysAllow, type Authorizer } from '../server/authz.ts';
import type { AuthnOptions } from '../server/authn.ts';
import { apiTokenReviewer, cachedTokenAuthenticator } from '../server/token-review.ts';
import { apiAccessReviewer, webhookAuthorizer } from '../server/webhook-authz.ts';
import { metricsText, setRunningCounts, nodeName as nodeNameGauge } from '../metrics/kubelet-metrics.ts';
import { StatsCollector, runningCounts } from './stats-collector.ts';
import { kubeletConfigOf } from './configz.ts';

/** The authenticators and the authorizer for `o` (see the module comment). */
export function apiAuth(o: NodeletOptions, clients: KubeClients | undefined, log: Logger): { authn: AuthnOptions; authorizer: Authorizer } {
  const token = clients && o.authenticationTokenWebhook
    ? cachedTokenAuthenticator(apiTokenReviewer(clients.kc), o.authenticationTokenWebhookCacheTtlMs) : undefined;
  let authorizer: Authorizer = alwaysAllow;
  if (o.authorizationMode === 'Webhook') {
    if (clients) {
      authorizer = webhookAuthorizer(apiAccessReviewer(clients.kc), {
        authorizedTtlMs: o.authorizationWebhookCacheAuthorizedTtlMs, unauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTtlMs,
      });
    } else {
      log.info('standalone mode: no apiserver for SubjectAccessReview, so --authorization-mode=Webhook allows every caller the client CA verified (AlwaysAllow)');
    }
  } else {
    log.warn('--authorization-mode=AlwaysAllow: every authenticated caller of the kubelet API may do everything');
  }
  if (!clients && o.authenticationTokenWebhook) log.debug('standalone mode: bearer tokens are not accepted (no apiserver for TokenReview)');
  if (o.anonymousAuth) log.warn('--anonymous-auth=true: callers without credentials are served as system:anonymous (if authorized)');
  return { authn: { token, anonymous: o.anonymousAuth }, authorizer };
}

/** Adapts the pod controller to what the kubelet API reads. */
export function podSourceFor(pods: PodController, rootDir: string): PodSource {
  return {
    listPods: () => pods.pods(),
    findContainer(namespace, podName, container): ContainerTarget | undefined {
      const found = pods.lookup(`${namespace}/${podName}`);
      const c = found?.worker?.container(container);
      if (!found?.worker || !c) return undefined;
      const m = found.pod.metadata!;
      return {
        logDir: containerLogDir(rootDir, { namespace: m.namespace!, name: m.name!, uid: m.uid! }, container),
        restartCount: c.restartCount,
        running: c.running,
        providerName: found.worker.provider.name,
        exec: found.worker.provider.exec !== undefined,
        exited: c.exited,
      };
    },
  };
}

/** Starts the HTTPS API and the healthz endpoint; resolves with the bound port. */
export async function startKubeletApi(o: NodeletOptions, log: Logger, pods: PodController, nodeIP: string, clients?: KubeClients): Promise<{ port: number; close(): Promise<void> }> {
  const serving = await loadServingCert({ certFile: o.tlsCertFile, keyFile: o.tlsPrivateKeyFile, certDir: o.certDir, nodeName: o.nodeName, addresses: [nodeIP, '127.0.0.1'] });
  const local = !o.clientCAFile && !o.kubeconfig ? ensureLocalClient(o.certDir) : undefined;
  if (!o.clientCAFile && !local) log.warn('no --client-ca-file: client certificates are refused (401); only bearer tokens or anonymous callers can be served');
  const ca = o.clientCAFile ? readFileSync(o.clientCAFile) : local ? localClientCa(local) : '';
  const stats = new StatsCollector(o.nodeName, pods, log.child({ component: 'stats' }));
  setRunningCounts(() => runningCounts(pods));
  nodeNameGauge.set({ node: o.nodeName }, 1);
  const server = createKubeletServer({
    nodeName: o.nodeName, log: log as unknown as PinoLogger /* the server adds component=kubelet-api */, pods: podSourceFor(pods, o.rootDir),
    tls: { cert: serving.cert, key: serving.key, ca }, address: o.address, port: o.port,
    healthzAddress: o.healthzBindAddress, healthzPort: o.healthzPort, logsRoot: podLogsRoot(o.rootDir),
    ...apiAuth(o, clients, log),
    stats: { snapshot: () => stats.snapshot(), metrics: metricsText, configz: () => kubeletConfigOf(o) },
  });
  const bound = await server.start();
  log.info({ port: bound.port, healthzPort: bound.healthzPort }, 'kubelet API listening');
  if (local) {
    const curl = `curl --cacert ${serving.certFile} --cert ${local.certFile} --key ${local.keyFile} https://127.0.0.1:${bound.port}`;
    log.info({ pods: `${curl}/pods`, logs: `${curl}/containerLogs/<namespace>/<pod>/<container>` }, 'standalone mode: read the kubelet API with this local client certificate');
  }
  return { port: bound.port, close: () => server.close() };
}
