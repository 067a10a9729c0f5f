/** The js provider through the plugin API only, with a small fake image service. */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION } from '@nodelet/plugin-api/v1';
import { parseCriLine } from '@nodelet/plugin-api/v1/toolkit';
import createProvider, { KILLED_EXIT_CODE, TERMINATED_EXIT_CODE } from '../src/index.js';

/** @type {import('@nodelet/plugin-api/v1').Logger} */
const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };
/** @type {string} */
let root;
/** @type {Map<string, string>} */
const modules = new Map();
/** @type {import('@nodelet/plugin-api/v1').ImageRequest[]} */
const requests = [];
/** @type {import('../src/index.js').JsProvider} */
let provider;
/** @type {import('@nodelet/plugin-api/v1').PodContext} */
const ctx = { log, event: () => undefined, signal: new AbortController().signal, podDir: '/nonexistent' };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'provider-js-'));
  provider = /** @type {import('../src/index.js').JsProvider} */ (createProvider());
  await provider.init({
    log,
    rootDir: join(root, 'data'),
    signal: new AbortController().signal,
    images: {
      async pull(image, req) {
        requests.push(req);
        const code = modules.get(image);
        if (code === undefined) throw new Error(`manifest unknown: ${image}`);
        const digest = `sha256:${createHash('sha256').update(code).digest('hex')}`;
        const path = join(root, `${digest.slice(7)}.blob`);
        writeFileSync(path, code);
        return { image, imageID: `${image}@${digest}`, digest, path, size: code.length, cached: false };
      },
    },
  });
});
afterAll(async () => {
  await provider.shutdown();
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
/** @param {string} code @param {Partial<import('@nodelet/plugin-api/v1').ContainerSpec>} [extra] */
async function run(code, extra = {}) {
  const image = `registry.test/js/m${++n}:v1`;
  modules.set(image, code);
  const pulled = await provider.pullImage(image, { pullPolicy: 'IfNotPresent', credentials: [] }, ctx);
  const logPath = join(root, 'logs', `c${n}`, '0.log');
  /** @type {import('@nodelet/plugin-api/v1').ContainerSpec} */
  const spec = {
    id: `c${n}`,
    pod: { namespace: 'ns', name: 'p', uid: 'u' },
    name: 'main',
    image: pulled,
    argv: ['app.mjs'],
    env: {},
    mounts: [],
    limits: {},
    logPath,
    restartCount: 0,
    ...extra,
  };
  const running = await provider.startContainer(spec, ctx);
  const logLines = () =>
    readFileSync(logPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => /** @type {import('@nodelet/plugin-api/v1/toolkit').CriLogLine} */ (parseCriLine(l)));
  return { running, logLines };
}

describe('js provider', () => {
  it('declares its identity and asks for JavaScript layers', async () => {
    expect(provider).toMatchObject({ name: 'js', apiVersion: API_VERSION });
    expect('handlers' in provider).toBe(false); // declared once, in package.json
    expect(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).nodelet.handlers).toEqual(['js']);
    await run('');
    expect(requests.at(-1)?.acceptLayerTypes).toEqual(['text/javascript', 'application/javascript']);
  });

  it('runs a module with the container env and argv and writes stdout/stderr to the CRI log', async () => {
    const { running, logLines } = await run('console.log(`hello ${process.env.WHO} ${process.argv.slice(1).join(",")}`); console.error("warned");', {
      env: { WHO: 'world' },
      argv: ['app.mjs', '--flag', 'x'],
    });
    expect(await running.exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const lines = logLines();
    expect(lines.map((l) => [l.stream, l.content])).toEqual(
      expect.arrayContaining([
        ['stdout', 'hello world app.mjs,--flag,x'],
        ['stderr', 'warned'],
      ]),
    );
  });

  it('reports process.exit codes and uncaught errors', async () => {
    expect(await (await run('process.exit(3);')).running.exit).toMatchObject({ exitCode: 3, reason: 'Error' });
    const crashed = await run('throw new TypeError("bad input");');
    expect(await crashed.running.exit).toMatchObject({ exitCode: 1, reason: 'Error', message: 'bad input' });
    expect(crashed.logLines().some((l) => l.stream === 'stderr' && l.content.includes('TypeError: bad input'))).toBe(true);
  });

  it('maps volume mounts through the nodelet global and refuses paths outside them', async () => {
    const data = join(root, 'vol');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'in.txt'), 'from a volume');
    const code = `import { readFileSync } from 'node:fs';
      console.log(readFileSync(nodelet.resolve('/data/in.txt'), 'utf8'));
      try { nodelet.resolve('/data/../etc/passwd'); } catch (e) { console.log(e.message); }`;
    const { running, logLines } = await run(code, { mounts: [{ name: 'v', hostPath: data, containerPath: '/data', readOnly: true }] });
    expect((await running.exit).exitCode).toBe(0);
    expect(logLines().map((l) => l.content)).toEqual(['from a volume', '/data/../etc/passwd is not inside a volume mount']);
  });

  it('stops politely through a SIGTERM listener, and exits 143 without one', async () => {
    const polite = await run('process.on("SIGTERM", () => { console.log("bye"); process.exit(0); }); setInterval(() => {}, 1000);');
    await polite.running.stop(30_000);
    expect((await polite.running.exit).exitCode).toBe(0);
    expect(polite.logLines().map((l) => l.content)).toContain('bye');
    const plain = await run('setInterval(() => {}, 1000);');
    await plain.running.stop(30_000);
    expect((await plain.running.exit).exitCode).toBe(TERMINATED_EXIT_CODE);
  });

  it('terminates a module that ignores the stop once the grace period is over', async () => {
    const { running } = await run('process.on("SIGTERM", () => {}); setInterval(() => {}, 1000);');
    await running.stop(50);
    expect(await running.exit).toMatchObject({ exitCode: KILLED_EXIT_CODE, reason: 'Error' });
    expect(provider.runningCount).toBe(0);
  });

  it('reports an image it cannot fetch as a failed pull', async () => {
    await expect(provider.pullImage('registry.test/js/missing:v1', { pullPolicy: 'Always', credentials: [] }, ctx)).rejects.toThrow(/manifest unknown/);
  });
});
