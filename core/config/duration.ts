/**
 * Go `time.Duration` strings ("10s", "1m30s", "1.5h", "300ms", "0"), as
 * upstream's KubeletConfiguration and duration flags use them.
 */
import { nodeletError } from '../errors/index.ts';

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /^(\d*)(?:\.(\d*))?([^\d.]*)/;

/**
 * Parses a Go duration string into milliseconds (fractional for sub-ms units).
 * Throws an Error naming the problem for anything `time.ParseDuration` rejects.
 */
export function parseGoDuration(text: string): number {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest[0] === '-' ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid duration "${text}"`);
  let total = 0;
  while (rest !== '') {
    const m = PART.exec(rest);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid duration "${text}"`);
    if (m[3] === '') throw nodeletError('NDL_CONFIG_INVALID_VALUE', `missing unit in duration "${text}" (use ns, us, ms, s, m, h)`);
    const unit = UNIT_MS[m[3]!];
    if (unit === undefined) {
      throw nodeletError('NDL_CONFIG_INVALID_VALUE', `unknown unit "${m[3]}" in duration "${text}" (use ns, us, ms, s, m, h)`);
    }
    total += Number(`${m[1] || '0'}.${m[2] || '0'}`) * unit;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/** Formats milliseconds the way Go prints a Duration ("1m30s", "300ms", "0s"). */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${+(rest / 1000).toFixed(3)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}
