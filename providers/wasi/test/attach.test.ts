/**
 * `attach`: a preview1 module whose spec has `stdin: true` reads what an
 * attach session sends (test/fixtures/wasm/stdin-echo.c echoes each line to
 * its log); without `stdin: true` its stdin reads end of input at once and
 * attaching stdin is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidArgument, isNotFound, type StreamIO } from '@nodelet/plugin-api/v1';
import { KILLED_EXIT_CODE, WasiProvider } from '../src/index.ts';
import { FakeImages, logText, podContext, providerContext, pulledFixture, scratch, spec } from './helpers.ts';
import { until } from '../../../test/harness/until.ts';

let provider: WasiProvider;
const tmp = scratch();
beforeAll(async () => {
  provider = new WasiProvider(); // in-process: the modules run in this test process
  await provider.init(providerContext(new FakeImages()));
});
afterAll(async () => {
  await provider.shutdown();
  tmp.cleanup();
});

/** Stdin the test pushes lines into; ends with `end()`. */
function lines(): { iter: AsyncIterable<Uint8Array>; send(s: string): void; end(): void } {
  const queue: (string | null)[] = [];
  let wake: (() => void) | undefined;
  return {
    iter: (async function* () {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((r) => (wake = r));
        const next = queue.shift()!;
        if (next === null) return;
        yield Buffer.from(next);
      }
    })(),
    send: (s) => (queue.push(s), wake?.()),
    end: () => (queue.push(null), wake?.()),
  };
}

function io(stdin: AsyncIterable<Uint8Array> | undefined, signal: AbortSignal): StreamIO {
  return { stdin, stdout: () => {}, stderr: () => {}, tty: false, signal };
}

describe('attach', () => {
  it('feeds the session stdin to a stdin: true module, which echoes it to its log; stopping ends its input', async () => {
    const s = spec(await pulledFixture('stdin-echo'), tmp.dir, [], { stdin: true });
    const c = await provider.startContainer(s, podContext());
    await until(() => logText(s.logPath).includes('ready'));
    const ac = new AbortController();
    const input = lines();
    const session = provider.attach(c.id, io(input.iter, ac.signal));
    input.send('hello nodelet\n');
    input.send('second\n');
    await until(() => logText(s.logPath).includes('echo: second'));
    ac.abort(); // the client leaves: the session ends, the container keeps running
    await session;
    // Stopping closes nodelet's end of the pipe: the module blocked reading stdin wakes and unwinds (not left hanging in read).
    await c.stop(0);
    expect((await c.exit).exitCode).toBe(KILLED_EXIT_CODE);
    expect(logText(s.logPath)).toMatch(/^ready\necho: hello nodelet\necho: second\n/);
  });

  it('without stdin: true the module reads end of input at once, and attaching stdin is refused', async () => {
    const s = spec(await pulledFixture('stdin-echo'), tmp.dir);
    const c = await provider.startContainer(s, podContext());
    await c.exit;
    expect(logText(s.logPath)).toBe('ready\nstdin closed\n');
    await expect(provider.attach(c.id, io(lines().iter, new AbortController().signal))).rejects.toSatisfy(isNotFound);
    const s2 = spec(await pulledFixture('sleep'), tmp.dir, ['3600']);
    const c2 = await provider.startContainer(s2, podContext());
    await expect(provider.attach(c2.id, io(lines().iter, new AbortController().signal))).rejects.toSatisfy(isInvalidArgument);
    await c2.stop(0);
  });
});
