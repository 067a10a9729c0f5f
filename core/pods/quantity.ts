/**
 * Resource quantities as plain numbers for admission and limits: cpu in
 * millicores, everything else in whole base units — both rounded up like
 * upstream's `MilliValue()` / `Value()`, on the exact parser of core/kube/quantity.ts.
 */
import { parseQuantity as parseExact, quantityMilliValue, quantityValue } from '../kube/quantity.ts';

function exact(q: string | number | undefined): ReturnType<typeof parseExact> | undefined {
  if (q === undefined) return undefined;
  try { return parseExact(String(q)); } catch { return undefined; }
}

/** A quantity (`128Mi`, `1.5`, `1e3`) in whole base units (rounded up); 0 when absent, NaN when invalid. */
export function parseQuantity(q: string | number | undefined): number {
  if (q === undefined) return 0;
  const v = exact(q);
  return v ? Number(quantityValue(v)) : NaN;
}

/** A cpu quantity in millicores (rounded up); 0 when absent, NaN when invalid. */
export function milliCpu(q: string | number | undefined): number {
  if (q === undefined) return 0;
  const v = exact(q);
  return v ? Number(quantityMilliValue(v)) : NaN;
}
