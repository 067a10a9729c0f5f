import { describe, expect, it } from 'vitest';
import { parseBool, parseIntIn, parseVerbosity, quantityToBytes } from '../../../core/config/values.ts';

describe('values', () => {
  it.each([
    ['1024', 1024],
    ['10Mi', 10 * 2 ** 20],
    ['500Ki', 500 * 1024],
    ['1Gi', 2 ** 30],
    ['2k', 2000],
    ['1.5Mi', 1.5 * 2 ** 20],
  ])('quantity %s = %d bytes', (q, bytes) => expect(quantityToBytes(q)).toBe(bytes));
  it.each(['10MB', 'Mi', '-1Mi', '1 Mi', ''])('rejects quantity %j', (q) => expect(() => quantityToBytes(q)).toThrow(/quantity/));
  it('parses Go booleans only', () => {
    expect(['1', 't', 'T', 'TRUE', 'true', 'True'].map(parseBool)).toEqual(Array(6).fill(true));
    expect(['0', 'f', 'F', 'FALSE', 'false', 'False'].map(parseBool)).toEqual(Array(6).fill(false));
    expect(() => parseBool('yes')).toThrow('must be true or false');
  });
  it('bounds integers', () => {
    expect(parseIntIn(' 7 ', 0, 10)).toBe(7);
    expect(() => parseIntIn('11', 0, 10)).toThrow('must be between 0 and 10');
    expect(() => parseIntIn('0x10', 0, 100)).toThrow('must be an integer');
    expect(() => parseIntIn('99999999999999999999', 0, Number.MAX_SAFE_INTEGER)).toThrow('must be an integer');
  });
  it('maps klog verbosity', () => {
    expect(['0', '1', '2', '3', '4', '10'].map(parseVerbosity)).toEqual(['info', 'info', 'debug', 'debug', 'trace', 'trace']);
    expect(parseVerbosity('DEBUG')).toBe('debug');
  });
});
