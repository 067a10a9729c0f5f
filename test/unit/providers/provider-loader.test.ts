import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ImageService, Logger, ServiceResolver } from '@nodelet/plugin-api/v1';
import { loadProviders, type ProviderLoadOptions } from '../../../core/providers/index.ts';

const lines: string[] = [];
const log: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (o, m) => {
    lines.push(`${typeof o === 'string' ? o : m}`);
  },
  error: (o, m) => {
    lines.push(`${typeof o === 'string' ? o : m}`);
  },
  child: () => log,
};
const images: ImageService = { pull: () => Promise.reject(new Error('unused')) };

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'providers-'));
  lines.length = 0;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A provider module body exporting a container provider. */
const body = (name: string, handlers = [name], extra = '') => `
export default function createProvider() {
  return { name: ${JSON.stringify(name)}, apiVersion: 'nodelet.dev/v1', handlers: ${JSON.stringify(handlers)}, architecture: 'test', os: 'test',
    runtimeVersion: 'test://1', pullImage: async () => ({}), startContainer: async () => ({}), ${extra} };
}`;

function pkg(dir: string, name: string, opts: { manifest?: unknown; raw?: string; entry?: string; code?: string; handlers?: string[] } = {}): string {
  const d = join(root, dir, name);
  mkdirSync(join(d, 'src'), { recursive: true });
  const handlers = opts.handlers ?? [name];
  const manifest = opts.manifest ?? { name: `@test/${name}`, nodelet: { apiVersion: 'nodelet.dev/v1', entry: opts.entry ?? './src/index.mjs', handlers } };
  writeFileSync(join(d, 'package.json'), opts.raw ?? JSON.stringify(manifest));
  writeFileSync(join(d, 'src', 'index.mjs'), opts.code ?? body(name, handlers));
  return d;
}

const load = (extra: Partial<ProviderLoadOptions> = {}) =>
  loadProviders({
    dirs: [join(root, 'a'), join(root, 'b')],
    dataRoot: join(root, 'data'),
    images,
    signal: new AbortController().signal,
    log,
    ...extra,
  });
const codes = (r: Awaited<ReturnType<typeof load>>) => Object.fromEntries(r.failures.map((f) => [f.packageName ?? f.dir.split('/').pop(), f.code]));

describe('loadProviders', () => {
  it("hands every provider the node's Service resolver as ctx.services (absent without one)", async () => {
    pkg('a', 'svc', {
      code: body(
        'svc',
        ['svc'],
        `init: async (ctx) => { globalThis.__svcRoute = ctx.services?.route('web', 80, { pod: { namespace: 'ns', name: 'p', uid: 'u' } }); }`,
      ),
    });
    const services: ServiceResolver = {
      resolve: () => ({ kind: 'direct' }),
      lookup: () => ({ kind: 'forward' }),
      route: (host, port) => ({ kind: 'connect', host: `${host}-endpoint`, port }),
    };
    expect((await load({ services })).failures).toEqual([]);
    expect((globalThis as Record<string, unknown>).__svcRoute).toEqual({ kind: 'connect', host: 'web-endpoint', port: 80 });
    rmSync(join(root, 'data'), { recursive: true, force: true });
    expect((await load()).failures).toEqual([]);
    expect((globalThis as Record<string, unknown>).__svcRoute).toBeUndefined();
  });

  it('loads good providers (factory, createProvider, provider object) and gives init its own data dir', async () => {
    pkg('a', 'one', { code: body('one', ['one'], `init: async (ctx) => { globalThis.__oneInit = ctx.rootDir; }`) });
    pkg('a', 'two', {
      code: `export function createProvider() { return (${body('two')
        .split('return ')[1]!
        .replace(/;\s*}\s*$/, '')}); }`,
    });
    pkg('a', 'three', {
      code: body('three')
        .replace('export default function createProvider() {\n  return', 'export default')
        .replace(/;\s*}\s*$/, ';'),
    });
    const r = await load();
    expect(r.failures).toEqual([]);
    expect(r.providers.map((p) => p.provider.name)).toEqual(['one', 'three', 'two']);
    expect((globalThis as Record<string, unknown>).__oneInit).toBe(join(root, 'data', 'one'));
    expect(existsSync(join(root, 'data', 'one'))).toBe(true);
  });

  it('skips each broken package with its catalogued code and keeps the good ones', async () => {
    pkg('a', 'good');
    pkg('a', 'oldapi', { manifest: { name: '@test/oldapi', nodelet: { apiVersion: 'nodelet.dev/v0', entry: './src/index.mjs', handlers: ['oldapi'] } } });
    pkg('a', 'throws', { code: 'throw new Error("boom at import");' });
    pkg('a', 'badjson', { raw: '{ "name": "@test/badjson", nodelet: ' });
    pkg('a', 'outside', { entry: '../../elsewhere.mjs' });
    pkg('a', 'noshape', { code: body('noshape').replace('startContainer: async () => ({}),', '') });
    pkg('a', 'nonodelet', { manifest: { name: '@test/nonodelet' } });
    mkdirSync(join(root, 'a', 'nopkg'));
    const r = await load();
    expect(r.providers.map((p) => p.provider.name)).toEqual(['good']);
    expect(codes(r)).toEqual({
      '@test/oldapi': 'NDL_PROVIDER_API_VERSION',
      '@test/throws': 'NDL_PROVIDER_IMPORT',
      badjson: 'NDL_PROVIDER_MANIFEST_INVALID',
      '@test/outside': 'NDL_PROVIDER_ENTRY_OUTSIDE',
      '@test/noshape': 'NDL_PROVIDER_SHAPE',
      nonodelet: 'NDL_PROVIDER_MANIFEST',
      nopkg: 'NDL_PROVIDER_MANIFEST',
    });
    const reason = (n: string) => r.failures.find((f) => f.packageName === n)!.reason;
    expect(reason('@test/throws')).toBe('provider entry failed to import: @test/throws: boom at import');
    expect(reason('@test/oldapi')).toMatch(/declares apiVersion "nodelet.dev\/v0"; this nodelet supports nodelet.dev\/v1/);
    expect(reason('@test/noshape')).toMatch(/startContainer is not a function/);
    expect(lines.some((l) => l.includes('NDL_PROVIDER_MANIFEST_INVALID') && l.includes('not valid JSON'))).toBe(true);
  });

  it('refuses an entry that escapes through a symlink', async () => {
    writeFileSync(join(root, 'evil.mjs'), body('evil'));
    const d = pkg('a', 'evil', { entry: './src/link.mjs' });
    symlinkSync(join(root, 'evil.mjs'), join(d, 'src', 'link.mjs'));
    const r = await load();
    expect(codes(r)).toEqual({ '@test/evil': 'NDL_PROVIDER_ENTRY_OUTSIDE' });
  });

  it('validates manifest field types', async () => {
    pkg('a', 'types', { manifest: { name: '@test/types', nodelet: { apiVersion: 1, entry: '', handlers: ['Not_A_Label'] } } });
    const r = await load();
    expect(r.failures[0]!.code).toBe('NDL_PROVIDER_MANIFEST_INVALID');
    expect(r.failures[0]!.reason).toMatch(
      /"nodelet.apiVersion" must be a non-empty string; "nodelet.entry" must be a non-empty string; handler "Not_A_Label" is not a DNS label/,
    );
  });

  it('lets the first directory win for the same package, and refuses a second package with a taken handler', async () => {
    pkg('a', 'same', { code: body('same', ['same'], 'origin: "a"') });
    pkg('b', 'same', { code: body('same', ['same'], 'origin: "b"') });
    pkg('b', 'rival', { handlers: ['same'], code: body('rival', ['same']) });
    const r = await load();
    expect(r.providers.map((p) => (p.provider as unknown as { origin: string }).origin)).toEqual(['a']);
    expect(r.shadowed).toEqual([{ dir: join(root, 'b', 'same'), by: join(root, 'a', 'same') }]);
    expect(codes(r)).toEqual({ '@test/rival': 'NDL_PROVIDER_DUPLICATE' });
    expect(r.failures[0]!.reason).toMatch(/handler same is already served by @test\/same/);
  });

  it('fails a provider whose init rejects or hangs past the timeout, and shuts it down', async () => {
    pkg('a', 'rejects', { code: body('rejects', ['rejects'], 'init: async () => { throw new Error("no runtime"); }') });
    pkg('a', 'hangs', { code: body('hangs', ['hangs'], 'init: () => new Promise(() => {}), shutdown: async () => { globalThis.__hangsDown = true; }') });
    pkg('a', 'fine');
    const r = await load({ initTimeoutMs: 50 });
    expect(r.providers.map((p) => p.provider.name)).toEqual(['fine']);
    expect(codes(r)).toEqual({ '@test/rejects': 'NDL_PROVIDER_INIT', '@test/hangs': 'NDL_PROVIDER_INIT' });
    expect(r.failures.find((f) => f.packageName === '@test/hangs')!.reason).toMatch(/init did not finish within 50 ms/);
    expect((globalThis as Record<string, unknown>).__hangsDown).toBe(true);
  });

  it('checks handlers against the manifest and wraps older API versions through the adapter table', async () => {
    pkg('a', 'liar', { code: body('liar', ['other']) });
    pkg('a', 'legacy', {
      manifest: { name: '@test/legacy', nodelet: { apiVersion: 'nodelet.dev/v0', entry: './src/index.mjs', handlers: ['legacy'] } },
      code: 'export default () => ({ id: "legacy", run: async () => ({}) });',
    });
    const v0 = (p: unknown) => {
      const old = p as { id: string; run: () => Promise<unknown> };
      return {
        name: old.id,
        apiVersion: 'nodelet.dev/v1',
        handlers: [old.id],
        architecture: 'x',
        os: 'x',
        runtimeVersion: 'legacy://0',
        pullImage: async () => ({}),
        startContainer: old.run,
      };
    };
    const r = await load({
      adapters: new Map([
        ['nodelet.dev/v1', (p: unknown) => p],
        ['nodelet.dev/v0', v0],
      ]),
    });
    expect(r.providers.map((p) => p.provider.name)).toEqual(['legacy']);
    expect(codes(r)).toEqual({ '@test/liar': 'NDL_PROVIDER_SHAPE' });
    expect(r.failures[0]!.reason).toMatch(/handlers \[other\] differ from the manifest's \[liar\]/);
  });

  it('serves the handlers of the manifest when the provider object leaves them out (declared once)', async () => {
    const code = `export default () => ({ name: 'quiet', apiVersion: 'nodelet.dev/v1', architecture: 'test', os: 'test',
      runtimeVersion: 'quiet://0', pullImage: async () => ({}), startContainer: async () => ({}) });`;
    pkg('a', 'quiet', { handlers: ['quiet', 'hush'], code });
    pkg('a', 'empty', { code: code.replace("'quiet'", "'empty'").replace('async () => ({}) });', 'async () => ({}), handlers: [] });') });
    const r = await load();
    expect(r.providers.map((p) => [p.provider.name, p.provider.handlers])).toEqual([['quiet', ['quiet', 'hush']]]);
    expect(codes(r)).toEqual({ '@test/empty': 'NDL_PROVIDER_SHAPE' });
    expect(r.failures[0]!.reason).toMatch(/handlers must be a non-empty list of strings when given/);
  });

  it('hands a provider its configuration file (--provider-config), checked by its validateConfig', async () => {
    const withConfig = `validateConfig: (raw) => { if (typeof raw?.port !== 'number') throw new Error('port must be a number'); return { ...raw, checked: true }; },
      init: async (ctx) => { globalThis.__configSeen = ctx.config; }`;
    pkg('a', 'tuned', { code: body('tuned', ['tuned'], withConfig) });
    pkg('a', 'picky', { code: body('picky', ['picky'], withConfig) });
    pkg('a', 'plain', { code: body('plain', ['plain'], `init: async (ctx) => { globalThis.__plainConfig = ctx.config; }`) });
    writeFileSync(join(root, 'tuned.yaml'), 'port: 8080\nhosts: [a, b]\n');
    writeFileSync(join(root, 'picky.json'), '{"port": "eighty"}');
    const r = await load({ configs: { tuned: join(root, 'tuned.yaml'), picky: join(root, 'picky.json'), ghost: join(root, 'none.yaml') } });
    expect(r.providers.map((p) => p.provider.name).sort()).toEqual(['plain', 'tuned']);
    expect((globalThis as { __configSeen?: unknown }).__configSeen).toEqual({ port: 8080, hosts: ['a', 'b'], checked: true });
    expect((globalThis as { __plainConfig?: unknown }).__plainConfig).toBeUndefined();
    expect(codes(r)).toEqual({ '@test/picky': 'NDL_PROVIDER_CONFIG' });
    expect(r.failures[0]!.reason).toContain(`picky: its configuration ${join(root, 'picky.json')} is invalid: port must be a number`);
    expect(lines.some((l) => l.includes('--provider-config names a provider that is not loaded'))).toBe(true);
  });

  it('awaits an async validateConfig: its answer is ctx.config, its rejection NDL_PROVIDER_CONFIG', async () => {
    const asyncCheck = `validateConfig: async (raw) => { if (!raw.ok) throw new Error('ok must be set'); return { later: true }; },
      init: async (ctx) => { globalThis.__asyncConfig = ctx.config; }`;
    pkg('a', 'later', { code: body('later', ['later'], asyncCheck) });
    pkg('a', 'never', { code: body('never', ['never'], asyncCheck) });
    writeFileSync(join(root, 'later.yaml'), 'ok: true\n');
    writeFileSync(join(root, 'never.yaml'), 'ok: false\n');
    const r = await load({ configs: { later: join(root, 'later.yaml'), never: join(root, 'never.yaml') } });
    expect(r.providers.map((p) => p.provider.name)).toEqual(['later']);
    expect((globalThis as { __asyncConfig?: unknown }).__asyncConfig).toEqual({ later: true });
    expect(codes(r)).toEqual({ '@test/never': 'NDL_PROVIDER_CONFIG' });
    expect(r.failures[0]!.reason).toContain(`never: its configuration ${join(root, 'never.yaml')} is invalid: ok must be set`);
  });

  it('skips a provider whose configuration file cannot be read or parsed', async () => {
    pkg('a', 'lost', { code: body('lost') });
    pkg('a', 'garbled', { code: body('garbled') });
    writeFileSync(join(root, 'garbled.yaml'), 'port: [unclosed\n');
    const r = await load({ configs: { lost: join(root, 'missing.yaml'), garbled: join(root, 'garbled.yaml') } });
    expect(r.providers).toEqual([]);
    expect(codes(r)).toEqual({ '@test/lost': 'NDL_PROVIDER_CONFIG', '@test/garbled': 'NDL_PROVIDER_CONFIG' });
    expect(r.failures.find((f) => f.packageName === '@test/lost')!.reason).toMatch(/lost: cannot read its configuration .*missing\.yaml: ENOENT/);
  });
});
