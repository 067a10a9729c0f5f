/**
 * The built-in WASI provider, wired in directly through the plugin-api v1
 * interface (loading providers from a directory comes with core/providers).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger, Provider } from '@nodelet/plugin-api/v1';
import { createProvider } from '@nodelet/provider-wasi';
import type { NodeletOptions } from '../config/options.ts';
import type { NodeImageService } from '../images/local-images.ts';

/** Creates and initialises the WASI provider. */
export async function loadBuiltinProvider(o: NodeletOptions, log: Logger, images: NodeImageService, signal: AbortSignal): Promise<Provider> {
  const provider: Provider = createProvider();
  const rootDir = join(o.rootDir, 'providers-data', provider.name);
  mkdirSync(rootDir, { recursive: true, mode: 0o750 });
  await provider.init?.({ log: log.child({ provider: provider.name }), rootDir, images, signal });
  return provider;
}
