/**
 * The docs against the flag table: docs/install.md's flag reference is generated from it
 * (`npm run docs:flags` rewrites it), every `--flag` the docs name is nodelet's or another
 * program's they say it is, and every default the docs give next to a flag is the table's.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAGS, type FlagSpec } from '../../../core/config/flag-table.ts';
import { REPO_ROOT } from '../../../core/config/repo-root.ts';
import { shownDefault } from '../../../core/config/usage.ts';

const INSTALL = path.join(REPO_ROOT, 'docs', 'install.md');
const BEGIN = '<!-- flag reference: generated from core/config/flag-table.ts by `npm run docs:flags` -->';
const END = '<!-- end of flag reference -->';

/** Flags the docs name that belong to other programs (or stand for any flag). */
const OTHER_PROGRAMS: Readonly<Record<string, string>> = {
  '--allocate-node-cidrs': 'kube-controller-manager',
  '--node-cidr-mask-size': 'kube-controller-manager',
  '--configure-cloud-routes': 'kube-controller-manager',
  '--route-reconciliation-period': 'kube-controller-manager',
  '--kubelet-certificate-authority': 'kube-apiserver',
  '--disable-admission-plugins': 'kube-apiserver',
  '--streaming-connection-idle-timeout': "upstream kubelet's, not nodelet's",
  '--cluster-dns': "upstream kubelet's, not nodelet's",
  '--max-semi-space-size': 'node (V8)',
  '--heap-growing-percent': 'node (V8)',
  '--invocation-count-for-maglev': 'node (V8)',
  '--invocation-count-for-turbofan': 'node (V8)',
  '--maglev': 'node (V8)',
  '--turbofan': 'node (V8)',
  '--max-opt': 'node (V8)',
  '--jitless': 'node (V8)',
  '--privileged': 'docker run',
  '--fail': 'the test CSI driver',
  '--quick': 'the bench',
  '--flag': 'any flag',
};

const byName = new Map(FLAGS.map((f) => [f.name, f]));
const cell = (s: string) => s.replace(/\|/g, '\\|');

/** The reference table: every flag with its type, default, KubeletConfiguration field and help. */
function reference(): string {
  const rows = FLAGS.map((f) => {
    const d = shownDefault(f);
    return `| \`--${f.name}\` | ${f.type} | ${d === '' ? '' : `\`${cell(d)}\``} | ${f.config ? `\`${f.config}\`` : ''} | ${cell(f.help)}${f.upstream ? '' : " (nodelet's own)"} |`;
  });
  return [BEGIN, '', '| flag | type | default | KubeletConfiguration | what |', '|---|---|---|---|---|', ...rows, '', END].join('\n');
}

/** README.md and docs/*.md without their fenced code blocks (commands of other programs). */
function docs(): { file: string; text: string }[] {
  const files = [
    'README.md',
    ...readdirSync(path.join(REPO_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return files.map((file) => ({ file, text: readFileSync(path.join(REPO_ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '') }));
}

/** True when `written` (from the docs) is flag `f`'s default, or one item of a list default. */
function isDefault(f: FlagSpec, written: string): boolean {
  const table = f.default;
  if (written === 'none') return table === '';
  if (f.type === 'mapStringString') return written.split(',').sort().join(',') === shownDefault(f);
  if (f.type === 'strings') return table === written || table.split(',').includes(written);
  return table === written;
}

describe('docs/install.md flag reference', () => {
  it('is the flag table, rendered (npm run docs:flags rewrites it)', () => {
    const text = readFileSync(INSTALL, 'utf8');
    const at = text.indexOf(BEGIN);
    const end = text.indexOf(END);
    expect(at, `docs/install.md has the line ${BEGIN}`).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(at);
    const want = reference();
    if (process.env.UPDATE_FLAG_DOCS === '1') writeFileSync(INSTALL, text.slice(0, at) + want + text.slice(end + END.length));
    else expect(text.slice(at, end + END.length)).toBe(want);
  });
});

describe('flags named in README.md and docs/', () => {
  it("are nodelet's flags, or another program's that the docs mean", () => {
    const unknown = docs().flatMap(({ file, text }) =>
      [...text.matchAll(/`(--[a-z][a-z0-9-]*)(\*?)[^`]*`/g)]
        .map((m) => m[1]!)
        .filter((flag) => !byName.has(flag.slice(2)) && flag !== '--help' && flag !== '--version' && !(flag in OTHER_PROGRAMS))
        .filter((flag) => !FLAGS.some((f) => flag.endsWith('-') && `--${f.name}`.startsWith(flag)))
        .map((flag) => `${file}: ${flag}`),
    );
    expect(unknown).toEqual([]);
  });

  it("give the table's default where they give one next to a flag", () => {
    const found: string[] = [];
    const wrong: string[] = [];
    for (const { file, text } of docs()) {
      const flat = text.replace(/\s*\n\s*/g, ' ');
      // `--flag` … (default `X`) / defaults to `X`, with no other code span between them.
      for (const m of flat.matchAll(/`--([a-z0-9-]+)`[^`]{0,80}?\bdefaults?(?: to)? `([^`]+)`/g)) {
        const f = byName.get(m[1]!);
        if (!f) continue;
        found.push(`--${f.name}`);
        if (!isDefault(f, m[2]!)) wrong.push(`${file}: --${f.name} default ${m[2]} (table: ${f.default || 'none'})`);
      }
      // `--flag=X` (default)
      for (const m of flat.matchAll(/`--([a-z0-9-]+)=([^`]+)` \(default\)/g)) {
        const f = byName.get(m[1]!);
        if (!f) continue;
        found.push(`--${f.name}`);
        if (!isDefault(f, m[2]!)) wrong.push(`${file}: --${f.name}=${m[2]} (default) (table: ${f.default || 'none'})`);
      }
      // Tables with a default column: | `--flag` … | default | … |
      for (const table of text.split(/\n(?!\|)/).filter((t) => /^\| *flag *\| *default *\|/m.test(t))) {
        for (const row of table.split('\n').filter((l) => l.startsWith('| `--'))) {
          const [flags, written] = row
            .split(/(?<!\\)\|/)
            .slice(1, 3)
            .map((c) => c.trim());
          const f = byName.get(/`--([a-z0-9-]+)`/.exec(flags!)![1]!)!;
          found.push(`--${f.name}`);
          const value = written!.replace(/^`|`$/g, '');
          if (!isDefault(f, value)) wrong.push(`${file}: --${f.name} default ${value} (table: ${f.default || 'none'})`);
        }
      }
    }
    expect(found.length).toBeGreaterThan(8);
    expect(wrong).toEqual([]);
  });
});
