/**
 * A container's output its log refuses (worker/wasi-imports.mjs droppingLogWriter): dropped,
 * reported once per refusal with the FailedLogWrite reason (at most once a minute), and noted
 * when the log takes writes again, with the bytes dropped.
 */
import { describe, expect, it } from 'vitest';
import { droppingLogWriter, LOG_FAILED_REASON, LOG_WARNING_INTERVAL_MS } from '../src/worker/wasi-imports.mjs';

/** A log that refuses writes with ENOSPC while `full`, and throws "closed" once closed. */
function fakeLog() {
  const state = { full: false, closed: false, written: [] as string[] };
  const log = {
    write(_stream: 'stdout' | 'stderr', chunk: Uint8Array) {
      if (state.closed) throw new Error('CRI log /x/0.log is closed');
      if (state.full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      state.written.push(Buffer.from(chunk).toString());
    },
  };
  return { state, log };
}

describe('droppingLogWriter', () => {
  const bytes = (s: string) => Buffer.from(s);

  it('drops refused output with one warning, and notes once how much was dropped when writes succeed again', () => {
    const { state, log } = fakeLog();
    const warnings: [string, string | undefined][] = [];
    let now = 0;
    const write = droppingLogWriter(
      log,
      (m, r) => warnings.push([m, r]),
      () => now,
    );
    write('stdout', bytes('one\n'));
    state.full = true;
    for (let i = 0; i < 10_000; i++) write('stdout', bytes('0123456789'));
    now += 5_000;
    expect(warnings).toEqual([
      ["cannot write the container's log: ENOSPC: no space left on device, write; its output is dropped until the log takes writes again", LOG_FAILED_REASON],
    ]);
    state.full = false;
    write('stderr', bytes('two\n'));
    write('stderr', bytes('three\n'));
    expect(state.written).toEqual(['one\n', 'two\n', 'three\n']);
    expect(warnings.slice(1)).toEqual([["the container's log takes writes again; 100000 bytes of output were dropped", undefined]]);
  });

  it('reports a refusal again only a minute after the last report; what was dropped in between is counted', () => {
    const { state, log } = fakeLog();
    const warnings: string[] = [];
    let now = 0;
    const write = droppingLogWriter(
      log,
      (m) => warnings.push(m),
      () => now,
    );
    state.full = true;
    write('stdout', bytes('a'.repeat(10))); // reported
    state.full = false;
    write('stdout', bytes('ok')); // noted: 10 dropped
    now = 10_000;
    state.full = true;
    write('stdout', bytes('b'.repeat(20))); // within the minute: not reported
    state.full = false;
    write('stdout', bytes('ok')); // not noted (nothing was reported)
    now = LOG_WARNING_INTERVAL_MS;
    state.full = true;
    write('stdout', bytes('c'.repeat(30))); // a minute after the first report: reported
    state.full = false;
    write('stdout', bytes('ok'));
    expect(warnings.map((w) => w.replace(/:.*; its output.*/, ': …'))).toEqual([
      "cannot write the container's log: …",
      "the container's log takes writes again; 10 bytes of output were dropped",
      "cannot write the container's log: …",
      "the container's log takes writes again; 50 bytes of output were dropped",
    ]);
  });

  it('a refusal lasting longer than a minute after a recent report is reported once the minute has passed', () => {
    const { state, log } = fakeLog();
    const warnings: string[] = [];
    let now = 0;
    const write = droppingLogWriter(
      log,
      (m) => warnings.push(m),
      () => now,
    );
    state.full = true;
    write('stdout', bytes('x'));
    state.full = false;
    write('stdout', bytes('ok'));
    state.full = true;
    now = 1_000;
    write('stdout', bytes('y'));
    expect(warnings).toHaveLength(2);
    now = 1_000 + LOG_WARNING_INTERVAL_MS;
    write('stdout', bytes('z'));
    expect(warnings).toHaveLength(3);
    expect(warnings[2]).toMatch(/^cannot write the container's log: ENOSPC/);
  });

  it('says nothing of output refused because the log is closed (the container is ending)', () => {
    const { state, log } = fakeLog();
    const warnings: string[] = [];
    const write = droppingLogWriter(log, (m) => warnings.push(m));
    state.closed = true;
    write('stdout', bytes('late'));
    expect(warnings).toEqual([]);
  });
});
