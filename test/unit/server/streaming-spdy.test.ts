/**
 * The kubelet API's SPDY/3.1 streaming (/portForward, /attach) against a small
 * client written here the way client-go's is (header blocks compressed by a
 * real zlib deflater with the SPDY dictionary and sync flushes), and the codec.
 * The e2e test (test/e2e/streaming.test.ts) runs the real kubectl/apiserver.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { pino } from 'pino';
import type { V1Pod } from '@kubernetes/client-node';
import type { StreamIO } from '@nodelet/plugin-api/v1';
import { createKubeletServer, type KubeletServer } from '../../../core/server/kubelet-server.ts';
import type { ContainerTarget, PodSource } from '../../../core/server/pod-source.ts';
import { selfSignedCert } from '../../../core/server/serving-cert.ts';
import { containerLogDir, containerLogFile } from '../../../core/logs/log-paths.ts';
import { SPDY3_DICTIONARY } from '../../../core/server/spdy-dictionary.ts';
import {
  FLAG_FIN,
  FrameReader,
  FrameType,
  HeaderDeflater,
  controlFrame,
  dataFrame,
  headerBlock,
  parseHeaderBlock,
  words,
  type Frame,
} from '../../../core/server/spdy-frames.ts';
import { makeCa, makeClientCert, type Pem } from './test-pki.ts';

/** A SPDY client session (stream ids 1, 3, 5…), collecting what the server sends per stream. */
class Client {
  private readonly reader = new FrameReader();
  private readonly deflate = zlib.createDeflate({ dictionary: SPDY3_DICTIONARY });
  private readonly inflate = zlib.createInflate({ dictionary: SPDY3_DICTIONARY });
  private nextId = 1;
  readonly data = new Map<number, Buffer>();
  readonly fin = new Set<number>();
  readonly replied = new Set<number>();
  readonly reset = new Set<number>();
  readonly pings: number[] = [];
  goaway = false;
  private waiters: (() => void)[] = [];

  constructor(readonly sock: tls.TLSSocket) {
    sock.on('data', (c: Buffer) => this.frames(this.reader.push(c)));
  }

  private frames(fs: Frame[]) {
    for (const f of fs) {
      if (f.kind === 'data') {
        this.data.set(f.streamId, Buffer.concat([this.data.get(f.streamId) ?? Buffer.alloc(0), f.data]));
        if (f.flags & FLAG_FIN) this.fin.add(f.streamId);
      } else if (f.type === FrameType.SYN_REPLY) {
        this.inflate.write(f.body.subarray(4)); // keeps the server's zlib stream in step
        this.replied.add(f.body.readUInt32BE(0));
      } else if (f.type === FrameType.RST_STREAM) this.reset.add(f.body.readUInt32BE(0));
      else if (f.type === FrameType.PING) this.pings.push(f.body.readUInt32BE(0));
      else if (f.type === FrameType.GOAWAY) this.goaway = true;
    }
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves once `cond` holds (checked at every frame). */
  async until(cond: () => boolean): Promise<void> {
    while (!cond()) await new Promise<void>((r) => this.waiters.push(r));
  }

  text(id: number): string {
    return this.data.get(id)?.toString() ?? '';
  }

  /** Opens a stream with `headers`; resolves with its id once the server replied. */
  async open(headers: Record<string, string>, fin = false): Promise<number> {
    const id = this.nextId;
    this.nextId += 2;
    const block = await new Promise<Buffer>((resolve) => {
      const out: Buffer[] = [];
      const onData = (c: Buffer) => out.push(c);
      this.deflate.on('data', onData);
      this.deflate.write(headerBlock(headers));
      this.deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        this.deflate.off('data', onData);
        resolve(Buffer.concat(out));
      });
    });
    this.sock.write(controlFrame(FrameType.SYN_STREAM, fin ? FLAG_FIN : 0, Buffer.concat([words(id, 0), Buffer.from([0, 0]), block])));
    return id;
  }

  send(id: number, s: string, fin = false): void {
    this.sock.write(dataFrame(id, fin ? FLAG_FIN : 0, Buffer.from(s)));
  }
}

const NODE = 'node-1';
let root: string;
let server: KubeletServer;
let port: number;
let serving: Pem;
let client: Pem;
let echoPort: number;
const echo = net.createServer((s) => {
  s.on('data', (d) => s.write(`echo ${d}`));
  s.on('end', () => s.end('bye'));
});
const pod: V1Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
  spec: { containers: [{ name: 'app', image: 'x', stdin: true }] },
  status: { podIP: '127.0.0.1' },
};
let target: ContainerTarget | undefined;
let logFile: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'kubelet-spdy-'));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  echoPort = (echo.address() as net.AddressInfo).port;
  serving = await selfSignedCert(NODE, ['127.0.0.1']);
  const ca = await makeCa('test-client-ca');
  client = await makeClientCert(ca, 'kube-apiserver-kubelet-client', ['system:masters']);
  const pods: PodSource = { listPods: () => [pod], findContainer: () => target };
  const logDir = containerLogDir(root, { namespace: 'default', name: 'web', uid: 'uid-1' }, 'app');
  await mkdir(logDir, { recursive: true });
  logFile = containerLogFile(logDir, 0);
  await writeFile(logFile, '2024-05-01T10:00:00.000000000Z stdout F before attach\n');
  server = createKubeletServer({
    nodeName: NODE,
    log: pino({ level: 'silent' }),
    pods,
    tls: { cert: serving.cert, key: serving.key, ca: ca.cert },
    address: '127.0.0.1',
    port: 0,
    healthzAddress: '127.0.0.1',
    healthzPort: null,
    authorizer: () => ({ allowed: true }),
  });
  ({ port } = await server.start());
  return async () => {
    await server.close();
    echo.close();
    await rm(root, { recursive: true, force: true });
  };
});

/** Sends an upgrade request for `urlPath` offering `protocols`; resolves with the response head and the client. */
function upgrade(urlPath: string, protocols: string[], id: Pem | null = client): Promise<{ head: string; c: Client }> {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port, ca: serving.cert, servername: NODE, ...(id ? { cert: id.cert, key: id.key } : {}) }, () => {
      sock.write(
        `POST ${urlPath} HTTP/1.1\r\nHost: ${NODE}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n` +
          protocols.map((p) => `X-Stream-Protocol-Version: ${p}\r\n`).join('') +
          'Content-Length: 0\r\n\r\n',
      );
    });
    let buf = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      const c2 = new Client(sock);
      const rest = buf.subarray(end + 4);
      if (rest.length) sock.unshift(rest);
      resolve({ head: buf.subarray(0, end).toString(), c: c2 });
    };
    sock.on('data', onData);
    sock.on('error', reject);
  });
}

describe('SPDY codec', () => {
  it('header blocks from HeaderDeflater inflate with zlib and the SPDY dictionary, block after block', () => {
    const d = new HeaderDeflater();
    const a = d.compress({ streamtype: 'data', port: '80' });
    const b = d.compress({});
    const out = zlib.inflateSync(Buffer.concat([a, b]), { dictionary: SPDY3_DICTIONARY, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    const first = headerBlock({ streamtype: 'data', port: '80' });
    expect(parseHeaderBlock(out.subarray(0, first.length))).toEqual({ streamtype: 'data', port: '80' });
    expect(parseHeaderBlock(out.subarray(first.length))).toEqual({});
  });

  it('FrameReader returns whole frames whatever the chunking', () => {
    const bytes = Buffer.concat([controlFrame(FrameType.PING, 0, words(7)), dataFrame(3, FLAG_FIN, Buffer.from('hi'))]);
    const r = new FrameReader();
    const frames = [...bytes].flatMap((x) => r.push(Buffer.from([x])));
    expect(frames).toEqual([
      { kind: 'control', version: 3, type: FrameType.PING, flags: 0, body: words(7) },
      { kind: 'data', streamId: 3, flags: FLAG_FIN, data: Buffer.from('hi') },
    ]);
  });
});

describe('/portForward over SPDY', () => {
  it('upgrades with portforward.k8s.io, echoes PINGs, and forwards two connections to the pod address', async () => {
    const { head, c } = await upgrade('/portForward/default/web', ['portforward.k8s.io']);
    expect(head).toMatch(/^HTTP\/1\.1 101 /);
    expect(head).toMatch(/\r\nUpgrade: SPDY\/3\.1/i);
    expect(head).toMatch(/\r\nX-Stream-Protocol-Version: portforward\.k8s\.io/i);
    c.sock.write(controlFrame(FrameType.PING, 0, words(1)));
    await c.until(() => c.pings.includes(1));
    for (const req of ['0', '1']) {
      const err = await c.open({ streamtype: 'error', port: String(echoPort), requestid: req }, true);
      const data = await c.open({ streamtype: 'data', port: String(echoPort), requestid: req });
      await c.until(() => c.replied.has(err) && c.replied.has(data));
      c.send(data, `hello ${req}`);
      await c.until(() => c.text(data) === `echo hello ${req}`);
      c.send(data, '', true); // the client is done: the pod sees end of input and says bye
      await c.until(() => c.fin.has(data) && c.fin.has(err));
      expect(c.text(data)).toBe(`echo hello ${req}bye`);
      expect(c.text(err)).toBe('');
    }
    c.sock.destroy();
  });

  it('writes upstream-like text on the error stream when nothing listens, and resets the data stream', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const dead = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const { c } = await upgrade('/portForward/default/web', ['portforward.k8s.io']);
    const err = await c.open({ streamtype: 'error', port: String(dead), requestid: '0' }, true);
    const data = await c.open({ streamtype: 'data', port: String(dead), requestid: '0' });
    await c.until(() => c.reset.has(data));
    await c.until(() => c.text(err).length > 0);
    expect(c.text(err)).toBe(`error forwarding port ${dead} to pod web, uid uid-1: connect ECONNREFUSED 127.0.0.1:${dead}`);
    c.sock.destroy();
  });

  it('authenticates an upgrade like any request: no client certificate, 401 and no upgrade', async () => {
    const { head } = await upgrade('/portForward/default/web', ['portforward.k8s.io'], null);
    expect(head).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('refuses a protocol it does not speak, without upgrading', async () => {
    const { head } = await upgrade('/portForward/default/web', ['portforward.k8s.io.v2']);
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
  });
});

describe('/attach over SPDY', () => {
  /** Makes the attached container a running one whose provider's attach is `attach`; `exit()` ends it. */
  const runningTarget = (attach: (io: StreamIO) => Promise<void>): { exit: () => void } => {
    let exit!: () => void;
    target = { logDir: path.dirname(logFile), restartCount: 0, running: true, providerName: 'fake', exited: new Promise<void>((r) => (exit = r)), attach };
    return { exit };
  };

  it('streams the output appended after attaching, feeds stdin to the provider, and ends with a v4 Success status when the container exits', async () => {
    const got: string[] = [];
    const { exit } = runningTarget(async (io) => {
      for await (const chunk of io.stdin!) {
        got.push(Buffer.from(chunk).toString());
        const line = Buffer.from(chunk).toString().trim();
        await appendFile(logFile, `2024-05-01T10:00:01.000000000Z stdout F echo: ${line}\n2024-05-01T10:00:01.000000000Z stderr F note: ${line}\n`);
      }
    });
    const { head, c } = await upgrade('/attach/default/web/app?input=1&output=1&error=1', ['v4.channel.k8s.io', 'v3.channel.k8s.io']);
    expect(head).toMatch(/\r\nX-Stream-Protocol-Version: v4\.channel\.k8s\.io/i);
    const err = await c.open({ streamtype: 'error' });
    const stdin = await c.open({ streamtype: 'stdin' });
    const stdout = await c.open({ streamtype: 'stdout' });
    const stderr = await c.open({ streamtype: 'stderr' });
    await c.until(() => [err, stdin, stdout, stderr].every((id) => c.replied.has(id)));
    c.send(stdin, 'hi there\n');
    await c.until(() => c.text(stdout).includes('echo: hi there\n') && c.text(stderr).includes('note: hi there\n'));
    expect(c.text(stdout)).not.toContain('note:');
    expect(c.text(stderr)).not.toContain('echo:');
    expect(got).toEqual(['hi there\n']);
    expect(c.text(stdout)).not.toContain('before attach');
    exit();
    await c.until(() => c.fin.has(err));
    expect(JSON.parse(c.text(err))).toEqual({ metadata: {}, status: 'Success' });
    await c.until(() => c.goaway);
    c.sock.destroy();
    target = undefined;
  });

  it('never loses output written in answer to input that came with the streams: the input waits until the log is followed from its end', async () => {
    const { exit } = runningTarget(async (io) => {
      // Answers at once, in the same turn: before the fix this landed before the followers had found the log's end.
      for await (const chunk of io.stdin!) appendFileSync(logFile, `2024-05-01T10:00:02.000000000Z stdout F answer: ${Buffer.from(chunk).toString().trim()}\n`);
    });
    const { c } = await upgrade('/attach/default/web/app?input=1&output=1&error=1', ['v4.channel.k8s.io']);
    const err = await c.open({ streamtype: 'error' });
    const stdin = await c.open({ streamtype: 'stdin' });
    // The input is there before the last stream is, so the session starts with it waiting.
    c.send(stdin, 'early\n');
    const stdout = await c.open({ streamtype: 'stdout' });
    const stderr = await c.open({ streamtype: 'stderr' });
    await c.until(() => [err, stdin, stdout, stderr].every((id) => c.replied.has(id)));
    await Promise.race([
      c.until(() => c.text(stdout).includes('answer: early\n')),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer on stdout; got ${JSON.stringify(c.text(stdout))}`)), 5000)),
    ]);
    expect(c.text(stdout)).not.toContain('before attach');
    exit();
    await c.until(() => c.fin.has(err));
    expect(JSON.parse(c.text(err))).toEqual({ metadata: {}, status: 'Success' });
    c.sock.destroy();
    target = undefined;
  });
});
