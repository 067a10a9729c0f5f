import { describe, expect, it } from 'vitest';
import { StatusCoalescer } from '../../../core/pods/status-coalescer.ts';

function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

describe('StatusCoalescer', () => {
  it('sends one status at a time and, of those offered during a send, only the newest', async () => {
    const sent: string[] = [];
    const gates: ReturnType<typeof gate>[] = [];
    const c = new StatusCoalescer<string>(async (v) => {
      sent.push(v);
      const g = gate();
      gates.push(g);
      await g.p;
    });
    const first = c.offer('Pending');
    void c.offer('ContainerCreating');
    void c.offer('PodIP');
    const last = c.offer('Running');
    expect(sent).toEqual(['Pending']);
    gates[0]!.open();
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual(['Pending', 'Running']);
    gates[1]!.open();
    await Promise.all([first, last]);
    expect(sent).toEqual(['Pending', 'Running']);
  });

  it('starts a new send for a status offered after the previous drain ended', async () => {
    const sent: number[] = [];
    const c = new StatusCoalescer<number>(async (v) => {
      sent.push(v);
    });
    await c.offer(1);
    await c.offer(2);
    expect(sent).toEqual([1, 2]);
  });

  it('does not lose an offer made from inside a send', async () => {
    const sent: number[] = [];
    const c: StatusCoalescer<number> = new StatusCoalescer<number>(async (v) => {
      sent.push(v);
      if (v === 1) void c.offer(2);
    });
    await c.offer(1);
    expect(sent).toEqual([1, 2]);
  });
});
