#!/usr/bin/env node
// Part of `npm run lint`: `perl -c -Mstrict -w` on every Perl program of the repository (the
// helper programs nodelet runs, e.g. core/exec/mount-syscalls.pl). ESLint and Prettier do not
// read Perl; this fails on a syntax error and on any compile-time warning. Hand-written: a
// walk and one `perl -c` per file is all it takes.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** Not the repository's own code (as in eslint.config.js's ignores). */
const SKIP = new Set(['.git', 'node_modules', 'dist', 'coverage', '.tmp', '.cache']);

function* perlFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && !SKIP.has(e.name)) yield* perlFiles(join(dir, e.name));
    else if (e.isFile() && e.name.endsWith('.pl')) yield join(dir, e.name);
  }
}

let failed = 0;
for (const file of perlFiles(ROOT)) {
  const name = relative(ROOT, file);
  const r = spawnSync('perl', ['-c', '-Mstrict', '-w', file], { encoding: 'utf8' });
  if (r.error) {
    console.error(`lint-perl: cannot run perl: ${r.error.message}`);
    process.exit(1);
  }
  // On success perl -c prints only "<file> syntax OK"; anything else is a warning or an error.
  const findings = r.stderr.split('\n').filter((l) => l !== '' && l !== `${file} syntax OK`);
  if (r.status !== 0 || findings.length > 0) {
    failed++;
    console.error(`${name}:\n${findings.map((l) => `  ${l}`).join('\n')}`);
  }
}
if (failed > 0) process.exit(1);
