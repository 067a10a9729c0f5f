/**
 * Taint syntax for `--register-with-taints` (`key=value:Effect` or
 * `key:Effect`, comma-separated), as upstream pkg/util/taints parses it, and
 * the taint nodelet adds by default so ordinary pods stay off its node.
 */
import { nodeletError } from '../errors/index.ts';
import type { Taint } from '@nodelet/plugin-api/v1';
import { labelKeyError, labelValueError } from './labels.ts';

export type { Taint };

const EFFECTS: readonly Taint['effect'][] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** The taint nodelet registers with unless `--default-taint=false`. */
export const NODELET_DEFAULT_TAINT: Taint = Object.freeze({
  key: 'kubernetes.io/arch',
  value: 'wasm32-wasi',
  effect: 'NoSchedule',
});

/** Parses one `key[=value]:Effect`. Throws an Error with a one-line reason. */
export function parseTaint(spec: string): Taint {
  const parts = spec.split(':');
  if (parts.length !== 2) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid taint "${spec}": expected key=value:Effect`);
  const [kv, effect] = parts as [string, string];
  if (!EFFECTS.includes(effect as Taint['effect'])) {
    throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid taint "${spec}": effect must be one of ${EFFECTS.join(', ')}`);
  }
  const kvParts = kv.split('=');
  if (kvParts.length > 2) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid taint "${spec}": expected key=value:Effect`);
  const key = kvParts[0]!;
  const value = kvParts[1];
  const err = labelKeyError(key) ?? (value === undefined ? undefined : labelValueError(value));
  if (err) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid taint "${spec}": ${err}`);
  return value === undefined || value === '' ? { key, effect: effect as Taint['effect'] } : { key, value, effect: effect as Taint['effect'] };
}

/** Parses a comma-separated list of taints (empty string → none). */
export function parseTaints(text: string): Taint[] {
  const taints = text
    .split(',')
    .filter((s) => s.trim() !== '')
    .map((s) => parseTaint(s.trim()));
  const seen = new Set<string>();
  for (const t of taints) {
    const id = `${t.key}:${t.effect}`;
    if (seen.has(id)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `duplicate taint "${id}"`);
    seen.add(id);
  }
  return taints;
}

/** The taints a node registers with: the configured ones plus, if enabled, nodelet's default. */
export function registrationTaints(opts: { registerWithTaints: readonly Taint[]; defaultTaint: boolean }): Taint[] {
  const taints = [...opts.registerWithTaints];
  const d = NODELET_DEFAULT_TAINT;
  if (opts.defaultTaint && !taints.some((t) => t.key === d.key && t.effect === d.effect)) taints.push({ ...d });
  return taints;
}
