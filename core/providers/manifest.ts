/**
 * A provider package's manifest: the `nodelet` field of its package.json.
 *
 *   { "name": "@nodelet/provider-js", "nodelet": { "apiVersion": "nodelet.dev/v1",
 *     "entry": "./src/index.ts", "handlers": ["js"] } }
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeletError } from '../errors/index.ts';

/** A validated provider manifest. */
export interface ProviderManifest {
  /** The package directory (as found under a providers dir). */
  readonly dir: string;
  /** The package's `name` (identifies "the same package" across directories). */
  readonly packageName: string;
  readonly version?: string;
  /** `nodelet.apiVersion`, e.g. `nodelet.dev/v1`. */
  readonly apiVersion: string;
  /** `nodelet.entry`, relative to `dir`. */
  readonly entry: string;
  /** `nodelet.handlers`: the RuntimeClass handlers the provider serves. */
  readonly handlers: readonly string[];
}

/** A RuntimeClass handler: a DNS label (as node.k8s.io validates `handler`). */
export const HANDLER_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Reads and validates `<dir>/package.json`; throws NDL_PROVIDER_MANIFEST or NDL_PROVIDER_MANIFEST_INVALID. */
export function readManifest(dir: string): ProviderManifest {
  const file = join(dir, 'package.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw nodeletError('NDL_PROVIDER_MANIFEST', `${file}: ${(e as NodeJS.ErrnoException).code ?? oneLine(String(e))}`);
  }
  let pkg: unknown;
  try {
    pkg = JSON.parse(text);
  } catch (e) {
    throw nodeletError('NDL_PROVIDER_MANIFEST_INVALID', `${file} is not valid JSON: ${oneLine((e as Error).message)}`);
  }
  if (typeof pkg !== 'object' || pkg === null || Array.isArray(pkg)) throw invalid(file, 'package.json must hold an object');
  const p = pkg as Record<string, unknown>;
  if (p.nodelet === undefined) throw nodeletError('NDL_PROVIDER_MANIFEST', `${file} has no "nodelet" field`);
  return validate(dir, file, p);
}

function validate(dir: string, file: string, p: Record<string, unknown>): ProviderManifest {
  const problems: string[] = [];
  if (typeof p.name !== 'string' || p.name === '') problems.push('"name" must be a non-empty string');
  const n = p.nodelet as Record<string, unknown>;
  if (typeof n !== 'object' || n === null || Array.isArray(n)) throw invalid(file, '"nodelet" must be an object');
  if (typeof n.apiVersion !== 'string' || n.apiVersion === '') problems.push('"nodelet.apiVersion" must be a non-empty string');
  if (typeof n.entry !== 'string' || n.entry === '') problems.push('"nodelet.entry" must be a non-empty string');
  const handlers = n.handlers;
  if (!Array.isArray(handlers) || handlers.length === 0) problems.push('"nodelet.handlers" must be a non-empty list');
  else for (const h of handlers) if (typeof h !== 'string' || !HANDLER_PATTERN.test(h)) problems.push(`handler ${JSON.stringify(h)} is not a DNS label`);
  if (problems.length) throw invalid(file, problems.join('; '));
  return {
    dir,
    packageName: p.name as string,
    version: typeof p.version === 'string' ? p.version : undefined,
    apiVersion: n.apiVersion as string,
    entry: n.entry as string,
    handlers: [...(handlers as string[])],
  };
}

function invalid(file: string, why: string) {
  return nodeletError('NDL_PROVIDER_MANIFEST_INVALID', `${file}: ${why}`);
}
