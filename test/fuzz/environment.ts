/**
 * What the fuzz suite runs against: a standalone nodelet (the README's way,
 * from the built entry) with its own root dir, static pod directory and a
 * canary directory beside them that no input may touch, plus the oracles:
 * process alive, `/healthz` answering, the canary unchanged, and no file with
 * the escape marker anywhere but under the root dir.
 *
 *   <base>/root        --root-dir
 *   <base>/manifests   --pod-manifest-path (modules too, as file: images)
 *   <base>/canary      secret.txt (a random token) — read and written by nobody
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { nodeBinary } from '../harness/node-binary.ts';
import { freePort } from '../harness/ports.ts';
import { startPeer, type Peer } from '../harness/process.ts';
import { killWasiRuntime, trackWasiRuntime } from '../harness/wasi-runtimes.ts';
import { unmountUnder } from '../harness/unmount-under.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'nodelet.mjs');

/** Name part of every file an input tries to create outside the roots. */
export const ESCAPE_MARKER = 'ndlfuzz-escape';

/** An HTTP answer, or why there was none. */
export type HttpResult = { status: number; body: string } | { error: string } | { timeout: true };

/** The node under fuzz and its oracles. */
export class FuzzEnvironment {
  readonly base: string;
  readonly rootDir: string;
  readonly manifestDir: string;
  readonly canaryDir: string;
  /** The canary file's content: no answer, log line or file outside the canary may contain it. */
  readonly secret = `canary-${randomBytes(12).toString('hex')}`;
  readonly nodeName = 'fuzz';
  private peer?: Peer;
  private port = 0;
  private healthzPort = 0;
  private tls?: { ca: Buffer; cert: Buffer; key: Buffer };
  private canaryHash = '';

  constructor(readonly extraArgs: string[] = []) {
    this.base = mkdtempSync(join(tmpdir(), 'nodelet-fuzz-'));
    this.rootDir = join(this.base, 'root');
    this.manifestDir = join(this.base, 'manifests');
    this.canaryDir = join(this.base, 'canary');
    for (const d of [this.rootDir, this.manifestDir, this.canaryDir]) mkdirSync(d, { recursive: true });
    writeFileSync(join(this.canaryDir, 'secret.txt'), this.secret);
    this.canaryHash = this.hashCanary();
  }

  get logFile(): string {
    return join(this.base, 'nodelet.log');
  }

  /** The pod interface of this node (deleted at the end). */
  get podInterface(): string {
    return `ndlfz${createHash('sha256').update(this.base).digest('hex').slice(0, 9)}`;
  }

  /** Starts nodelet and waits until its API answers. */
  async start(): Promise<void> {
    this.port = await freePort();
    this.healthzPort = await freePort();
    const args = [
      BIN,
      `--root-dir=${this.rootDir}`,
      `--pod-manifest-path=${this.manifestDir}`,
      `--hostname-override=${this.nodeName}`,
      '--address=127.0.0.1',
      `--port=${this.port}`,
      `--healthz-port=${this.healthzPort}`,
      `--pod-interface=${this.podInterface}`,
      '--image-pull-progress-deadline=3s',
      ...this.extraArgs,
    ];
    // WASI modules in nodelet's process, as most e2e nodes (NODELET_E2E_WASI_RUNTIME=external: the
    // external runtime, nodelet's default, ended in dispose()).
    trackWasiRuntime(this.rootDir);
    const env = { ...process.env, NODELET_WASI_RUNTIME: process.env.NODELET_E2E_WASI_RUNTIME || 'in-process' };
    this.peer = startPeer('nodelet-fuzz', nodeBinary(), args, this.logFile, { env });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (!this.alive()) throw new Error(`nodelet exited at start (code ${this.peer.proc.exitCode}); log: ${this.logFile}`);
      if (await this.healthz()) break;
      await new Promise((r) => setTimeout(r, 200)); // the poll's interval (it fails early when nodelet exits)
    }
    const pki = join(this.rootDir, 'pki');
    this.tls = {
      ca: readFileSync(join(pki, 'kubelet.crt')),
      cert: readFileSync(join(pki, 'local-client.crt')),
      key: readFileSync(join(pki, 'local-client.key')),
    };
  }

  /** Whether the nodelet process is still running. */
  alive(): boolean {
    const p = this.peer?.proc;
    return !!p && p.exitCode === null && p.signalCode === null;
  }

  /** How the process ended, if it did. */
  exitDescription(): string {
    const p = this.peer?.proc;
    return p ? `exit code ${p.exitCode}, signal ${p.signalCode}` : 'not started';
  }

  /** `/healthz` on the plain healthz port answers `ok` within 5 s. */
  async healthz(): Promise<boolean> {
    try {
      const r = await fetch(`http://127.0.0.1:${this.healthzPort}/healthz`, { signal: AbortSignal.timeout(5000) });
      return r.status === 200 && (await r.text()) === 'ok';
    } catch {
      return false;
    }
  }

  /** One request to the kubelet API (TLS); `auth` picks the local client certificate or none. */
  api(
    o: RequestOptions & { auth?: 'cert' | 'anonymous'; body?: Buffer | string; timeoutMs?: number; streamMs?: number; maxBody?: number },
  ): Promise<HttpResult> {
    const { auth = 'cert', body, timeoutMs = 5000, streamMs, maxBody = 1 << 20, ...opts } = o;
    return new Promise((done) => {
      let req: ReturnType<typeof request>;
      try {
        req = request(
          {
            host: '127.0.0.1',
            port: this.port,
            agent: false,
            // A generated Host header must reach nodelet, not stop at the client's name check (the CA is still checked).
            checkServerIdentity: () => undefined,
            ca: this.tls!.ca,
            ...(auth === 'cert' ? { cert: this.tls!.cert, key: this.tls!.key } : {}),
            ...opts,
          },
          (res) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (c: Buffer) => {
              if (size < maxBody) chunks.push(c);
              size += c.length;
            });
            const finish = () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
            res.on('end', finish);
            res.on('error', finish);
            // A following stream (logs with follow=true) answered: the status is the outcome.
            if (streamMs !== undefined) setTimeout(() => (finish(), req.destroy()), streamMs).unref();
          },
        );
      } catch (e) {
        // Node's client refuses some generated requests before sending them (e.g. an invalid header).
        return done({ error: `client: ${(e as Error).message}` });
      }
      req.setTimeout(timeoutMs, () => (done({ timeout: true }), req.destroy()));
      req.on('error', (e) => done({ error: e.message }));
      req.end(body);
    });
  }

  /** The API port and TLS material (for raw-socket inputs). */
  endpoint(): { port: number; ca: Buffer; cert: Buffer; key: Buffer } {
    return { port: this.port, ...this.tls! };
  }

  /** The pods nodelet reports on `/pods`. */
  async pods(): Promise<Array<{ metadata?: { name?: string }; status?: PodStatusLike }>> {
    // A pod list can be large: fuzz pods carry 1 MiB env values and 20,000 args.
    const r = await this.api({ path: '/pods', timeoutMs: 20_000, maxBody: 256 << 20 });
    if (!('status' in r) || r.status !== 200) throw new Error(`/pods: ${JSON.stringify(r).slice(0, 200)}`);
    return (JSON.parse(r.body) as { items?: [] }).items ?? [];
  }

  /** nodelet's log text from byte `from` on. */
  logFrom(from: number): string {
    return readFileSync(this.logFile).subarray(from).toString('utf8');
  }

  /** The log's current size (an offset for {@link logFrom}). */
  logSize(): number {
    return statSync(this.logFile).size;
  }

  private hashCanary(): string {
    const h = createHash('sha256');
    for (const f of readdirSync(this.canaryDir).sort()) h.update(f).update(readFileSync(join(this.canaryDir, f)));
    return h.digest('hex');
  }

  /** Files outside the root dir whose name carries the escape marker, plus a changed canary. Empty when nothing escaped. */
  async escapes(): Promise<string[]> {
    const found: string[] = [];
    if (this.hashCanary() !== this.canaryHash) found.push(`${this.canaryDir} changed`);
    const hits = await new Promise<string>((done) =>
      execFile('find', [tmpdir(), '/var/tmp', '-xdev', '-maxdepth', '6', '-name', `*${ESCAPE_MARKER}*`], { maxBuffer: 1 << 22 }, (_e, out) => done(out)),
    );
    for (const p of hits.split('\n').filter(Boolean)) if (!p.startsWith(this.rootDir + '/')) found.push(p);
    return found;
  }

  /** Stops nodelet and removes everything it and the inputs made. */
  async dispose(): Promise<void> {
    await this.peer?.stop('SIGTERM', 30_000);
    await killWasiRuntime(this.rootDir);
    await new Promise((done) => execFile('ip', ['link', 'del', this.podInterface], () => done(undefined)));
    // nodelet keeps tmpfs volume mounts (Memory emptyDirs) when it stops, as upstream does.
    unmountUnder(this.rootDir);
    // NODELET_FUZZ_KEEP=1 keeps the root dir, manifests and nodelet's log for a post-mortem.
    if (process.env.NODELET_FUZZ_KEEP) console.log(`fuzz: kept ${this.base}`);
    else rmSync(this.base, { recursive: true, force: true });
  }
}

/** The part of a pod status the classifiers read. */
export interface PodStatusLike {
  phase?: string;
  reason?: string;
  message?: string;
  containerStatuses?: Array<{
    state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number; message?: string }; running?: object };
  }>;
}
