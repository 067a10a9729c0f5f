/**
 * The platform interfaces (wasi:config, wasi:keyvalue, wasi:logging): their backends, how a pod
 * configures them, the import check, a cli component using them through jco's bindings (the
 * one-instance path), and an http component naming the 0.2.0-draft versions served per request
 * (the 0.2.0-draft2 ones are shown end to end by test/e2e/wasi-platform.test.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidArgument, isInvalidImage } from '@nodelet/plugin-api/v1';
import { WasiProvider } from '../src/index.ts';
import { checkComponent } from '../src/component-cache.ts';
import { configFromEnv } from '../src/platform/config-store.mjs';
import { KeyValueStores, KeyValueError } from '../src/platform/keyvalue-store.mjs';
import { platformConfig } from '../src/platform/platform-config.ts';
import { logLine } from '../src/platform/log-line.mjs';
import { encodeCommand, parseReply, parseRedisUrl } from '../src/platform/resp-client.mjs';
import { buildComponent } from '../../../test/harness/wasm-components.ts';
import { freePort } from '../../../test/harness/ports.ts';
import { until } from '../../../test/harness/until.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, scratch, spec } from './helpers.ts';

const tmp = scratch();
const redisMissing = spawnSync('redis-server', ['--version']).status === 0 ? undefined : 'redis-server is not installed';
afterAll(() => tmp.cleanup());

describe('wasi:config: the SPIN_VARIABLE_* environment', () => {
  it('reads SPIN_VARIABLE_<KEY> by key in any case; get-all lists the keys in lower case; other variables are not configuration', () => {
    const c = configFromEnv({ SPIN_VARIABLE_API_KEY: 'k', SPIN_VARIABLE_greeting: 'hi', PATH: '/bin', SPIN_VARIABLE_: 'empty name' });
    expect(c.get('api_key')).toBe('k');
    expect(c.get('API_KEY')).toBe('k');
    expect(c.get('greeting')).toBe('hi');
    expect(c.get('path')).toBeUndefined();
    expect(c.getAll()).toEqual([
      ['api_key', 'k'],
      ['greeting', 'hi'],
    ]);
  });

  it("when two spellings of one key are set, Spin's upper-case one wins", () => {
    expect(configFromEnv({ SPIN_VARIABLE_X: 'upper', SPIN_VARIABLE_x: 'lower' }).get('x')).toBe('upper');
    expect(configFromEnv({ SPIN_VARIABLE_x: 'lower', SPIN_VARIABLE_X: 'upper' }).get('x')).toBe('upper');
  });
});

describe('wasi:keyvalue: the SQLite store', () => {
  it('keeps values, counters as decimal text, pages of keys, compare-and-swap; a second opening of the file sees them', () => {
    const path = join(tmp.dir, 'kv', 'default.sqlite');
    const a = new KeyValueStores({ default: { type: 'sqlite', path } });
    const s = a.open('default');
    expect(s.increment('n', 5n)).toBe(5n);
    expect(s.increment('n', -7n)).toBe(-2n);
    expect(new TextDecoder().decode(s.get('n') as Uint8Array)).toBe('-2');
    void s.set('v', new Uint8Array([1, 2, 3]));
    expect(() => s.increment('v', 1n)).toThrow(KeyValueError);
    expect(s.swap('v', new Uint8Array([9]), new Uint8Array([4]))).toBe(false);
    expect(s.swap('v', new Uint8Array([1, 2, 3]), new Uint8Array([4]))).toBe(true);
    expect(s.swap('new', undefined, new Uint8Array([5]))).toBe(true);
    expect(s.swap('new', undefined, new Uint8Array([6]))).toBe(false);
    void s.setMany(Array.from({ length: 1200 }, (_, i) => [`k${String(i).padStart(4, '0')}`, new Uint8Array([i & 0xff])] as const));
    const first = s.listKeys(undefined) as { keys: string[]; cursor: string | undefined };
    expect(first.keys).toHaveLength(1000);
    const second = s.listKeys(first.cursor) as { keys: string[]; cursor: string | undefined };
    expect(second.cursor).toBeUndefined();
    expect(new Set([...first.keys, ...second.keys]).size).toBe(1203);
    a.close();
    const b = new KeyValueStores({ default: { type: 'sqlite', path } });
    expect(b.open('default').get('v')).toEqual(new Uint8Array([4]));
    expect(() => b.open('other')).toThrow(/no key-value store is labelled "other"/);
    b.close();
  });
});

describe('how a pod configures its stores', () => {
  const pod = (annotations: Record<string, string>) => ({ name: 'main', pod: { namespace: 'ns', name: 'p', uid: 'u', annotations } });

  it('default is SQLite under the pod dir; wasi.nodelet.dev/keyvalue-<label> puts a label on Redis or on SQLite', () => {
    expect(platformConfig(pod({}), '/pods/u')).toEqual({ keyvalue: { default: { type: 'sqlite', path: '/pods/u/wasi-keyvalue/default.sqlite' } } });
    const c = platformConfig(pod({ 'wasi.nodelet.dev/keyvalue-default': 'redis://10.0.0.1:6380/2', 'wasi.nodelet.dev/keyvalue-cache': 'sqlite' }), '/d');
    expect(c.keyvalue).toEqual({
      default: { type: 'redis', url: 'redis://10.0.0.1:6380/2' },
      cache: { type: 'sqlite', path: '/d/wasi-keyvalue/cache.sqlite' },
    });
  });

  it('a malformed annotation fails the start (InvalidArgument), without the URL password in the message', () => {
    for (const [value, why] of [
      ['http://x', 'neither "sqlite" nor a redis:// URL'],
      ['redis://:hunter2@host/x', 'must be a database number'],
      ['rediss://:hunter2@host', 'neither'],
    ] as const) {
      let err: unknown;
      try {
        platformConfig(pod({ 'wasi.nodelet.dev/keyvalue-default': value }), '/d');
      } catch (e) {
        err = e;
      }
      expect(isInvalidArgument(err)).toBe(true);
      expect((err as Error).message).toContain(why);
      expect((err as Error).message).not.toContain('hunter2');
    }
    expect(() => platformConfig(pod({ 'wasi.nodelet.dev/keyvalue-Bad.Label': 'sqlite' }), '/d')).toThrow(/store label/);
  });
});

describe('the import check', () => {
  it('accepts the platform interfaces at the versions provided, and names any other version with the ones provided', () => {
    const run = ['wasi:cli/run@0.2.0'];
    expect(
      checkComponent(
        'img',
        [
          'wasi:config/store@0.2.0-draft',
          'wasi:config/store@0.2.0-draft-2024-09-27',
          'wasi:keyvalue/store@0.2.0-draft2',
          'wasi:keyvalue/atomics@0.2.0-draft',
          'wasi:keyvalue/batch@0.2.0-draft2',
          'wasi:logging/logging@0.1.0-draft',
        ],
        run,
      ),
    ).toBe('cli');
    let err: unknown;
    try {
      checkComponent('img', ['wasi:keyvalue/store@0.1.0', 'wasi:keyvalue/watcher@0.2.0-draft2', 'wasi:blobstore/blobstore@0.2.0-draft'], run);
    } catch (e) {
      err = e;
    }
    expect(isInvalidImage(err)).toBe(true);
    expect((err as Error).message).toContain(
      'imports wasi:keyvalue/store@0.1.0 (nodelet provides @0.2.0-draft, @0.2.0-draft2), wasi:keyvalue/watcher@0.2.0-draft2, wasi:blobstore/blobstore@0.2.0-draft, which nodelet does not provide',
    );
  });
});

describe('wasi:logging lines', () => {
  it('one line with the level; warn and above to stderr; line breaks kept in the line', () => {
    expect(logLine('info', 'app', 'hello')).toEqual({ stream: 'stdout', line: 'INFO     app: hello\n' });
    expect(logLine('critical', '', 'a\nb')).toEqual({ stream: 'stderr', line: 'CRITICAL a\\nb\n' });
  });
});

describe('the RESP client', () => {
  it('encodes commands as bulk strings and parses replies, also split across reads', () => {
    expect(encodeCommand(['SET', 'k', new Uint8Array([0, 255])]).toString('latin1')).toBe('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n\x00\xff\r\n');
    const reply = Buffer.from('*2\r\n$1\r\n7\r\n*2\r\n$1\r\na\r\n$-1\r\n:42\r\n');
    expect(parseReply(reply.subarray(0, 12), 0)).toBeUndefined();
    const r = parseReply(reply, 0)!;
    expect(r.value).toEqual([Buffer.from('7'), [Buffer.from('a'), null]]);
    expect(parseReply(reply, r.next)?.value).toBe(42n);
    expect(String(parseReply(Buffer.from('-ERR wrong\r\n'), 0)?.value)).toContain('ERR wrong');
    expect(parseRedisUrl('redis://u:p%40ss@[::1]:6380/3')).toEqual({ host: '::1', port: 6380, db: 3, user: 'u', password: 'p@ss' });
  });
});

describe('a cli component using the platform interfaces (jco bindings, one instance)', () => {
  let provider: WasiProvider;
  let redis: ChildProcess | undefined;
  let redisPort: number;
  const rootDir = join(tmp.dir, 'root');
  beforeAll(async () => {
    mkdirSync(rootDir, { recursive: true });
    provider = new WasiProvider(); // in-process
    await provider.init(providerContext(new FakeImages(), rootDir));
    redisPort = await freePort();
    if (!redisMissing)
      redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  }, 600_000);
  afterAll(async () => {
    await provider.shutdown();
    redis?.kill();
  });
  const podDir = join(tmp.dir, 'pod');
  const run = async (args: string[], annotations: Record<string, string> = {}) => {
    const image = pulledFile(await buildComponent('platform-cli'), 'fixture:platform-cli');
    const s = spec(image, tmp.dir, args, { env: { SPIN_VARIABLE_GREETING: 'hi there' }, pod: { namespace: 'ns', name: 'p', uid: 'u1', annotations } });
    const exit = await (await provider.startContainer(s, { ...podContext(), podDir })).exit;
    expect(exit.exitCode).toBe(0);
    return { out: logText(s.logPath), err: logText(s.logPath, 'stderr') };
  };

  it('counts in the pod’s SQLite store across runs, runs every operation, reads config, logs with levels', async () => {
    const first = await run(['count:default', 'count:default', 'kv:default', 'config:greeting', 'config:missing', 'count:elsewhere', 'log']);
    expect(first.out.split('\n').slice(0, 6)).toEqual([
      'count:default=1',
      'count:default=2',
      'kv:default=ok',
      'config:greeting=hi there',
      'config:missing=<none>',
      'count:elsewhere=Error::NoSuchStore',
    ]);
    expect(first.out).toContain('INFO     platform-cli: an info line\n');
    expect(first.err).toBe('ERROR    an error line\n');
    // A new container of the same pod: the store is still there.
    expect((await run(['count:default'])).out).toBe('count:default=3\n');
  });

  it.skipIf(redisMissing !== undefined)(
    `a store on Redis: the thread blocks until it answers, every operation works (${redisMissing ?? 'redis-server found'})`,
    async () => {
      const annotations = { 'wasi.nodelet.dev/keyvalue-shared': `redis://127.0.0.1:${redisPort}` };
      await until('redis answers', async () => (await run(['count:shared'], annotations)).out === 'count:shared=1\n', 10_000);
      expect((await run(['count:shared', 'kv:shared', 'count:shared'], annotations)).out).toBe('count:shared=2\nkv:shared=ok\ncount:shared=3\n');
    },
  );

  it('a Redis store that cannot be reached answers an error value naming why', async () => {
    const dead = await freePort();
    const { out } = await run(['count:down'], { 'wasi.nodelet.dev/keyvalue-down': `redis://127.0.0.1:${dead}` });
    expect(out).toMatch(/^count:down=Error::Other\(".*ECONNREFUSED/);
  });
});

describe('an http component naming the 0.2.0-draft versions (wasmCloud), served per request', () => {
  let provider: WasiProvider;
  let redis: ChildProcess | undefined;
  let base: string;
  const rootDir = join(tmp.dir, 'root-draft');
  beforeAll(async () => {
    mkdirSync(rootDir, { recursive: true });
    provider = new WasiProvider(); // in-process
    await provider.init(providerContext(new FakeImages(), rootDir));
    const redisPort = await freePort();
    const deadPort = await freePort(); // nothing listens there
    if (!redisMissing) {
      redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    }
    const port = await freePort();
    const lines: string[] = [];
    const s = spec(pulledFile(await buildComponent('platform-draft'), 'fixture:platform-draft'), tmp.dir, [], {
      env: { SPIN_VARIABLE_greeting: 'hello, draft' },
      pod: {
        namespace: 'ns',
        name: 'p',
        uid: 'u2',
        annotations: {
          'wasi.nodelet.dev/keyvalue-shared': `redis://127.0.0.1:${redisPort}`,
          'wasi.nodelet.dev/keyvalue-down': `redis://127.0.0.1:${deadPort}`,
        },
      },
      ports: [{ containerPort: port, protocol: 'TCP' }],
      network: { podIPs: [], hostNetwork: false },
    });
    await provider.startContainer(s, { ...podContext(lines), podDir: join(tmp.dir, 'pod-draft') });
    expect(lines.join('\n')).not.toContain('served with one instance');
    base = `http://127.0.0.1:${port}`;
  }, 600_000);
  afterAll(async () => {
    await provider.shutdown();
    redis?.kill();
  });
  const get = async (path: string) => (await fetch(`${base}${path}`)).text();

  it('increment (u64), every store and batch operation, list-keys over two pages (a u64 cursor) on SQLite; config; no-such-store', async () => {
    expect(await get('/count')).toBe('2');
    expect(await get('/count')).toBe('4');
    expect(await get('/kv')).toBe('ok pages=2');
    expect(await get('/config/greeting')).toBe('hello, draft');
    expect(await get('/open/nope')).toBe('Error::NoSuchStore');
  });

  it.skipIf(redisMissing !== undefined)(
    `the same on a Redis store, waiting without blocking the thread (${redisMissing ?? 'redis-server found'})`,
    async () => {
      await until('redis answers', async () => (await get('/count?store=shared')) === '2', 10_000);
      const [a, b] = await Promise.all([get('/kv?store=shared'), get('/count?store=shared')]);
      expect(a).toMatch(/^ok pages=\d+$/);
      expect(b).toBe('4');
    },
  );

  it('a store that cannot be reached answers an error value naming why, not a trap; the container serves on', async () => {
    expect(await get('/count?store=down')).toMatch(/^Error::Other\(".*ECONNREFUSED/);
    expect(await get('/config/greeting')).toBe('hello, draft');
  });
});
