/** A plain HTTP GET for tests (no keep-alive agent): status and body as text. */
import { request } from 'node:http';

/** GETs `http://host:port/path`; rejects on a connection error. */
export function httpGet(host: string, port: number, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
