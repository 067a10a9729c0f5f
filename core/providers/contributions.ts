/**
 * Merges the Node contributions of all loaded providers. The first provider
 * (in load order) keeps a contested key; every disagreement is returned and
 * logged as a conflict instead of being silently overwritten. Two providers
 * contributing the same value is not a conflict.
 */
import type { AnyProvider, NodeConditionContribution, NodeContribution, Taint } from '@nodelet/plugin-api/v1';

/** A key two providers set to different values. */
export interface ContributionConflict {
  readonly field: 'labels' | 'taints' | 'capacity' | 'allocatable' | 'conditions' | 'node()';
  readonly key: string;
  /** The provider whose value was kept, and its value. */
  readonly kept: { readonly provider: string; readonly value: string };
  /** The provider whose value was dropped, and its value. */
  readonly dropped: { readonly provider: string; readonly value: string };
}

type MapField = 'labels' | 'capacity' | 'allocatable';

/** Merges `providers`' `node()` contributions; a throwing `node()` is reported as a conflict with field `node()`. */
export function mergeContributions(providers: readonly AnyProvider[]): { contribution: NodeContribution; conflicts: ContributionConflict[] } {
  const conflicts: ContributionConflict[] = [];
  const maps: Record<MapField, Map<string, [string, string]>> = { labels: new Map(), capacity: new Map(), allocatable: new Map() };
  const taints = new Map<string, [string, Taint]>();
  const conditions = new Map<string, [string, NodeConditionContribution]>();
  for (const p of providers) {
    let c: NodeContribution;
    try {
      c = p.node?.() ?? {};
    } catch (e) {
      conflicts.push({
        field: 'node()',
        key: p.name,
        kept: { provider: p.name, value: '' },
        dropped: { provider: p.name, value: (e as Error)?.message ?? String(e) },
      });
      continue;
    }
    for (const f of ['labels', 'capacity', 'allocatable'] as const) {
      for (const [k, v] of Object.entries(c[f] ?? {})) put(maps[f], f, k, v, v, p.name, conflicts);
    }
    for (const t of c.taints ?? []) put(taints, 'taints', `${t.key}:${t.effect}`, t, t.value ?? '', p.name, conflicts, (x) => x.value ?? '');
    for (const cond of c.conditions ?? []) put(conditions, 'conditions', cond.type, cond, cond.status, p.name, conflicts, (x) => x.status);
  }
  const obj = (m: Map<string, [string, string]>) => Object.fromEntries([...m].map(([k, [, v]]) => [k, v]));
  const contribution: NodeContribution = {
    labels: obj(maps.labels),
    capacity: obj(maps.capacity),
    allocatable: obj(maps.allocatable),
    taints: [...taints.values()].map(([, t]) => t),
    conditions: [...conditions.values()].map(([, c]) => c),
  };
  return { contribution, conflicts };
}

function put<T>(
  m: Map<string, [string, T]>,
  field: ContributionConflict['field'],
  key: string,
  value: T,
  text: string,
  provider: string,
  conflicts: ContributionConflict[],
  show: (v: T) => string = (v) => String(v),
): void {
  const had = m.get(key);
  if (!had) {
    m.set(key, [provider, value]);
    return;
  }
  if (show(had[1]) === text) return;
  conflicts.push({ field, key, kept: { provider: had[0], value: show(had[1]) }, dropped: { provider, value: text } });
}

/** One line per conflict, for the log. */
export function describeConflict(c: ContributionConflict): string {
  return `${c.field} ${c.key}: ${c.dropped.provider}'s "${c.dropped.value}" dropped, ${c.kept.provider}'s "${c.kept.value}" kept`;
}
