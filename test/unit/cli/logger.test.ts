import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, flushLogger } from '../../../core/log/logger.ts';

function sink() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, destination };
}

describe('createLogger', () => {
  it('writes JSON lines with the name and filters below the level', () => {
    const { lines, destination } = sink();
    const log = createLogger({ level: 'warn', name: 'nodelet', destination });
    log.info('hidden');
    log.warn({ pod: 'ns/p' }, 'shown');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, name: 'nodelet', pod: 'ns/p', msg: 'shown' });
  });

  it('supports trace', () => {
    const { lines, destination } = sink();
    const log = createLogger({ level: 'trace', destination });
    log.trace('deep');
    expect(lines.map((l) => l.msg)).toEqual(['deep']);
    expect(log.isLevelEnabled('trace')).toBe(true);
  });

  it('flushLogger is safe before and after a stderr logger exists', () => {
    expect(() => flushLogger()).not.toThrow();
    const log = createLogger({ level: 'error' });
    expect(log.level).toBe('error');
    expect(() => flushLogger()).not.toThrow();
  });
});
