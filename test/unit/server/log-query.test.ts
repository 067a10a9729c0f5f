import { describe, expect, it } from 'vitest';
import { parseLogQuery, sinceInstant } from '../../../core/server/log-query.ts';

const parse = (q: string) => parseLogQuery(new URLSearchParams(q));

describe('containerLogs query', () => {
  it('decodes booleans like apimachinery: only absent, false and 0 are false', () => {
    const r = parse('follow&previous=0&timestamps=FALSE');
    expect(r).toMatchObject({ ok: true, options: { follow: true, previous: false, timestamps: false } });
    expect(parse('follow=yes')).toMatchObject({ ok: true, options: { follow: true } });
  });

  it('maps the old tail parameter, with tail=all meaning no limit', () => {
    expect(parse('tail=5&tailLines=9')).toMatchObject({ ok: true, options: { tailLines: 5 } });
    const all = parse('tail=all&tailLines=9');
    expect(all.ok && all.options.tailLines).toBe(undefined);
  });

  it('answers 400 for values that do not decode and 422 for invalid ones', () => {
    expect(parse('tailLines=1.5')).toMatchObject({ ok: false, status: 400 });
    expect(parse('limitBytes=99999999999999999999')).toMatchObject({ ok: false, status: 400 });
    expect(parse('sinceTime=2024-01-01')).toMatchObject({ ok: false, status: 400 });
    expect(parse('tailLines=-3')).toMatchObject({ ok: false, status: 422 });
    expect(parse('sinceSeconds=0')).toMatchObject({ ok: false, status: 422 });
    expect(parse('sinceSeconds=1&sinceTime=')).toMatchObject({ ok: false, status: 422 });
  });

  it('computes since from sinceSeconds or sinceTime', () => {
    const s = parse('sinceSeconds=30');
    expect(s.ok && sinceInstant(s.options, 100_000)?.getTime()).toBe(70_000);
    const t = parse('sinceTime=2024-01-01T00:00:00%2B01:00');
    expect(t.ok && sinceInstant(t.options)?.toISOString()).toBe('2023-12-31T23:00:00.000Z');
    const none = parse('sinceTime=null');
    expect(none.ok && sinceInstant(none.options)).toBe(undefined);
  });
});
