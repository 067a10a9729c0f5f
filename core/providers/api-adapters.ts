/**
 * The apiVersion compatibility seam: a table from the `apiVersion` a provider
 * declares to an adapter that turns what its factory returned into a current
 * (v1) provider. v1 passes through; a future v2 core adds `nodelet.dev/v1 →
 * wrapV1` here and nowhere else (no `if` on versions in the loader).
 */
import { API_VERSION } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import type { ProviderManifest } from './manifest.ts';

/** Wraps a provider written against an older API into the current interface (shape is checked afterwards). */
export type ApiAdapter = (provider: unknown, manifest: ProviderManifest) => unknown;

/** The API versions this nodelet accepts, with their adapters. */
export const API_ADAPTERS: ReadonlyMap<string, ApiAdapter> = new Map<string, ApiAdapter>([[API_VERSION, (p) => p]]);

/** The adapter for `manifest.apiVersion`; throws NDL_PROVIDER_API_VERSION when there is none. */
export function adapterFor(manifest: ProviderManifest, adapters: ReadonlyMap<string, ApiAdapter> = API_ADAPTERS): ApiAdapter {
  const a = adapters.get(manifest.apiVersion);
  if (!a)
    throw nodeletError(
      'NDL_PROVIDER_API_VERSION',
      `${manifest.packageName} declares apiVersion "${manifest.apiVersion}"; this nodelet supports ${[...adapters.keys()].join(', ')}`,
    );
  return a;
}
