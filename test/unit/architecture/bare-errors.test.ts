/**
 * Errors that leave a subsystem come from core/errors/catalogue.ts. This test
 * counts bare built-in errors (`new Error(`, `new TypeError(`, ...) in core/
 * and fails on any outside the allowlist below, each entry with its reason;
 * an allowlist entry whose count no longer matches fails too, so it cannot go stale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CORE = fileURLToPath(new URL('../../../core/', import.meta.url));

/** file (relative to core/) → how many bare errors it may make, and why. */
const ALLOWED: Readonly<Record<string, { count: number; reason: string }>> = {
  'errors/catalogue.ts': { count: 1, reason: 'nodeletError() itself builds the catalogued error' },
  'config/repo-root.ts': { count: 1, reason: 'module-load invariant (package.json missing), thrown before any catalogue user exists' },
  'kube/api-connection.ts': { count: 1, reason: "the undici adapter's abort reason; api-transport.ts wraps every failure of a connection as NDL_API_REQUEST" },
  'kube/h2-connection.ts': {
    count: 6,
    reason:
      "the HTTP/2 connection's failures (abort, timeouts, a closed stream or connection, no PING answer, no TLS connection), which api-transport.ts wraps as NDL_API_REQUEST",
  },
  'pluginmanager/registration.ts': { count: 1, reason: "GetInfo's empty reply; registerWith wraps it as NDL_PLUGIN_INFO in the same file" },
  'volumes/csi/node-meta-updates.ts': { count: 1, reason: "Go's JSON unmarshal wording, caught a line later and wrapped as NDL_CSI_NODE_INFO" },
};

const BARE = /\bnew (?:Error|TypeError|RangeError|SyntaxError)\(/g;

/** How many bare built-in errors `source` constructs (comments and strings included: keep them out of both). */
function countBare(source: string): number {
  return source.match(BARE)?.length ?? 0;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts'))
    .map((d) => path.relative(CORE, path.join(d.parentPath, d.name)));
}

describe('bare errors in core/', () => {
  it('counts each kind of bare built-in error, and not catalogued ones', () => {
    expect(countBare("throw new Error('x'); reject(new TypeError(`y`)); throw new SyntaxError('z')")).toBe(3);
    expect(countBare("throw nodeletError('NDL_POD_INVALID', 'x'); new RegistryError(1, undefined, 'y'); renew Errors()")).toBe(0);
  });

  it('core/ makes none outside the allowlist', () => {
    const found = Object.fromEntries(tsFiles(CORE).map((f) => [f, countBare(readFileSync(path.join(CORE, f), 'utf8'))] as const));
    const unexpected = Object.entries(found).filter(([f, n]) => n > 0 && !(f in ALLOWED));
    expect(unexpected, 'throw nodeletError(<code>, <detail>) from core/errors instead (add a code and a docs/errors.md section if none fits)').toEqual([]);
    const stale = Object.entries(ALLOWED).filter(([f, a]) => found[f] !== a.count);
    expect(
      stale.map(([f, a]) => `${f}: allowed ${a.count}, found ${found[f] ?? 'no file'}`),
      'update the allowlist',
    ).toEqual([]);
  });
});
