/**
 * `--config`: reads a KubeletConfiguration file (kubelet.config.k8s.io/v1beta1)
 * and maps the fields nodelet supports onto settings. Like upstream, unknown
 * or unsupported fields do not fail the load; they come back as one warning.
 * Relative paths are resolved against the file's directory, as upstream does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { errorDetail, nodeletError } from '../errors/index.ts';
import { scalar, type FieldApply } from './config-values.ts';
import { FLAGS } from './flag-table.ts';
import type { Settings } from './options.ts';

const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
const KUBELET_CONFIG_KIND = 'KubeletConfiguration';

/** Settings read from a file, plus warnings for the caller to log. */
export interface KubeletConfigResult {
  settings: Settings;
  warnings: string[];
}

/** The supported fields, by dotted path: the flag table's `config` fields, each read as its flag's value unless it says otherwise. */
const FIELDS: Readonly<Record<string, FieldApply>> = Object.fromEntries(
  FLAGS.flatMap((f) => (f.config === undefined ? [] : [[f.config, f.fromConfig ?? ((s: Settings, v: unknown) => f.apply(s, scalar(v)))]])),
);

/** Flattens nested mappings into dotted paths; supported fields, lists and scalars are leaves. */
function leaves(obj: Record<string, unknown>, prefix = ''): [string, unknown][] {
  return Object.entries(obj).flatMap(([k, v]): [string, unknown][] => {
    const key = prefix + k;
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && !(key in FIELDS)) {
      return leaves(v as Record<string, unknown>, `${key}.`);
    }
    return [[key, v]];
  });
}

/** Maps a parsed KubeletConfiguration document; `file` names it in errors and warnings. */
export function mapKubeletConfig(doc: unknown, file: string): KubeletConfigResult {
  const fail = (detail: string) => nodeletError('NDL_CONFIG_FILE', `${file}: ${detail}`);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw fail('not a YAML mapping');
  const { apiVersion, kind, ...rest } = doc as Record<string, unknown>;
  if (apiVersion !== KUBELET_CONFIG_API_VERSION) {
    throw fail(`apiVersion "${String(apiVersion ?? '')}" is not supported (want ${KUBELET_CONFIG_API_VERSION})`);
  }
  if (kind !== KUBELET_CONFIG_KIND) throw fail(`kind "${String(kind ?? '')}" is not ${KUBELET_CONFIG_KIND}`);
  const settings: Settings = {};
  const unsupported: string[] = [];
  const dir = path.dirname(file);
  for (const [key, value] of leaves(rest)) {
    const apply = FIELDS[key];
    if (!apply) {
      unsupported.push(key);
      continue;
    }
    if (value === null) continue;
    try {
      apply(settings, value, dir);
    } catch (e) {
      throw fail(`${key}: ${JSON.stringify(value)} ${errorDetail(e)}`);
    }
  }
  const warnings = unsupported.length === 0 ? [] : [`KubeletConfiguration ${file}: nodelet ignores unsupported fields: ${unsupported.join(', ')}`];
  return { settings, warnings };
}

/** Reads and maps a KubeletConfiguration file; throws NDL_CONFIG_FILE naming the file and problem. */
export function loadKubeletConfig(file: string): KubeletConfigResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw nodeletError('NDL_CONFIG_FILE', `${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, e);
  }
  let doc: unknown;
  try {
    // Loaded on use: `nodelet --help` and runs without --config skip yaml's ~80 modules.
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    doc = parse(text);
  } catch (e) {
    throw nodeletError('NDL_CONFIG_FILE', `${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`, e);
  }
  return mapKubeletConfig(doc, file);
}
