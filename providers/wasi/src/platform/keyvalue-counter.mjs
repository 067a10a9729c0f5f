// How `increment`'s counters are kept: as their decimal text, as Redis' INCRBY keeps them, so a
// counter reads the same on every backend. Plain JavaScript, typed with JSDoc.
import { KeyValueError } from './keyvalue-error.mjs';

/** A counter's value as stored: its decimal text. @param {bigint} n */
export const counterBytes = (n) => new TextEncoder().encode(n.toString());

/**
 * The counter held in `value` (absent: 0). Throws when the value is not a decimal integer.
 * @param {string} key @param {Uint8Array | undefined} value @returns {bigint}
 */
export function counterOf(key, value) {
  if (value === undefined) return 0n;
  const text = new TextDecoder().decode(value);
  if (!/^-?\d{1,19}$/.test(text)) throw new KeyValueError('other', `the value of ${JSON.stringify(key)} is not an integer`);
  return BigInt(text);
}
