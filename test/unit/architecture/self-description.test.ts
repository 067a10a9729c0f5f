/**
 * The project describes itself: code comments and docs say what the code does
 * and why, never in which issue, session or branch of work a line was written
 * (history lives in git and CHANGELOG.md; older benchmark runs are data in
 * bench/results/). This test reads every tracked source and doc file and fails
 * naming file:line for a line that dates itself; it also keeps bench/README.md
 * a report (≤ 400 lines) and checks CHANGELOG.md and CONTRIBUTING.md exist.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** `issue 17`, `issues 20.3`, `session 9`, `sessions 14 and 15`, `branch \`burst2\``, `(round 3)`. */
const DATED = /\b(issues?|sessions?) ?#?\d+|\bbranch `[\w-]+`|\(round \d+\)/i;

/** Files whose business is history. */
const HISTORY = [/^CHANGELOG\.md$/, /^bench\/results\//];

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--', '*.ts', '*.mts', '*.mjs', '*.js', '*.md'], { cwd: ROOT, encoding: 'utf8' });
  return out
    .split('\0')
    .filter(Boolean)
    .filter((f) => !HISTORY.some((h) => h.test(f)) && !f.startsWith('sockets/generated/') && f !== 'test/unit/architecture/self-description.test.ts');
}

describe('a project that speaks of itself', () => {
  it('the pattern finds a line dated by a round of work and leaves ordinary prose alone', () => {
    for (const dated of ['(bench/README.md, issue 17, session 13)', 'issues 20.3–20.5', 'since session 14', 'branch `burst2`', 'the first pass (round 2)'])
      expect(DATED.test(dated), dated).toBe(true);
    for (const plain of [
      'one round trip',
      'wasmtime#8034',
      'a GitHub issue upstream',
      'the session was closed after 4 hours',
      'KEP-753',
      'the branch of the tree',
    ])
      expect(DATED.test(plain), plain).toBe(false);
  });

  it('no tracked code or doc line dates itself', () => {
    const found: string[] = [];
    for (const f of trackedFiles()) {
      const path = ROOT + f;
      if (!existsSync(path)) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (DATED.test(line)) found.push(`${f}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('bench/README.md is a report, and the history and the contributor guide have their files', () => {
    expect(readFileSync(ROOT + 'bench/README.md', 'utf8').split('\n').length).toBeLessThanOrEqual(400);
    expect(existsSync(ROOT + 'CHANGELOG.md')).toBe(true);
    expect(existsSync(ROOT + 'CONTRIBUTING.md')).toBe(true);
  });
});
