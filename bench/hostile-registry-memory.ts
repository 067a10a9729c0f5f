/**
 * `node --expose-gc --conditions=nodelet-source --import tsx bench/hostile-registry-memory.ts`: what a hostile registry costs
 * nodelet's image service in memory. Serves, from a node http server, a
 * 200 MB chunked manifest and a 200 MB token answer, and pushes a compat image whose
 * 256 MiB module sits in a small gzip layer to a real docker-registry; pulls each and
 * prints the pull error (or size) and the peak RSS above the starting RSS (sampled every 5 ms).
 * The server runs in the same process, so its buffers count too: the figures are upper bounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OciImageService } from '../core/images/image-service.ts';
import { pushCompatImage } from '../test/harness/compat-image.ts';
import { tinyModule } from '../test/harness/oci-push.ts';
import { startRegistry } from '../test/harness/registry.ts';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const chunk = Buffer.alloc(64 * 1024, 0x20);

/** Streams 200 MB (after `head`) with back-pressure until the client hangs up. */
function flood(res: ServerResponse, head: string): void {
  let n = 0;
  const pump = () => {
    while (n < 200 << 20 && !res.destroyed) {
      n += chunk.length;
      if (!res.write(n === chunk.length ? Buffer.concat([Buffer.from(head), chunk]) : chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
}

let host = '';
const server = createServer((req, res) => {
  const url = req.url ?? '';
  if (url.startsWith('/token')) return flood(res.writeHead(200), '{"token":"');
  if (url.includes('/tok/')) {
    if (req.headers.authorization) return res.writeHead(404).end();
    return res.writeHead(401, { 'www-authenticate': `Bearer realm="http://${host}/token"` }).end();
  }
  flood(res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }), '{"x":"');
});
await new Promise<void>((r) =>
  server.listen(0, '127.0.0.1', () => {
    host = `127.0.0.1:${(server.address() as { port: number }).port}`;
    r();
  }),
);
const reg = await startRegistry();
await pushCompatImage(reg.host, 'bench/big', 'v1', Buffer.concat([tinyModule('big'), Buffer.alloc(256 << 20)]));

const root = mkdtempSync(join(tmpdir(), 'nodelet-bench-hostile-'));
const svc = await OciImageService.open({ rootDir: root });
const req = { pullPolicy: 'IfNotPresent' as const, credentials: [], acceptLayerTypes: ['application/wasm'] };
const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
for (const [what, image] of [
  ['200 MB chunked manifest', `${host}/man/app:v1`],
  ['200 MB token answer', `${host}/tok/app:v1`],
  ['256 MiB module in a gzip compat layer', `${reg.host}/bench/big:v1`],
]) {
  gc();
  await new Promise((r) => setTimeout(r, 200));
  gc();
  const base = process.memoryUsage().rss;
  let peak = base;
  const t = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const outcome = await svc.pull(image!, req).then(
    (i) => `pulled ${mib(i.size)}`,
    (e: Error) => e.message.replace(/^failed to pull image "[^"]+": /, ''),
  );
  clearInterval(t);
  console.log(`${what.padEnd(40)} peak RSS +${mib(peak - base).padStart(7)}  ${outcome.slice(0, 90)}`);
}
server.closeAllConnections();
server.close();
await reg.stop();
rmSync(root, { recursive: true, force: true });
