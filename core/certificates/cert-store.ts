/**
 * Upstream's certificate file store (client-go `util/certificate/certificate_store.go`):
 * each issued pair is written as `<cert-dir>/<prefix>-<YYYY-MM-DD-HH-MM-SS>.pem`
 * (certificates then the key, mode 0600) and `<prefix>-current.pem` is a symlink
 * to the newest; the swap goes through a `<prefix>-updated.pem` symlink renamed
 * over `current`, and an interrupted swap is finished on the next start.
 *
 * Prefixes nodelet uses, as upstream: `kubelet-client` and `kubelet-server`.
 * When no pair is stored yet, `current()` falls back to the given cert/key
 * files (upstream's `--tls-cert-file`/`--tls-private-key-file` for the server).
 */
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { nodeletError } from '../errors/index.ts';
import { parseKeyPair, pemBlocks, type KeyPair } from './x509.ts';

/** Where the store keeps its files. */
export interface CertStoreOptions {
  readonly certDir: string;
  /** `kubelet-client` or `kubelet-server`. */
  readonly prefix: string;
  /** Used by `current()` when the store is empty. */
  readonly fallbackCertFile?: string;
  readonly fallbackKeyFile?: string;
  /** For tests: the clock that names files. */
  readonly now?: () => Date;
}

/** Go's `time.Now().Format("2006-01-02-15-04-05")` (local time). */
export function pairTimestamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}-${p(d.getHours())}-${p(d.getMinutes())}-${p(d.getSeconds())}`;
}

function lstat(p: string) {
  try {
    return lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The file store (see the module comment). */
export class CertStore {
  constructor(private readonly o: CertStoreOptions) {}

  private file(qualifier: string): string {
    return path.join(this.o.certDir, `${this.o.prefix}-${qualifier}.pem`);
  }

  /** `<cert-dir>/<prefix>-current.pem`, what kubeconfigs point at. */
  currentPath(): string {
    return this.file('current');
  }

  /** Finishes a swap a crash interrupted: `updated` becomes `current`. */
  private recover(): void {
    if (lstat(this.currentPath())) return;
    const updated = lstat(this.file('updated'));
    if (!updated) return;
    if (!updated.isSymbolicLink()) throw nodeletError('NDL_CERT_STORE', `expected ${this.file('updated')} to be a symlink but it is a file`);
    renameSync(this.file('updated'), this.currentPath());
  }

  /** The current pair, or undefined when none is stored (or readable). Throws if `current` exists but is unusable. */
  current(): KeyPair | undefined {
    this.recover();
    if (lstat(this.currentPath())) {
      const text = readFileSync(this.currentPath(), 'utf8');
      return parseKeyPair(text);
    }
    const { fallbackCertFile: c, fallbackKeyFile: k } = this.o;
    if (c && k && lstat(c) && lstat(k)) return parseKeyPair(readFileSync(c, 'utf8'), readFileSync(k, 'utf8'));
    return undefined;
  }

  /** Writes a new pair (certificates from `certPem`, then `keyPem`) and points `current` at it. */
  async update(certPem: string, keyPem: string): Promise<KeyPair> {
    const certs = pemBlocks(certPem, 'CERTIFICATE');
    const keys = pemBlocks(keyPem, 'PRIVATE KEY');
    const pair = parseKeyPair(certs.join(''), keys[0] ?? '');
    mkdirSync(this.o.certDir, { recursive: true, mode: 0o755 });
    const target = path.resolve(this.file(pairTimestamp(this.o.now?.() ?? new Date())));
    const f = await open(target, 'w', 0o600);
    try {
      try {
        await f.writeFile(certs.join('') + keys[0]);
        await f.sync();
      } finally {
        await f.close();
      }
    } catch (e) {
      // A full disk: `current` still names the old pair; the part written goes.
      await rm(target, { force: true }).catch(() => undefined);
      throw e;
    }
    this.updateSymlink(target);
    return pair;
  }

  private updateSymlink(target: string): void {
    const current = lstat(this.currentPath());
    if (current && !current.isSymbolicLink()) throw nodeletError('NDL_CERT_STORE', `expected ${this.currentPath()} to be a symlink but it is a file`);
    const updatedPath = this.file('updated');
    const updated = lstat(updatedPath);
    if (updated && !updated.isSymbolicLink()) throw nodeletError('NDL_CERT_STORE', `expected ${updatedPath} to be a symlink but it is a file`);
    if (updated) rmSync(updatedPath);
    symlinkSync(target, updatedPath);
    renameSync(updatedPath, this.currentPath());
  }
}
