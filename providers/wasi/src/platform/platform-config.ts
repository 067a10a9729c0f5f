/**
 * Where the platform interfaces of one container get their data (main thread, at its start),
 * handed to its worker thread (worker-protocol.ts):
 *  - `wasi:config/store`: the container's environment (`SPIN_VARIABLE_*`, config-store.mjs), read
 *    in the worker from the env it already gets;
 *  - `wasi:keyvalue`: the store `default` is a SQLite file under the pod's directory
 *    (`<podDir>/wasi-keyvalue/default.sqlite`: kept across restarts of the container, removed with
 *    the pod, shared by the pod's containers). The pod's annotation
 *    `wasi.nodelet.dev/keyvalue-<label>: redis://[[user]:password@]host[:port][/db]` puts the
 *    store `<label>` (e.g. `default`) on a Redis server instead, shared by every pod naming it;
 *    the value `sqlite` names a SQLite store `<label>` beside the default one. Any other label
 *    opens `no-such-store`.
 * An annotation that does not parse fails the container's start (InvalidArgument).
 */
import { join } from 'node:path';
import { providerError, type ContainerSpec } from '@nodelet/plugin-api/v1';
import { DEFAULT_STORE, type StoreConfig } from './keyvalue-store.mjs';

/** Prefix of the annotations that configure a key-value store: `wasi.nodelet.dev/keyvalue-<label>`. */
export const KEYVALUE_ANNOTATION_PREFIX = 'wasi.nodelet.dev/keyvalue-';
/** A store label: what a component passes to `wasi:keyvalue/store.open`. */
const LABEL = /^[a-z0-9]([a-z0-9_-]{0,40}[a-z0-9])?$/;

/** What one container's platform interfaces are backed by (structured-cloned to its worker). */
export interface PlatformConfig {
  /** Key-value stores by label. */
  readonly keyvalue: Readonly<Record<string, StoreConfig>>;
  /**
   * A Spin component's variables, resolved (spin/spin-variables.ts): when given, `wasi:config/store`
   * and `fermyon:spin/variables` read these instead of the env's `SPIN_VARIABLE_*`.
   */
  readonly variables?: Readonly<Record<string, string>>;
  /** The only store labels that may be opened, the others `access-denied` (a Spin component's `key_value_stores`); all when absent. */
  readonly keyvalueAllowed?: readonly string[];
}

/**
 * The platform configuration of `spec`. `dataDir` is the pod's directory (core's `podDir`); SQLite
 * stores are files below `<dataDir>/wasi-keyvalue/`. Throws InvalidArgument for an annotation
 * that does not parse.
 */
export function platformConfig(spec: Pick<ContainerSpec, 'name' | 'pod'>, dataDir: string): PlatformConfig {
  const dir = join(dataDir, 'wasi-keyvalue');
  const keyvalue: Record<string, StoreConfig> = { [DEFAULT_STORE]: { type: 'sqlite', path: join(dir, `${DEFAULT_STORE}.sqlite`) } };
  for (const [key, value] of Object.entries(spec.pod.annotations ?? {})) {
    if (!key.startsWith(KEYVALUE_ANNOTATION_PREFIX)) continue;
    const bad = (why: string) => providerError('InvalidArgument', `container ${spec.name}: error parsing annotation ${JSON.stringify(key)}: ${why}`);
    const label = key.slice(KEYVALUE_ANNOTATION_PREFIX.length);
    if (!LABEL.test(label)) throw bad(`the store label ${JSON.stringify(label)} must be lower-case letters, digits, '-' and '_' (at most 42)`);
    const v = value.trim();
    if (v === 'sqlite') {
      keyvalue[label] = { type: 'sqlite', path: join(dir, `${label}.sqlite`) };
      continue;
    }
    let url: URL;
    try {
      url = new URL(v);
    } catch {
      throw bad(`${JSON.stringify(redact(v))} is neither "sqlite" nor a redis:// URL`);
    }
    if (url.protocol !== 'redis:') throw bad(`${JSON.stringify(redact(v))} is neither "sqlite" nor a redis:// URL`);
    if (!url.hostname) throw bad('the redis:// URL names no host');
    if (url.pathname.length > 1 && !/^\/\d+$/.test(url.pathname)) throw bad('the path of the redis:// URL must be a database number');
    keyvalue[label] = { type: 'redis', url: v };
  }
  return { keyvalue };
}

/** `text` with the password of a URL in it hidden (error messages become events). */
function redact(text: string): string {
  return text.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
