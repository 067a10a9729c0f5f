/**
 * Builds (or finds cached) the plugin peers of the test harness with build.sh
 * (Go, CGO off, cached in test/.cache/bin by go.mod+go.sum hash) and returns
 * their absolute paths. Cold: ~2 min (kwok); cached: instant.
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Binaries built by test/peers/build.sh. */
export const PEER_BINARIES = [
  'sample-device-plugin',
  'csi-node-driver-registrar',
  'hostpathplugin',
  'dra-test-driver',
  'csi-mock-driver',
  'test-device-plugin',
  'kwok',
] as const;

/** Name of a peer binary. */
export type PeerBinary = (typeof PEER_BINARIES)[number];

let cached: Record<PeerBinary, string> | undefined;

/** Runs build.sh once per process and returns binary name → absolute path. Throws when one is missing. */
export function buildPeers(): Record<PeerBinary, string> {
  if (cached) return cached;
  const out = execFileSync('bash', [join(here, 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  cached = parsePeerPaths(out);
  return cached;
}

/** Parses build.sh's `name=path` lines (other lines are ignored). */
export function parsePeerPaths(out: string): Record<PeerBinary, string> {
  const found = new Map<string, string>();
  for (const line of out.split('\n')) {
    const m = /^([a-z0-9-]+)=(\/.+)$/.exec(line.trim());
    if (m) found.set(m[1]!, m[2]!);
  }
  const missing = PEER_BINARIES.filter((b) => !found.has(b));
  if (missing.length > 0) throw new Error(`test/peers/build.sh did not report: ${missing.join(', ')}`);
  return Object.fromEntries(PEER_BINARIES.map((b) => [b, found.get(b)!])) as Record<PeerBinary, string>;
}
