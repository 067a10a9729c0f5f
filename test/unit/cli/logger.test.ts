import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, flushLogger } from '../../../core/logging/logger.ts';
import { formatTextLine } from '../../../core/logging/text-format.ts';

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

describe('--logging-format=text', () => {
  it('writes klog-style lines: severity, date, time, pid, name/component, quoted message, key=value fields', () => {
    const out: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        out.push(String(chunk));
        cb();
      },
    });
    const log = createLogger({ level: 'info', name: 'nodelet', destination, format: 'text' });
    log.child({ component: 'kubelet-api' }).warn({ pod: 'ns/p', port: 10250, ok: true, obj: { a: 1 } }, 'he said "hi"');
    log.error('boom');
    log.debug('hidden');
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(
      new RegExp(
        `^W\\d{4} \\d{2}:\\d{2}:\\d{2}\\.\\d{6} +${process.pid} nodelet/kubelet-api\\] "he said \\\\"hi\\\\"" pod="ns/p" port=10250 ok=true obj=\\{"a":1\\}\\n$`,
      ),
    );
    expect(out[1]).toMatch(/^E\d{4} .* nodelet\] "boom"\n$/);
  });

  it('json stays the format of a logger writing to a stream, and text keeps non-JSON input', () => {
    const { lines, destination } = sink();
    createLogger({ level: 'info', destination }).info('x');
    expect(lines[0]).toMatchObject({ msg: 'x', level: 30 });
    expect(formatTextLine('not json')).toBe('not json\n');
  });
});
