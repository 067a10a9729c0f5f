/**
 * What became of each fuzz input, and the run's report.
 *
 * Every input ends in exactly one verdict:
 *   classified    nodelet answered it precisely (an HTTP status, a pod status reason,
 *                 a refusal log line or event, a plugin registration error)
 *   unclassified  nothing precise was seen in time (a 5xx, a pod stuck without a reason)
 *   hang          a request or a pod removal did not finish in time
 *   crash         nodelet exited, or /healthz stopped answering
 *   leak          the canary's secret appeared in an answer, or a file escaped the roots
 * The run passes when every verdict is `classified`.
 */

/** The kinds of input. */
export type TargetName = 'kubelet-api' | 'static-pods' | 'wasm-modules' | 'oci-content' | 'plugin-sockets';

/** A verdict (see the file comment). */
export type Verdict = 'classified' | 'unclassified' | 'hang' | 'crash' | 'leak';

/** One input's outcome. */
export interface Outcome {
  readonly target: TargetName;
  /** A short description that, with the seed, identifies the input. */
  readonly input: string;
  readonly verdict: Verdict;
  /** The status, reason or log text that classified it, or what went wrong. */
  readonly detail: string;
}

/** Counts per target and verdict, and the failing outcomes. */
export interface FuzzReport {
  readonly seed: number;
  readonly inputs: number;
  readonly byTarget: Record<string, Record<Verdict, number>>;
  /** Classes seen (detail prefixes) per target, with counts. */
  readonly classes: Record<string, Record<string, number>>;
  readonly failures: Outcome[];
  /** Every outcome, in the order the inputs ran. */
  readonly outcomes: readonly Outcome[];
  readonly escapes: string[];
  readonly seconds: number;
}

const EMPTY = (): Record<Verdict, number> => ({ classified: 0, unclassified: 0, hang: 0, crash: 0, leak: 0 });

/** Builds the report from the outcomes. */
export function summarize(seed: number, outcomes: readonly Outcome[], escapes: string[], seconds: number): FuzzReport {
  const byTarget: Record<string, Record<Verdict, number>> = {};
  const classes: Record<string, Record<string, number>> = {};
  for (const o of outcomes) {
    (byTarget[o.target] ??= EMPTY())[o.verdict]++;
    const cls = o.detail.split(':')[0]!.slice(0, 60);
    const c = (classes[o.target] ??= {});
    c[cls] = (c[cls] ?? 0) + 1;
  }
  return { seed, inputs: outcomes.length, byTarget, classes, failures: outcomes.filter((o) => o.verdict !== 'classified'), outcomes, escapes, seconds };
}

/** The report as text. */
export function formatReport(r: FuzzReport): string {
  const total = EMPTY();
  for (const v of Object.values(r.byTarget)) for (const k of Object.keys(total) as Verdict[]) total[k] += v[k];
  const lines = [
    `fuzz: seed ${r.seed}, ${r.inputs} inputs in ${r.seconds.toFixed(0)} s`,
    `  ${'target'.padEnd(16)}${(['classified', 'unclassified', 'hang', 'crash', 'leak'] as const).map((k) => k.padStart(13)).join('')}`,
    ...Object.entries(r.byTarget).map(
      ([t, v]) =>
        `  ${t.padEnd(16)}${Object.values(v)
          .map((n) => String(n).padStart(13))
          .join('')}`,
    ),
    `  ${'total'.padEnd(16)}${Object.values(total)
      .map((n) => String(n).padStart(13))
      .join('')}`,
    `  writes outside the roots: ${r.escapes.length}${r.escapes.length ? ` (${r.escapes.slice(0, 5).join(', ')})` : ''}`,
    '  classes:',
    ...Object.entries(r.classes).map(
      ([t, c]) =>
        `    ${t}: ${Object.entries(c)
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `${k} ×${n}`)
          .join(', ')}`,
    ),
  ];
  for (const f of r.failures.slice(0, 40)) lines.push(`  ${f.verdict.toUpperCase()} [${f.target}] ${f.input} → ${f.detail}`);
  if (r.failures.length > 40) lines.push(`  … ${r.failures.length - 40} more`);
  return lines.join('\n');
}
