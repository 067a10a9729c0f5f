import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../../core/errors/catalogue.ts';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
const documented = [...doc.matchAll(/^### (NDL_[A-Z0-9_]+)\s*$/gm)].map((m) => m[1]!);

describe('docs/errors.md and the error catalogue', () => {
  it('documents every catalogued code', () => {
    expect(Object.keys(CATALOGUE).filter((c) => !documented.includes(c))).toEqual([]);
  });

  it('documents no code the catalogue lacks, each once', () => {
    expect(documented.filter((c) => !(c in CATALOGUE))).toEqual([]);
    expect(documented.filter((c, i) => documented.indexOf(c) !== i)).toEqual([]);
  });

  it('gives each code its meaning and what to do', () => {
    for (const [code, meaning] of Object.entries(CATALOGUE)) {
      const section = doc.split(`### ${code}\n`)[1]!.split('\n### ')[0]!;
      expect(section.toLowerCase(), code).toContain(meaning.toLowerCase());
      expect(section, code).toMatch(/\*\*What to do:\*\* \S/);
    }
  });
});
