#!/usr/bin/env node
// Part of `npm run lint`: `perl -c -Mstrict -w` and `perlcritic --gentle` on every Perl program
// of the repository (the helper programs nodelet runs, e.g. core/exec/mount-syscalls.pl).
// ESLint and Prettier do not read Perl; this fails on a syntax error, on any compile-time
// warning and on perlcritic's most severe findings (two-argument open, bareword file handles,
// string eval...). perlcritic is Debian's libperl-critic-perl (.ci/run installs it).
// Hand-written: a walk and two commands per file are all it takes.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** Not the repository's own code (as in eslint.config.js's ignores). */
const SKIP = new Set(['.git', 'node_modules', 'dist', 'coverage', '.tmp', '.cache']);

/**
 * The .pl files under `dir`.
 * @param {string} dir
 * @returns {Generator<string>}
 */
function* perlFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && !SKIP.has(e.name)) yield* perlFiles(join(dir, e.name));
    else if (e.isFile() && e.name.endsWith('.pl')) yield join(dir, e.name);
  }
}

/**
 * Runs `cmd args…`; exits when the command is not there.
 * @param {string} cmd
 * @param {string[]} args
 * @param {string} [hint] how to install it
 */
function run(cmd, args, hint) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) {
    console.error(`lint-perl: cannot run ${cmd}: ${r.error.message}${hint ? ` (${hint})` : ''}`);
    process.exit(1);
  }
  return r;
}

let failed = 0;
for (const file of perlFiles(ROOT)) {
  const name = relative(ROOT, file);
  const c = run('perl', ['-c', '-Mstrict', '-w', file]);
  // On success perl -c prints only "<file> syntax OK"; anything else is a warning or an error.
  const findings = c.stderr.split('\n').filter((l) => l !== '' && l !== `${file} syntax OK`);
  if (c.status !== 0) findings.push(`perl -c exited ${c.status}`);
  const critic = run('perlcritic', ['--noprofile', '--gentle', '--quiet', '--verbose', '%l:%c: %m (%p)\n', file], 'apt-get install libperl-critic-perl');
  if (critic.status !== 0) findings.push(...`${critic.stdout}${critic.stderr}`.split('\n').filter((l) => l !== ''));
  if (findings.length > 0) {
    failed++;
    console.error(`${name}:\n${findings.map((l) => `  ${l}`).join('\n')}`);
  }
}
if (failed > 0) process.exit(1);
