/** Small statistics for benchmark samples. */

/** The p-th percentile (0-100) of `xs` by nearest rank; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!;
}

/** The median (average of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** p50/p90/p99/max of a sample, rounded to 0.1. */
export function summary(xs: readonly number[]): { n: number; p50: number; p90: number; p99: number; max: number } {
  const r = (v: number) => Math.round(v * 10) / 10;
  return { n: xs.length, p50: r(percentile(xs, 50)), p90: r(percentile(xs, 90)), p99: r(percentile(xs, 99)), max: r(percentile(xs, 100)) };
}

/** a / b rounded to 0.01 (NaN-safe). */
export function ratio(a: number, b: number): number {
  return b > 0 && Number.isFinite(a) ? Math.round((a / b) * 100) / 100 : Number.NaN;
}
