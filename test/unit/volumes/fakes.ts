/** Small fakes shared by the volume and env unit tests. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { V1ConfigMap, V1Pod, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../../plugin-api/v1/logger.ts';
import type { IssuedToken, ObjectSource, TokenRequestOptions } from '../../../core/volumes/object-source.ts';

export interface TokenCall {
  namespace: string;
  serviceAccount: string;
  opts: TokenRequestOptions;
}

/** An in-memory ObjectSource keyed `ns/name`; records calls. */
export class FakeObjectSource implements ObjectSource {
  readonly configMaps = new Map<string, V1ConfigMap>();
  readonly secrets = new Map<string, V1Secret>();
  readonly tokenCalls: TokenCall[] = [];
  reads = 0;
  tokenTTLSeconds?: number;
  now = () => Date.now();

  addConfigMap(ns: string, name: string, data: Record<string, string>, binaryData?: Record<string, string>): this {
    this.configMaps.set(`${ns}/${name}`, { metadata: { name, namespace: ns }, data, ...(binaryData ? { binaryData } : {}) });
    return this;
  }

  /** `data` given in clear text; stored base64 like the API does. */
  addSecret(ns: string, name: string, data: Record<string, string>): this {
    const enc = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    this.secrets.set(`${ns}/${name}`, { metadata: { name, namespace: ns }, data: enc });
    return this;
  }

  async getConfigMap(ns: string, name: string) {
    this.reads++;
    return this.configMaps.get(`${ns}/${name}`);
  }

  async getSecret(ns: string, name: string) {
    this.reads++;
    return this.secrets.get(`${ns}/${name}`);
  }

  async requestServiceAccountToken(namespace: string, serviceAccount: string, opts: TokenRequestOptions): Promise<IssuedToken> {
    this.tokenCalls.push({ namespace, serviceAccount, opts });
    const ttl = this.tokenTTLSeconds ?? opts.expirationSeconds;
    return { token: `token-${this.tokenCalls.length}-${serviceAccount}-${opts.audience ?? 'default'}`, expirationTimestamp: new Date(this.now() + ttl * 1000) };
  }
}

/** A logger that keeps lines in memory. */
export function memoryLogger(lines: string[] = []): Logger {
  const log = (level: string) => (obj: object | string, msg?: string) => {
    lines.push(`${level} ${typeof obj === 'string' ? obj : `${msg ?? ''} ${JSON.stringify(obj)}`}`);
  };
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: () => logger };
  return logger;
}

/** A fresh temp dir, removed by the returned cleanup. */
export async function tempDir(prefix = 'nodelet-vol-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A minimal pod. */
export function pod(spec: Partial<NonNullable<V1Pod['spec']>> = {}, meta: Partial<NonNullable<V1Pod['metadata']>> = {}): V1Pod {
  return {
    metadata: { name: 'web', namespace: 'ns1', uid: 'uid-1234', ...meta },
    spec: { containers: [{ name: 'app', image: 'example/app:1' }], nodeName: 'node-a', serviceAccountName: 'builder', ...spec },
  };
}
