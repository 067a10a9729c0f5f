#!/usr/bin/env node
// `npm run api:check` / `npm run api:update`: the public API records of
// @nodelet/plugin-api (API Extractor), one per entry point: the contract
// (`./v1`, plugin-api/etc/plugin-api.api.md) and the toolkit (`./v1/toolkit`,
// plugin-api/etc/plugin-api-toolkit.api.md). `check` fails with the diff of
// every record that no longer matches the built declarations; `update`
// rewrites them. Builds first when the build is stale. Both modes also fail
// when an exported declaration or one of its members has no doc comment (API
// Extractor marks it `// (undocumented)` in the report): every export of the
// contract and the toolkit says what it is.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** @type {Array<[config: string, report: string]>} */
const RECORDS = [
  ['plugin-api/api-extractor.json', 'plugin-api.api.md'],
  ['plugin-api/api-extractor.toolkit.json', 'plugin-api-toolkit.api.md'],
];
const mode = process.argv[2];
if (mode !== 'check' && mode !== 'update') {
  console.error('usage: api-record.mjs check|update');
  process.exit(2);
}
execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit' });
const extractor = join(dirname(createRequire(import.meta.url).resolve('@microsoft/api-extractor/package.json')), 'bin', 'api-extractor');
let failed = 0;
for (const [config, report] of RECORDS) {
  const args = [extractor, 'run', ...(mode === 'update' ? ['--local'] : []), '-c', join(ROOT, config)];
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  const undocumented = undocumentedIn(join(ROOT, 'plugin-api/dist/api-report', report));
  if (undocumented.length > 0) {
    failed++;
    console.error(`plugin-api: ${report}: no doc comment on:\n${undocumented.map((l) => `  ${l}`).join('\n')}`);
  }
  if (r.status === 0) continue;
  failed++;
  if (mode === 'check') {
    spawnSync('diff', ['-u', join(ROOT, 'plugin-api/etc', report), join(ROOT, 'plugin-api/dist/api-report', report)], { stdio: 'inherit' });
    console.error(
      `plugin-api: the public API of ${report.replace('.api.md', '')} changed (diff above); if intended, run npm run api:update and commit plugin-api/etc/${report}`,
    );
  }
}
process.exit(failed > 0 ? 1 : 0);

/**
 * The declarations API Extractor marks `// (undocumented)` in `report`, each as its line.
 * @param {string} report
 * @returns {string[]}
 */
function undocumentedIn(report) {
  const lines = readFileSync(report, 'utf8').split('\n');
  return lines.flatMap((l, i) => (l.trim() === '// (undocumented)' ? [(lines[i + 1] ?? '').trim()] : []));
}
