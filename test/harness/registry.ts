/**
 * A real OCI registry for tests: Debian's `docker-registry` (distribution 2.8.2)
 * on 127.0.0.1:<free port> with filesystem storage in a temp dir and, optionally,
 * basic auth from a bcrypt htpasswd file (made with `htpasswd -Bbn`, apache2-utils).
 *
 *   const reg = await startRegistry({ auth: { username: 'u', password: 'p' } });
 *   ... pull from `${reg.host}/repo:tag` ...
 *   await reg.blobGets('repo')   // blob GETs seen in the access log so far
 *   await reg.stop();
 *
 * Needs apt packages: docker-registry, apache2-utils (only when `auth` is used).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const REGISTRY_BIN = process.env.NODELET_REGISTRY_BIN ?? '/usr/bin/docker-registry';
const HTPASSWD_BIN = process.env.NODELET_HTPASSWD_BIN ?? 'htpasswd';

/** One line of the registry's access log. */
export interface AccessLogEntry {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** Options of {@link startRegistry}. */
export interface RegistryOptions {
  /** Require basic auth with this user. */
  readonly auth?: { readonly username: string; readonly password: string };
  /** Require bearer tokens from this issuer (`auth: token`; see token-issuer.ts). */
  readonly token?: { readonly realm: string; readonly service: string; readonly issuer: string; readonly rootCertBundle: string };
  /** How long to wait for `/v2/` to answer (ms). */
  readonly startTimeoutMs?: number;
}

/** A running registry. */
export interface TestRegistry {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** `127.0.0.1:<port>`, the domain part of image references. */
  readonly host: string;
  /** The registry's storage root (`storage.filesystem.rootdirectory`). */
  readonly storageDir: string;
  /**
   * Requests answered so far, from the access log (parsed from stdout). It first
   * sends a marker request and waits for its line, so every earlier request is in.
   */
  requests(): Promise<AccessLogEntry[]>;
  /** Number of `GET /v2/<repo>/blobs/sha256:...` requests so far (any repo when omitted). */
  blobGets(repo?: string): Promise<number>;
  /** Path of a blob's data file in the registry's storage (tests tamper with it). */
  blobDataPath(digest: string): string;
  /** Stops the registry and removes its temp dir. */
  stop(): Promise<void>;
}

async function htpasswdLine(username: string, password: string): Promise<string> {
  const { stdout } = await promisify(execFile)(HTPASSWD_BIN, ['-Bbn', username, password]);
  return stdout.trim();
}

function tokenYaml(t: NonNullable<RegistryOptions['token']>): string[] {
  return [
    'auth:',
    '  token:',
    ...Object.entries({ realm: t.realm, service: t.service, issuer: t.issuer, rootcertbundle: t.rootCertBundle }).map(
      ([k, v]) => `    ${k}: ${JSON.stringify(v)}`,
    ),
  ];
}

function configYaml(dir: string, port: number, htpasswdPath?: string, token?: RegistryOptions['token']): string {
  return [
    'version: 0.1',
    'log:',
    '  level: warn',
    '  accesslog:',
    '    disabled: false',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${JSON.stringify(join(dir, 'data'))}`,
    'http:',
    `  addr: 127.0.0.1:${port}`,
    '  secret: nodelet-test-secret',
    ...(htpasswdPath ? ['auth:', '  htpasswd:', '    realm: nodelet-test', `    path: ${JSON.stringify(htpasswdPath)}`] : []),
    ...(token && !htpasswdPath ? tokenYaml(token) : []),
    '',
  ].join('\n');
}

const ACCESS_RE = /"([A-Z]+) (\S+) HTTP\/[\d.]+" (\d{3}) /;

function collectAccessLog(child: ChildProcess, into: AccessLogEntry[], errors: string[]): void {
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const m = ACCESS_RE.exec(line);
      if (m) into.push({ method: m[1]!, path: m[2]!, status: Number(m[3]) });
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    errors.push(chunk);
    if (errors.length > 50) errors.shift();
  });
}

async function waitReady(url: string, child: ChildProcess, timeoutMs: number, errors: string[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited with ${child.exitCode}: ${errors.join('')}`);
    const ok = await fetch(`${url}/v2/`).then(
      (r) => r.status === 200 || r.status === 401,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50)); // the poll's interval (it fails early when the registry exits)
  }
  throw new Error(`docker-registry did not answer ${url}/v2/ within ${timeoutMs} ms: ${errors.join('')}`);
}

const MARKER = '/v2/?nodelet-log-marker=';
let markers = 0;

/** Sends a marker request and waits until its access-log line has been read. */
async function flushLog(url: string, log: AccessLogEntry[], child: ChildProcess): Promise<void> {
  const path = `${MARKER}${++markers}`;
  const seen = new Promise<void>((resolve) => {
    const check = () => {
      if (!log.some((e) => e.path === path)) return;
      child.stdout!.off('data', onData);
      resolve();
    };
    const onData = () => setImmediate(check);
    child.stdout!.on('data', onData);
  });
  await (await fetch(url + path)).arrayBuffer();
  await seen;
}

function stopper(child: ChildProcess, dir: string): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    })());
}

/** Starts a docker-registry and waits until `/v2/` answers. */
export async function startRegistry(opts: RegistryOptions = {}): Promise<TestRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-registry-'));
  let htpasswdPath: string | undefined;
  if (opts.auth) {
    htpasswdPath = join(dir, 'htpasswd');
    await writeFile(htpasswdPath, `${await htpasswdLine(opts.auth.username, opts.auth.password)}\n`);
  }
  const port = await freePort();
  const configPath = join(dir, 'config.yml');
  await writeFile(configPath, configYaml(dir, port, htpasswdPath, opts.token));
  const child = spawn(REGISTRY_BIN, ['serve', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: AccessLogEntry[] = [];
  const errors: string[] = [];
  collectAccessLog(child, log, errors);
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
  const url = `http://127.0.0.1:${port}`;
  const stop = stopper(child, dir);
  try {
    await Promise.race([waitReady(url, child, opts.startTimeoutMs ?? 15_000, errors), spawnError]);
  } catch (e) {
    await stop();
    throw e;
  }
  const storageDir = join(dir, 'data');
  const requests = async () => {
    await flushLog(url, log, child);
    return log.filter((e) => !e.path.startsWith(MARKER));
  };
  return {
    url,
    host: `127.0.0.1:${port}`,
    storageDir,
    requests,
    blobGets: async (repo) =>
      (await requests()).filter((e) => e.method === 'GET' && e.path.startsWith(repo ? `/v2/${repo}/blobs/` : '/v2/') && e.path.includes('/blobs/sha256:'))
        .length,
    blobDataPath: (digest) => {
      const hex = digest.replace(/^sha256:/, '');
      return join(storageDir, 'docker', 'registry', 'v2', 'blobs', 'sha256', hex.slice(0, 2), hex, 'data');
    },
    stop,
  };
}
