#!/usr/bin/env node
// `node bench/proto-code-memory.mjs [runs]` (after `npm run build`): what the gRPC
// protocol code costs in memory, runtime descriptors + @grpc/proto-loader (today's
// sockets/load.ts) against static ts-proto code for the same four protocols
// (pluginregistration, deviceplugin, podresources, CSI). The static code is generated
// with sockets/buf.gen.yaml into bench/.cache/proto-code and compiled with tsc. Each
// variant is measured in a fresh `node --expose-gc` process: RSS and heap after
// loading and three GCs, against a process that only imports @grpc/grpc-js.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const CACHE = join(ROOT, 'bench', '.cache', 'proto-code');
const runs = Number(process.argv[2] ?? 3);

if (process.argv[2] === '--child') {
  const which = process.argv[3];
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      globalThis.gc?.();
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  if (which === 'proto-loader') {
    const dir = new URL('../dist/sockets/', import.meta.url);
    const [csi, dp, pr, reg] = await Promise.all(
      ['csi', 'deviceplugin', 'podresources', 'pluginregistration'].map((f) => import(new URL(`${f}.js`, dir).href)),
    );
    csi.loadCsi();
    dp.loadDevicePlugin();
    pr.loadPodResources();
    reg.loadPluginRegistration();
  } else if (which === 'ts-proto') {
    for (const f of ['csi/v1/csi.js', 'deviceplugin/v1beta1/api.js', 'podresources/v1/api.js', 'pluginregistration/v1/api.js'])
      await import(join(CACHE, 'js', f));
  } else {
    await import('@grpc/grpc-js');
  }
  await settle();
  const m = process.memoryUsage();
  process.stdout.write(JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed }));
  process.exit(0);
}

rmSync(CACHE, { recursive: true, force: true });
mkdirSync(CACHE, { recursive: true });
execFileSync(
  'npx',
  [
    '--no-install',
    'buf',
    'generate',
    '--template',
    'buf.gen.yaml',
    '-o',
    join(CACHE, 'ts'),
    '--path',
    'proto/csi',
    '--path',
    'proto/deviceplugin',
    '--path',
    'proto/podresources',
    '--path',
    'proto/pluginregistration',
  ],
  {
    cwd: join(ROOT, 'sockets'),
    stdio: 'inherit',
  },
);
writeFileSync(
  join(CACHE, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      rewriteRelativeImportExtensions: true,
      allowImportingTsExtensions: true,
      esModuleInterop: true,
      skipLibCheck: true,
      outDir: 'js',
      rootDir: 'ts',
      types: ['node'],
    },
    include: ['ts/**/*.ts'],
  }),
);
execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(CACHE, 'tsconfig.json')], { stdio: 'inherit' });

const mib = (/** @type {number} */ n) => (n / 1048576).toFixed(1);
const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const which of ['grpc-js only', 'proto-loader', 'ts-proto']) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, ['--expose-gc', '--no-warnings', import.meta.filename, '--child', which], { cwd: ROOT, encoding: 'utf8' });
    samples.push(JSON.parse(out));
  }
  console.log(
    `${which.padEnd(14)} RSS ${mib(median(samples.map((s) => s.rss)))} MiB, heap used ${mib(median(samples.map((s) => s.heapUsed)))} MiB (median of ${runs})`,
  );
}
