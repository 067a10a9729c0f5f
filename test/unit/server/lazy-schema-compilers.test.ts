/**
 * fastify's default compilers given lazily (core/server/lazy-schema-compilers.ts): an app with
 * them validates a request and serializes a reply by a route's schema as fastify's defaults do.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazySchemaCompilers } from '../../../core/server/lazy-schema-compilers.ts';

describe('lazySchemaCompilers', () => {
  it('validates and serializes through the default compilers, loaded when a route has a schema', async () => {
    const app = Fastify({ schemaController: lazySchemaCompilers() });
    app.post(
      '/echo',
      {
        schema: {
          body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
          response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
        },
      },
      async (req) => ({ n: (req.body as { n: number }).n, dropped: 'not in the response schema' }),
    );
    try {
      const ok = await app.inject({ method: 'POST', url: '/echo', payload: { n: 7 } });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toBe('{"n":7}');
      const bad = await app.inject({ method: 'POST', url: '/echo', payload: { n: 'seven' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toBe('body/n must be integer');
    } finally {
      await app.close();
    }
  });
});
