/** The results table and the target checks of the bench. */

/** One printed row. */
export interface Row {
  figure: string;
  value: string;
  target?: string;
  met?: boolean;
}

/** A target check as stored in results.json. */
export interface TargetCheck {
  name: string;
  target: string;
  value: number | null;
  met: boolean | null;
}

/** Checks `value <= limit` (null when not measured). */
export function atMost(name: string, value: number | undefined, limit: number, unit: string): TargetCheck {
  const v = value === undefined || Number.isNaN(value) ? null : value;
  return { name, target: `<= ${limit} ${unit}`, value: v, met: v === null ? null : v <= limit };
}

/** Checks `value >= limit` (null when not measured). */
export function atLeast(name: string, value: number | undefined, limit: number, unit: string): TargetCheck {
  const v = value === undefined || Number.isNaN(value) ? null : value;
  return { name, target: `>= ${limit} ${unit}`, value: v, met: v === null ? null : v >= limit };
}

/** Prints rows as an aligned text table. */
export function printTable(rows: Row[]): void {
  const cells = rows.map((r) => [r.figure, r.value, r.target ?? '', r.met === undefined ? '' : r.met ? 'met' : 'MISSED']);
  const head = ['figure', 'value', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}
