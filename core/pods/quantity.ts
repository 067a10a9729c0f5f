/** Kubernetes resource quantities as numbers: cpu in millicores, everything else in base units. */

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** Parses a quantity (`500m`, `1.5`, `128Mi`, `1e3`) into its value in base units; NaN when invalid. */
export function parseQuantity(q: string | number | undefined): number {
  if (q === undefined) return 0;
  if (typeof q === 'number') return q;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(q.trim());
  if (!m || !(m[2]! in SUFFIX)) return NaN;
  return Number(m[1]) * SUFFIX[m[2]!]!;
}

/** cpu quantity → millicores (rounded up like upstream's MilliValue). */
export function milliCpu(q: string | number | undefined): number {
  return Math.ceil(parseQuantity(q) * 1000 - 1e-9);
}
