/**
 * Everything the agent needs from the providers, in one call: load them from
 * `--providers-dir`, merge their node contributions, watch RuntimeClasses and
 * build the pod router; report failed packages as Node events.
 */
import { join } from 'node:path';
import { isPodProvider, type AnyProvider, type Logger, type NodeContribution, type Provider, type ServiceResolver } from '@nodelet/plugin-api/v1';
import type { NodeletOptions } from '../config/index.ts';
import { nodeletError } from '../errors/index.ts';
import type { Events } from '../events/index.ts';
import type { NodeImageService } from '../images/index.ts';
import type { KubeClients } from '../kube/index.ts';
import type { ProviderRouter } from '../pods/index.ts';
import { describeConflict, mergeContributions, type ContributionConflict } from './contributions.ts';
import { loadProviders, type ProviderFailure } from './provider-loader.ts';
import type { ServedProvider } from './provider-shape.ts';
import { controllerRouter, createRuntimeClassRouter } from './runtime-class-router.ts';
import { standaloneRuntimeClasses, watchRuntimeClasses } from './runtime-classes.ts';

/** The loaded providers and what the agent derives from them. */
export interface HostedProviders {
  readonly providers: readonly AnyProvider[];
  /** The provider that names the node's os/arch/runtime: the default provider, else the first loaded. */
  readonly primary: Provider;
  readonly route: ProviderRouter;
  readonly contribution: NodeContribution;
  readonly conflicts: readonly ContributionConflict[];
  readonly failures: readonly ProviderFailure[];
  /** Stops the RuntimeClass watch and shuts every provider down. */
  stop(): Promise<void>;
}

/** Loads the providers and builds the router; throws only when no container provider loaded at all. */
export async function startProviders(
  o: NodeletOptions,
  log: Logger,
  images: NodeImageService,
  signal: AbortSignal,
  clients?: KubeClients,
  services?: ServiceResolver,
): Promise<HostedProviders> {
  const plog = log.child({ component: 'providers' });
  const set = await loadProviders({
    dirs: o.providersDir,
    dataRoot: join(o.rootDir, 'providers-data'),
    images,
    signal,
    log: plog,
    configs: o.providerConfig,
    services,
  });
  const providers = set.providers.map((p) => p.provider);
  const runners = providers.filter((p): p is ServedProvider & Provider => !isPodProvider(p));
  const primary = runners.find((p) => p.name === o.defaultProvider) ?? runners[0];
  if (!primary) {
    const why = set.failures.map((f) => f.reason).join('; ') || `no provider packages in ${o.providersDir.join(', ')}`;
    throw nodeletError('NDL_PROVIDER_INIT', `no provider could be loaded: ${why}`);
  }
  if (primary.name !== o.defaultProvider)
    plog.warn({ defaultProvider: o.defaultProvider, using: primary.name }, 'default provider not loaded: pods without a RuntimeClass will be rejected');
  const merged = mergeContributions(providers);
  for (const c of merged.conflicts) plog.warn({ field: c.field, key: c.key }, `conflicting node contribution: ${describeConflict(c)}`);
  const classes = clients ? await watchRuntimeClasses(clients, plog) : standaloneRuntimeClasses();
  const route = controllerRouter(createRuntimeClassRouter({ providers, defaultProvider: o.defaultProvider, classes }));
  return {
    providers,
    primary,
    route,
    contribution: merged.contribution,
    conflicts: merged.conflicts,
    failures: set.failures,
    async stop() {
      classes.stop();
      await Promise.all(
        providers.map((p) => Promise.resolve(p.shutdown?.()).catch((e) => plog.warn({ provider: p.name, err: String(e) }, 'provider shutdown failed'))),
      );
    },
  };
}

/** Records one `ProviderLoadFailed` Warning event on the Node per skipped provider package. */
export function reportProviderFailures(events: Events, nodeName: string, failures: readonly ProviderFailure[]): void {
  for (const f of failures) {
    events.emit({ kind: 'Node', namespace: 'default', name: nodeName, uid: nodeName }, 'Warning', 'ProviderLoadFailed', `${f.code}: ${f.reason}`);
  }
}
