/**
 * An OCI distribution endpoint that serves whatever the fuzz suite stores in
 * it — including what a real registry refuses to hold: blobs whose bytes do not
 * match their digest, manifests whose sizes lie, index loops, unknown media
 * types, stalled bodies and error statuses. The real registry (`docker-registry`)
 * validates digests on push, so it cannot play a lying peer; this does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One stored answer. */
export interface Stored {
  readonly body: Buffer;
  readonly contentType?: string;
  /** The `Docker-Content-Digest` header (may lie). */
  readonly digestHeader?: string;
  /** Answer with this status instead of 200. */
  readonly status?: number;
  /** Send the headers and this many bytes, then nothing more. */
  readonly stallAfter?: number;
  /** Declared Content-Length differing from the body. */
  readonly contentLength?: number;
}

/** The lying registry. */
export class LyingRegistry {
  private server?: Server;
  /** `<repo>/manifests/<ref>` or `<repo>/blobs/<digest>` → answer. */
  readonly store = new Map<string, Stored>();
  host = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/?]+)$/.exec(req.url ?? '');
      if (req.url === '/v2/' || req.url === '/v2') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      const s = m ? this.store.get(`${m[1]}/${m[2]}/${decodeURIComponent(m[3]!)}`) : undefined;
      if (!s) return void res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"unknown"}]}');
      const headers: Record<string, string | number> = {
        'Content-Type': s.contentType ?? 'application/octet-stream',
        'Content-Length': s.contentLength ?? s.body.length,
      };
      if (s.digestHeader) headers['Docker-Content-Digest'] = s.digestHeader;
      res.writeHead(s.status ?? 200, headers);
      if (req.method === 'HEAD') return void res.end();
      if (s.stallAfter !== undefined) return void res.write(s.body.subarray(0, s.stallAfter));
      if (s.contentLength !== undefined && s.contentLength > s.body.length) {
        res.write(s.body);
        return void res.destroy();
      }
      res.end(s.body.subarray(0, s.contentLength ?? s.body.length));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.host = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}
