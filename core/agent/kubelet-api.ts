/**
 * Serves the kubelet API for the pod controller: TLS material from the flags
 * (or a self-signed serving cert in `--cert-dir`), the client CA from
 * `--client-ca-file` (without one, every caller is refused: nodelet never
 * answers unauthenticated callers).
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
export async function startKubeletApi(o: NodeletOptions, log: Logger, pods: PodController, nodeIP: string): Promise<{ port: number; close(): Promise<void> }> {
  const serving = await loadServingCert({ certFile: o.tlsCertFile, keyFile: o.tlsPrivateKeyFile, certDir: o.certDir, nodeName: o.nodeName, addresses: [nodeIP, '127.0.0.1'] });
  const local = !o.clientCAFile && !o.kubeconfig ? ensureLocalClient(o.certDir) : undefined;
  if (!o.clientCAFile && !local) log.warn('no --client-ca-file: the kubelet API will refuse every request (401)');
  const ca = o.clientCAFile ? readFileSync(o.clientCAFile) : local ? localClientCa(local) : '';
  const server = createKubeletServer({
    nodeName: o.nodeName, log: log as unknown as PinoLogger /* the server adds component=kubelet-api */, pods: podSourceFor(pods, o.rootDir),
    tls: { cert: serving.cert, key: serving.key, ca }, address: o.address, port: o.port,
    healthzAddress: o.healthzBindAddress, healthzPort: o.healthzPort, logsRoot: podLogsRoot(o.rootDir),
  });
  const bound = await server.start();
  log.info({ port: bound.port, healthzPort: bound.healthzPort }, 'kubelet API listening');
  if (local) {
    const curl = `curl --cacert ${serving.certFile} --cert ${local.certFile} --key ${local.keyFile} https://127.0.0.1:${bound.port}`;
    log.info({ pods: `${curl}/pods`, logs: `${curl}/containerLogs/<namespace>/<pod>/<container>` }, 'standalone mode: read the kubelet API with this local client certificate');
  }
  return { port: bound.port, close: () => server.close() };
}
