/**
 * What an idle node does not use is loaded on first use, not at start (bench/README.md, idle
 * footprint): `nodelet --help` loads no API client, and the agent's module graph loads neither
 * the X.509 builder, the YAML parser nor `@kubernetes/client-node` (types only), nor undici (the
 * apiserver is reached over node:http2; probes, hooks and pulls load undici), only the parts of prom-client it uses, no gRPC, no protocol code (CSI, DRA, device plugin, pod-resources, plugin
 * registration) nor the protobuf runtime, and (with the wasi provider) no component or Spin runner; a pull
 * loads no second undici (fetch's); `nodelet run` loads only
 * its own modules and the WASI layer, in the process the command started (no re-execution with V8 flags).
 * Checked on dist/ (what `nodelet` runs) with a module hook that records every file loaded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { pushWasmArtifact, tinyModule } from '../../harness/oci-push.ts';
import { startRegistry } from '../../harness/registry.ts';
import { buildWasmModule } from '../../harness/wasm-modules.ts';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'lazy-modules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hook = join(dir, 'record.mjs');
writeFileSync(
  hook,
  `import { registerHooks } from 'node:module';\n` +
    `import { appendFileSync } from 'node:fs';\n` +
    `registerHooks({ load(url, ctx, next) { appendFileSync(process.env.LOADED_FILE, url + '\\n'); return next(url, ctx); } });\n` +
    `appendFileSync(process.env.LOADED_FILE, 'execArgv ' + JSON.stringify(process.execArgv) + '\\n');\n` +
    `process.on('exit', () => appendFileSync(process.env.LOADED_FILE, process.moduleLoadList.map((m) => 'builtin ' + m).join('\\n') + '\\n'));\n`,
);

/** The URLs of the files `args` loads. */
function urlsLoaded(args: string[], env: NodeJS.ProcessEnv = { NODE_OPTIONS: '--max-semi-space-size=2' }): string[] {
  const out = join(dir, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(out, '');
  const r = spawnSync(process.execPath, ['--no-warnings', `--import=${pathToFileURL(hook).href}`, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    cwd: ROOT,
    env: { ...process.env, LOADED_FILE: out, ...env },
  });
  expect(r.status, r.stderr).toBe(0);
  return spawnSync('cat', [out], { encoding: 'utf8' }).stdout.split('\n');
}

/** The package names (node_modules/<name>/) among `urls`. */
function packagesOf(urls: string[]): Set<string> {
  return new Set(urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((p): p is string => p !== undefined));
}

/** The package names (node_modules/<name>/) among the files `args` loads. */
function packagesLoaded(args: string[]): Set<string> {
  return packagesOf(urlsLoaded(args));
}

describe('modules loaded on first use', () => {
  it('nodelet --help loads neither the API client nor the YAML parser', () => {
    const pkgs = packagesLoaded([join(ROOT, 'bin', 'nodelet.mjs'), '--help']);
    expect([...pkgs].filter((p) => ['@kubernetes/client-node', 'yaml', 'undici', 'prom-client'].includes(p))).toEqual([]);
  });

  it("the agent's module graph loads no X.509 builder, YAML parser, client-node or undici", () => {
    const run = pathToFileURL(join(ROOT, 'dist', 'core', 'cli', 'run.js')).href;
    const wasi = pathToFileURL(join(ROOT, 'providers', 'wasi', 'dist', 'index.js')).href;
    const urls = urlsLoaded([
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(run)}); await import(${JSON.stringify(wasi)}); ` +
        `(await import('node:fs')).appendFileSync(process.env.LOADED_FILE, process.moduleLoadList.map((m) => 'builtin ' + m).join('\\n') + '\\n');`,
    ]);
    const pkgs = packagesOf(urls);
    // Node's own modules: an ES import of node:http reads its lazy WebSocket export, which loads Node's
    // bundled undici (~12 MiB of RSS); nodelet takes what it needs from node:http without one.
    expect(urls.some((u) => u === 'builtin NativeModule http')).toBe(true);
    expect(urls.filter((u) => u.includes('internal/deps/undici'))).toEqual([]);
    expect(pkgs.has('fastify')).toBe(true); // the check sees node_modules at all
    // The apiserver is reached over node:http2 (core/kube/h2-connection.ts); undici loads with the first probe, hook or pull.
    expect(pkgs.has('undici')).toBe(false);
    // client-node is used for its types only (core/kube has its own thin client: bench/README.md).
    expect([...pkgs].filter((p) => ['@peculiar/x509', 'reflect-metadata', 'tsyringe', 'yaml', '@kubernetes/client-node'].includes(p))).toEqual([]);
    // Only the parts of prom-client nodelet uses (core/metrics/prom-client.ts): not its exemplars through @opentelemetry/api.
    expect(urls.filter((u) => /node_modules\/prom-client\/index\.js$/.test(u))).toEqual([]);
    expect(pkgs.has('@opentelemetry/api')).toBe(false);
    // grpc-js loads with the first plugin or gRPC call (sockets/grpc-js.ts, sockets/lazy-server.ts).
    expect(pkgs.has('@grpc/grpc-js')).toBe(false);
    // The wasi provider loads its component and Spin runners (and wasi:http, key-value…) with the first such container.
    expect(urls.some((u) => u.endsWith('/providers/wasi/dist/wasi-provider.js'))).toBe(true);
    expect(urls.filter((u) => /providers\/wasi\/dist\/(component-runner\.js|spin\/|worker\/http\/imports-)/.test(u))).toEqual([]);
    // The CSI and DRA protocol code loads when such a plugin registers (csi-driver-registry.ts, core/dra/index.ts).
    expect(urls.filter((u) => /dist\/sockets\/(csi|dra|dra-v1beta1|dra-health)\.js$|dist\/sockets\/generated\/(csi|dra|dra-health)\//.test(u))).toEqual([]);
    // The device plugin, pod-resources and plugin registration protocols' code, and the protobuf runtime under
    // every generated protocol, load with a device plugin, a pod-resources client or a plugin in the registry.
    expect(urls.filter((u) => /dist\/sockets\/generated\//.test(u))).toEqual([]);
    expect(pkgs.has('@bufbuild/protobuf')).toBe(false);
  });

  it('nodelet run loads only its own modules and the WASI layer, in the process the command started', async () => {
    const hello = await buildWasmModule('hello');
    const urls = urlsLoaded([join(ROOT, 'bin', 'nodelet.mjs'), 'run', hello], { XDG_CACHE_HOME: dir });
    // One process: bin/nodelet.mjs re-executes the agent with V8 flags, not `run`.
    expect(urls.filter((u) => u.startsWith('execArgv '))).toHaveLength(1);
    expect(packagesOf(urls)).toEqual(new Set()); // no npm package: no API client, gRPC, logger, plugin API
    const ours = urls.filter((u) => u.startsWith('file://')).map((u) => relative(ROOT, fileURLToPath(u)));
    expect(ours.filter((f) => !/^(bin\/nodelet\.mjs|dist\/core\/(cli|errors)\/|providers\/wasi\/dist\/)/.test(f))).toEqual([]);
    // From the provider, the in-thread run and the WASI layer: not the provider itself, its workers or the runtime process.
    expect(ours.filter((f) => /providers\/wasi\/dist\/(index|wasi-provider|worker-pool|container-runner|runtime\/)/.test(f))).toEqual([]);
    expect(ours).toEqual(expect.arrayContaining(['providers/wasi/dist/run-once.js', 'providers/wasi/dist/worker/wasi-imports.mjs']));
  });

  it("a pull from a real registry goes through nodelet's undici, not fetch's second copy of it (core/images/registry-transport.ts)", async () => {
    const reg = await startRegistry();
    try {
      await pushWasmArtifact(reg.host, 'lazy', 'v1', tinyModule('lazy'));
      const urls = urlsLoaded([join(ROOT, 'bin', 'nodelet.mjs'), 'pull', '--root-dir', join(dir, 'pull-root'), `${reg.host}/lazy:v1`]);
      expect(urls.some((u) => u.endsWith('node_modules/undici/lib/dispatcher/agent.js'))).toBe(true);
      expect(urls.some((u) => u.startsWith('builtin '))).toBe(true); // the exit hook wrote the built-ins
      expect(urls.filter((u) => u.includes('internal/deps/undici'))).toEqual([]);
    } finally {
      await reg.stop();
    }
  });
});
