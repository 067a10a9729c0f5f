/**
 * What an idle node does not use is loaded on first use, not at start (bench/README.md, idle
 * footprint): `nodelet --help` loads no API client, and the agent's module graph loads neither
 * the X.509 builder, the YAML parser nor `@kubernetes/client-node` (types only). Checked on dist/ (what `nodelet` runs)
 * with a module hook that records every file loaded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'lazy-modules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hook = join(dir, 'record.mjs');
writeFileSync(
  hook,
  `import { registerHooks } from 'node:module';\n` +
    `import { appendFileSync } from 'node:fs';\n` +
    `registerHooks({ load(url, ctx, next) { appendFileSync(process.env.LOADED_FILE, url + '\\n'); return next(url, ctx); } });\n`,
);

/** The package names (node_modules/<name>/) among the files `args` loads. */
function packagesLoaded(args: string[]): Set<string> {
  const out = join(dir, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(out, '');
  const r = spawnSync(process.execPath, ['--no-warnings', `--import=${pathToFileURL(hook).href}`, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    cwd: ROOT,
    env: { ...process.env, LOADED_FILE: out, NODE_OPTIONS: '--max-semi-space-size=2' },
  });
  expect(r.status, r.stderr).toBe(0);
  const urls = spawnSync('cat', [out], { encoding: 'utf8' }).stdout.split('\n');
  return new Set(urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((p): p is string => p !== undefined));
}

describe('modules loaded on first use', () => {
  it('nodelet --help loads neither the API client nor the YAML parser', () => {
    const pkgs = packagesLoaded([join(ROOT, 'bin', 'nodelet.mjs'), '--help']);
    expect([...pkgs].filter((p) => ['@kubernetes/client-node', 'yaml', 'undici', 'prom-client'].includes(p))).toEqual([]);
  });

  it("the agent's module graph loads no X.509 builder, YAML parser or client-node (but does load undici, its HTTP client)", () => {
    const run = pathToFileURL(join(ROOT, 'dist', 'core', 'cli', 'run.js')).href;
    const pkgs = packagesLoaded(['--input-type=module', '-e', `await import(${JSON.stringify(run)});`]);
    expect(pkgs.has('undici')).toBe(true); // the check sees node_modules at all
    // client-node is used for its types only (core/kube has its own thin client: bench/README.md).
    expect([...pkgs].filter((p) => ['@peculiar/x509', 'reflect-metadata', 'tsyringe', 'yaml', '@kubernetes/client-node'].includes(p))).toEqual([]);
  });
});
