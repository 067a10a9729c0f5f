/**
 * Readers of KubeletConfiguration values (a YAML document's scalars, lists and mappings) for
 * the flag table's `fromConfig` mappings and kubelet-config.ts: the file holds typed YAML where
 * a flag holds text. Each throws NDL_CONFIG_INVALID_VALUE whose detail is the reason.
 */
import path from 'node:path';
import { nodeletError } from '../errors/index.ts';
import type { Settings } from './options.ts';
import { parseTaint } from './taints.ts';

/** Sets a setting from a KubeletConfiguration field's value; `dir` is the file's directory. */
export type FieldApply = (s: Settings, v: unknown, dir: string) => void;

/** A scalar's text (a YAML number or boolean as written). */
export function scalar(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a scalar value');
}

/** A path resolved against the file's directory, as upstream does; '' is none. */
export function filePath(v: unknown, dir: string): string | undefined {
  const p = scalar(v);
  return p === '' ? undefined : path.resolve(dir, p);
}

/** `registerWithTaints`: a list of {key, value, effect}. */
export function taintList(v: unknown): Settings['registerWithTaints'] {
  if (!Array.isArray(v)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a list of {key, value, effect}');
  return v.map((t: unknown) => {
    if (typeof t !== 'object' || t === null) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a list of {key, value, effect}');
    const { key, value, effect } = t as Record<string, unknown>;
    const kv = value === undefined || value === null ? scalar(key) : `${scalar(key)}=${scalar(value)}`;
    return parseTaint(`${kv}:${scalar(effect)}`);
  });
}

/** A mapping of scalars (`evictionHard: {memory.available: 100Mi}`). */
export function scalarMap(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be a mapping of signal to value');
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, scalar(x)]));
}
