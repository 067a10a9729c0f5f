/**
 * The folder-faces lint rule (scripts/eslint/folder-faces.js) on a tiny fake
 * repo (test/fixtures/folder-faces): deep imports into another area's inner
 * files fail, and so does an inner file's value import of its own face;
 * imports through the face, between siblings and from tests pass,
 * and providers import no core/ file and reach plugin-api only by its package
 * entry points (examples/provider-* are providers too). Then the real repository: `eslint.config.js`
 * turns the rule on for every core/ file.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import nodelet from '../../../scripts/eslint/folder-faces.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = path.join(REPO, 'test/fixtures/folder-faces');

async function lintFixture(): Promise<Map<string, string[]>> {
  const eslint = new ESLint({
    cwd: FIXTURE,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { nodelet },
        rules: { 'nodelet/folder-faces': ['error', { root: FIXTURE }] },
      },
    ],
  });
  const out = new Map<string, string[]>();
  for (const r of await eslint.lintFiles(['.'])) {
    out.set(
      path.relative(FIXTURE, r.filePath).split(path.sep).join('/'),
      r.messages.map((m) => `${m.line}: ${m.ruleId ?? 'parse'} ${m.message}`),
    );
  }
  return out;
}

describe('folder-faces lint rule', () => {
  it('reports each deep import into another area, a value import of its own face, and any core/ import from a provider', async () => {
    const got = await lintFixture();
    expect(got.get('core/beta/bad.ts')).toEqual([
      "2: nodelet/folder-faces '../alpha/inner.ts' reaches into core/alpha/'s inner file core/alpha/inner.ts: import from core/alpha/index.ts (add the name to it)",
      "3: nodelet/folder-faces '../alpha/sub/deep.ts' reaches into core/alpha/'s inner file core/alpha/sub/deep.ts: import from core/alpha/index.ts (add the name to it)",
      "8: nodelet/folder-faces '../alpha/inner.ts' reaches into core/alpha/'s inner file core/alpha/inner.ts: import from core/alpha/index.ts (add the name to it)",
      "10: nodelet/folder-faces '../alpha/sub/deep.ts' reaches into core/alpha/'s inner file core/alpha/sub/deep.ts: import from core/alpha/index.ts (add the name to it)",
    ]);
    expect(got.get('core/alpha/own-face.ts')).toEqual([
      "2: nodelet/folder-faces './index.ts' is core/alpha/'s own face: inner files import their siblings directly (a value import of the face is a cycle)",
    ]);
    expect(got.get('providers/p/src/provider.ts')).toEqual([
      "2: nodelet/folder-faces '../../../core/alpha/index.ts': providers use @nodelet/plugin-api/v1 and @nodelet/plugin-api/v1/toolkit only, not core/ (core/alpha/index.ts)",
    ]);
    expect(got.get('providers/p/src/api-file.ts')).toEqual([
      "2: nodelet/folder-faces '../../../plugin-api/v1/state-machine.ts': import plugin-api/v1/state-machine.ts through its package entry point, @nodelet/plugin-api/v1 or @nodelet/plugin-api/v1/toolkit",
    ]);
    expect(got.get('examples/provider-e/src/provider.ts')).toEqual([
      "2: nodelet/folder-faces '../../../core/alpha/index.ts': providers use @nodelet/plugin-api/v1 and @nodelet/plugin-api/v1/toolkit only, not core/ (core/alpha/index.ts)",
    ]);
  });

  it('passes imports through the face, between siblings of one area, and from tests', async () => {
    const got = await lintFixture();
    for (const ok of ['core/alpha/index.ts', 'core/alpha/sibling.ts', 'core/alpha/sub/deep.ts', 'core/beta/good.ts', 'test/unit/alpha-inner.ts']) {
      expect(got.get(ok), ok).toEqual([]);
    }
  });

  it('is on for core/ in the repository config', async () => {
    const eslint = new ESLint({ cwd: REPO });
    const config = await eslint.calculateConfigForFile(path.join(REPO, 'core/pods/pod-controller.ts'));
    expect(config.rules['nodelet/folder-faces']).toEqual([2]);
  });
});
