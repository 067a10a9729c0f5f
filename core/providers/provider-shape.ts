/**
 * Turns an imported provider module into a checked provider: finds the
 * factory (default export, `createProvider`, or a provider object), calls it
 * once, applies the apiVersion adapter and checks the result's shape.
 */
import { API_VERSION, type AnyProvider } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import type { ApiAdapter } from './api-adapters.ts';
import { HANDLER_PATTERN, type ProviderManifest } from './manifest.ts';

const OPTIONAL_METHODS = ['validateConfig', 'init', 'node', 'shutdown', 'exec', 'attach', 'portForward', 'stats'] as const;
const IDENTITY = ['architecture', 'os', 'runtimeVersion'] as const;

/** A provider as core serves it: with the handlers it serves (its manifest's, when the object leaves them out). */
export type ServedProvider = AnyProvider & { readonly handlers: readonly string[] };

/**
 * Creates the provider a module exports; throws NDL_PROVIDER_SHAPE (or NDL_PROVIDER_INIT when the factory throws).
 * The package's manifest is where its handlers are declared: a provider object without `handlers`
 * gets the manifest's (an own property set here, at the boundary).
 */
export async function providerFromModule(mod: Record<string, unknown>, m: ProviderManifest, adapt: ApiAdapter): Promise<ServedProvider> {
  const made = await instantiate(mod, m);
  const provider = adapt(made, m);
  const problems = shapeProblems(provider, m);
  if (problems.length) throw nodeletError('NDL_PROVIDER_SHAPE', `${m.packageName}: ${problems.join('; ')}`);
  const p = provider as AnyProvider;
  if (p.handlers === undefined) Object.defineProperty(p, 'handlers', { value: Object.freeze([...m.handlers]), enumerable: true });
  return p as ServedProvider;
}

async function instantiate(mod: Record<string, unknown>, m: ProviderManifest): Promise<unknown> {
  const factory = typeof mod.default === 'function' ? mod.default : typeof mod.createProvider === 'function' ? mod.createProvider : undefined;
  if (!factory) {
    if (typeof mod.default === 'object' && mod.default !== null) return mod.default;
    throw nodeletError(
      'NDL_PROVIDER_SHAPE',
      `${m.packageName}: the entry exports no default factory, no createProvider function and no default provider object`,
    );
  }
  try {
    return await (factory as () => unknown)();
  } catch (e) {
    throw nodeletError('NDL_PROVIDER_INIT', `${m.packageName}: the provider factory threw: ${(e as Error)?.message ?? String(e)}`, e);
  }
}

/** Everything wrong with `p` as a v1 provider for manifest `m` (empty when it is fine). */
function shapeProblems(p: unknown, m: ProviderManifest): string[] {
  if (typeof p !== 'object' || p === null) return [`the factory returned ${p === null ? 'null' : typeof p}, not a provider object`];
  const o = p as Record<string, unknown>;
  const out: string[] = [];
  if (typeof o.name !== 'string' || !HANDLER_PATTERN.test(o.name)) out.push('name must be a DNS label');
  if (o.apiVersion !== API_VERSION) out.push(`apiVersion is ${JSON.stringify(o.apiVersion)}, expected "${API_VERSION}"`);
  for (const k of IDENTITY) if (typeof o[k] !== 'string' || o[k] === '') out.push(`${k} must be a non-empty string`);
  const handlers = o.handlers;
  if (handlers === undefined) {
    // served from the manifest
  } else if (!Array.isArray(handlers) || handlers.length === 0 || handlers.some((h) => typeof h !== 'string'))
    out.push('handlers must be a non-empty list of strings when given (or left out: the manifest declares them)');
  else if ([...handlers].sort().join(',') !== [...m.handlers].sort().join(','))
    out.push(`handlers [${handlers.join(', ')}] differ from the manifest's [${m.handlers.join(', ')}]`);
  for (const k of OPTIONAL_METHODS) if (o[k] !== undefined && typeof o[k] !== 'function') out.push(`${k} must be a function when present`);
  out.push(...runtimeProblems(o));
  return out;
}

function runtimeProblems(o: Record<string, unknown>): string[] {
  if (o.pods === undefined) {
    return (['pullImage', 'startContainer'] as const)
      .filter((k) => typeof o[k] !== 'function')
      .map((k) => `${k} is not a function (and there is no "pods" lifecycle)`);
  }
  const pods = o.pods as Record<string, unknown> | null;
  if (typeof pods !== 'object' || pods === null) return ['pods must be an object'];
  const out = (['createPod', 'deletePod', 'getPodStatus'] as const).filter((k) => typeof pods[k] !== 'function').map((k) => `pods.${k} is not a function`);
  for (const k of ['updatePod', 'getPods'] as const)
    if (pods[k] !== undefined && typeof pods[k] !== 'function') out.push(`pods.${k} must be a function when present`);
  if (o.pullImage !== undefined || o.startContainer !== undefined) out.push('a pod provider must not also define pullImage/startContainer');
  return out;
}
