/**
 * Waits on a condition instead of a fixed sleep: polls `ok` (sync or async; a
 * throw counts as "not yet") every 20 ms until it holds, and fails after `ms`
 * naming `what` (or, without one, the condition's own source). One helper for
 * the tests that watch something they cannot await (another thread, another
 * process, a file).
 */
export async function until(ok: Condition, ms?: number): Promise<void>;
export async function until(what: string, ok: Condition, ms?: number): Promise<void>;
export async function until(a: string | Condition, b?: Condition | number, c?: number): Promise<void> {
  const [what, ok, ms] = typeof a === 'string' ? [a, b as Condition, c ?? 20_000] : [String(a), a, (b as number | undefined) ?? 20_000];
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await ok()) return;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20)); // the poll's interval
  }
}

/** What {@link until} polls. */
type Condition = () => boolean | Promise<boolean>;
