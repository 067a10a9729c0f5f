import { describe, expect, it } from 'vitest';
import { formatGoDuration, parseGoDuration } from '../../../core/config/duration.ts';

describe('parseGoDuration', () => {
  it.each([
    ['0', 0],
    ['10s', 10_000],
    ['1m30s', 90_000],
    ['5m0s', 300_000],
    ['1h', 3_600_000],
    ['2h45m', 9_900_000],
    ['1.5h', 5_400_000],
    ['.5s', 500],
    ['1.s', 1000],
    ['300ms', 300],
    ['1500us', 1.5],
    ['2µs', 0.002],
    ['2μs', 0.002],
    ['1000000ns', 1],
    ['-1m', -60_000],
    ['+2s', 2000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each(['', '10', 's', '.s', '1d', '1m 30s', '-', '1..5s', 'abc'])('rejects %j', (text) => {
    expect(() => parseGoDuration(text)).toThrow(/duration/);
  });

  it('says a unit is missing for a bare number', () => {
    expect(() => parseGoDuration('10')).toThrow('missing unit in duration "10"');
  });

  it('names an unknown unit', () => {
    expect(() => parseGoDuration('3d')).toThrow('unknown unit "d"');
  });
});

describe('formatGoDuration', () => {
  it.each([
    [0, '0s'],
    [300, '300ms'],
    [10_000, '10s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [1500, '1.5s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
    expect(parseGoDuration(text)).toBe(ms);
  });
});
