import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ContainerSpec,
  type ImageRequest,
  type ImageService,
  type Logger,
  type Mount,
  type PodContext,
  type PulledImage,
  type ProviderContext,
} from '@nodelet/plugin-api/v1';
import { parseCriLine, type CriLogLine } from '@nodelet/plugin-api/v1/toolkit';
import { buildWasmModule } from '../../../test/harness/wasm-modules.ts';

/** A logger that keeps its lines. */
export function memoryLogger(lines: string[] = []): Logger {
  const rec = (level: string) => (obj: object | string, msg?: string) => {
    lines.push(`${level} ${typeof obj === 'string' ? obj : `${msg ?? ''} ${JSON.stringify(obj)}`}`);
  };
  const log: Logger = { debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error'), child: () => log };
  return log;
}

/** An image service that "pulls" fixture modules: `fixture:<name>` → the compiled test module. */
export class FakeImages implements ImageService {
  readonly requests: Array<{ image: string; req: ImageRequest }> = [];
  async pull(image: string, req: ImageRequest): Promise<PulledImage> {
    this.requests.push({ image, req });
    return pulledFixture(image.replace(/^fixture:/, ''));
  }
}

/** The PulledImage of a compiled fixture (digest = sha256 of the module). */
export async function pulledFixture(name: string): Promise<PulledImage> {
  const path = await buildWasmModule(name);
  return pulledFile(path, `fixture:${name}`);
}

/** A PulledImage for any module file. */
export function pulledFile(path: string, image = 'local'): PulledImage {
  const bytes = readFileSync(path);
  const hex = createHash('sha256').update(bytes).digest('hex');
  return { image, imageID: `${image}@sha256:${hex}`, digest: `sha256:${hex}`, path, size: bytes.length, cached: true };
}

/** A scratch directory removed by the returned cleanup. */
export function scratch(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'wasi-provider-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

let seq = 0;
/** A container spec running `image` with `args`, logging under `dir`. */
export function spec(image: PulledImage, dir: string, args: string[] = [], over: Partial<ContainerSpec> = {}): ContainerSpec {
  const id = `c${++seq}-${process.pid}`;
  return {
    id,
    pod: { namespace: 'default', name: 'p', uid: 'uid-1' },
    name: 'main',
    image,
    argv: [image.image, ...args],
    env: {},
    mounts: [] as Mount[],
    limits: {},
    logPath: join(dir, 'logs', `${id}.log`),
    restartCount: 0,
    ...over,
  };
}

/** A pod context with a recording logger. */
export function podContext(lines: string[] = []): PodContext {
  return { log: memoryLogger(lines), event: () => {}, signal: new AbortController().signal, podDir: tmpdir() };
}

/** A provider context around `images`. */
export function providerContext(images: ImageService, rootDir = tmpdir()): ProviderContext {
  return { log: memoryLogger(), rootDir, images, signal: new AbortController().signal };
}

/** The records of a CRI log file (throws on a malformed line). */
export function readLog(path: string): CriLogLine[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const r = parseCriLine(l);
      if (!r) throw new Error(`not a CRI line: ${JSON.stringify(l)}`);
      return r;
    });
}

/** The log's content per stream, partial records joined. */
export function logText(path: string, stream: 'stdout' | 'stderr' = 'stdout'): string {
  return readLog(path)
    .filter((r) => r.stream === stream)
    .map((r) => r.content + (r.partial ? '' : '\n'))
    .join('');
}
