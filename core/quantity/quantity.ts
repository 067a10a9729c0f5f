/**
 * Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`) as exact
 * fractions, with upstream's rounding: `value()` and `milliValue()` round up.
 * `quantityUnits` / `milliCpu` give plain numbers for admission and limits.
 */
import { nodeletError } from '../errors/index.ts';

/** A parsed quantity: `num / den`, `den > 0`. */
export interface Quantity {
  readonly num: bigint;
  readonly den: bigint;
}

const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const RE = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Parses a quantity; throws NDL_QUANTITY with detail `quantities must match the regular expression ...` like upstream on bad input. */
export function parseQuantity(s: string): Quantity {
  const m = RE.exec(s.trim());
  if (!m)
    throw nodeletError('NDL_QUANTITY', `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(s)}`);
  const [intPart, fracPart = ''] = m[1]!.split('.');
  let num = BigInt((intPart === '' || intPart === '+' || intPart === '-' ? intPart + '0' : intPart) + fracPart);
  let den = pow10(fracPart.length);
  const suffix = m[2] ?? '';
  if (suffix in BINARY) num *= BINARY[suffix]!;
  else {
    const exp = suffix in DECIMAL ? DECIMAL[suffix]! : Number(suffix.slice(1));
    if (exp >= 0) num *= pow10(exp);
    else den *= pow10(-exp);
  }
  return { num, den };
}

/** ceil(a / b) for b > 0. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return a >= 0n ? (a + b - 1n) / b : a / b;
}

/** Upstream `Quantity.Value()`: whole units, rounded up. */
export function quantityValue(q: Quantity): bigint {
  return ceilDiv(q.num, q.den);
}

/** Upstream `Quantity.MilliValue()`: thousandths, rounded up. */
export function quantityMilliValue(q: Quantity): bigint {
  return ceilDiv(q.num * 1000n, q.den);
}

function lenient(q: string | number | undefined): Quantity | undefined {
  if (q === undefined) return undefined;
  try {
    return parseQuantity(String(q));
  } catch {
    return undefined;
  }
}

/** A quantity (`128Mi`, `1.5`, `1e3`) in whole base units (rounded up); 0 when absent, NaN when invalid. */
export function quantityUnits(q: string | number | undefined): number {
  if (q === undefined) return 0;
  const v = lenient(q);
  return v ? Number(quantityValue(v)) : NaN;
}

/** A cpu quantity in millicores (rounded up); 0 when absent, NaN when invalid. */
export function milliCpu(q: string | number | undefined): number {
  if (q === undefined) return 0;
  const v = lenient(q);
  return v ? Number(quantityMilliValue(v)) : NaN;
}
