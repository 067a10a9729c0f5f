#!/usr/bin/env node
// Vendors the preview1 tests of WebAssembly/wasi-testsuite into
// test/fixtures/wasi-testsuite/: the prebuilt test modules and their .json specs
// (and each suite's test directories and manifest), from a git repository of the
// suite at a given commit of its `prod/testsuite-base` branch (the branch that
// carries the built binaries), plus the suite's LICENSE.
//
//   node scripts/vendor-wasi-testsuite.mjs <suite git dir> [<commit or branch>]
//
// The modules are stripped of their custom sections `name` and `.debug_*` (DWARF
// of the Rust tests' debug builds: ~95% of their bytes); code, data and every
// other section are kept byte for byte, so what runs is what upstream built.
// Everything under the destination is replaced; the README's commit line is
// rewritten with the commit vendored.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const DEST = join(ROOT, 'test', 'fixtures', 'wasi-testsuite');
/** The suites taken: upstream path → path under DEST. */
const SUITES = {
  'tests/assemblyscript/testsuite/wasm32-wasip1': 'assemblyscript',
  'tests/c/testsuite/wasm32-wasip1': 'c',
  'tests/rust/testsuite/wasm32-wasip1': 'rust',
};

const [gitDir, ref = 'prod/testsuite-base'] = process.argv.slice(2);
if (!gitDir) {
  console.error('usage: vendor-wasi-testsuite.mjs <wasi-testsuite git dir> [<commit or branch>]');
  process.exit(2);
}
/** @param {string[]} args */
const git = (...args) => execFileSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 1 << 30 });
const commit = git('rev-parse', `${ref}^{commit}`).toString().trim();

/**
 * Reads an unsigned LEB128 at `pos`.
 * @param {Buffer} b
 * @param {number} pos
 * @returns {[number, number]} value, position after it
 */
function leb(b, pos) {
  let v = 0;
  let shift = 0;
  for (;;) {
    const byte = b[pos++];
    v += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return [v, pos];
  }
}

/**
 * The module without its `name` and `.debug_*` custom sections.
 * @param {Buffer} b
 */
function strip(b) {
  const out = [b.subarray(0, 8)];
  let pos = 8;
  while (pos < b.length) {
    const start = pos;
    const id = b[pos];
    const [len, body] = leb(b, pos + 1);
    pos = body + len;
    if (id === 0) {
      const [nameLen, nameAt] = leb(b, body);
      const name = b.subarray(nameAt, nameAt + nameLen).toString('utf8');
      if (name === 'name' || name.startsWith('.debug_')) continue;
    }
    out.push(b.subarray(start, pos));
  }
  return Buffer.concat(out);
}

/** @param {string} commit */
function readme(commit) {
  return `# WASI preview1 conformance tests (vendored)

The preview1 tests of [WebAssembly/wasi-testsuite](https://github.com/WebAssembly/wasi-testsuite),
the official WASI test suite, as built by its CI on the \`prod/testsuite-base\` branch:

- upstream commit: \`${commit}\` (branch \`prod/testsuite-base\`)
- \`assemblyscript/\`, \`c/\`, \`rust/\`: upstream's \`tests/<language>/testsuite/wasm32-wasip1/\` — each
  test is \`<name>.wasm\` with an optional \`<name>.json\` (args, env, \`root\`: the directory
  preopened as \`/\`, expected exit code and stdout; no file: no args, exit code 0), the suite's
  \`manifest.json\` and the test directories (\`fs-tests.dir\`).
- The modules are upstream's with their \`name\` and \`.debug_*\` custom sections removed (DWARF of
  debug builds, ~95% of the bytes); every other section is unchanged.
- License: Apache-2.0 (\`LICENSE\`, upstream's).

Refresh with \`node scripts/vendor-wasi-testsuite.mjs <git dir of the suite> [<commit>]\`, then run
\`npx vitest run --project unit test/unit/wasi/wasi-testsuite.test.ts\` and update
\`test/unit/wasi/wasi-testsuite-expectations.json\` for tests added or removed.

The suite also has \`wasm32-wasip3\` tests (Rust components importing WASI 0.3 interfaces); they are
not vendored: nodelet's component path implements WASI 0.2. There are no \`wasm32-wasip2\` tests.
`;
}

rmSync(DEST, { recursive: true, force: true });
let modules = 0;
for (const [from, to] of Object.entries(SUITES)) {
  const files = git('ls-tree', '-r', '--name-only', commit, from).toString().trim().split('\n');
  for (const f of files) {
    let bytes = git('show', `${commit}:${f}`);
    if (f.endsWith('.wasm')) {
      bytes = strip(bytes);
      modules++;
    }
    const target = join(DEST, to, f.slice(from.length + 1));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, bytes);
  }
}
writeFileSync(join(DEST, 'LICENSE'), git('show', `${commit}:LICENSE`));
writeFileSync(join(DEST, 'README.md'), readme(commit));
console.error(`vendored ${modules} modules of WebAssembly/wasi-testsuite ${commit} into ${DEST}`);
