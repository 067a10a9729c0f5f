/**
 * fastify's default schema compilers, loaded on first use instead of when an app is made.
 *
 * fastify requires both of its default compilers as it creates an app:
 * `@fastify/ajv-compiler` (ajv, ajv-formats, fast-uri) to validate requests and
 * `@fastify/fast-json-stringify-compiler` (fast-json-stringify) to serialize
 * replies, about 0.6 MB of source that would stay in every node's heap. It calls
 * them only for a route that declares a schema, and nodelet's routes declare none
 * (they answer with text or JSON they build), so these factories load the same
 * default compilers, resolved from fastify's own folder as fastify does, the first
 * time fastify asks for one, and an idle node never loads them.
 *
 * One difference fastify makes for compilers given as `compilersFactory`: it takes
 * them for custom ones, which changes one thing, a route's `headers` schema is
 * compiled as written instead of with its property names lower-cased.
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type ValidatorFactory = NonNullable<Factories['buildValidator']>;
type SerializerFactory = NonNullable<Factories['buildSerializer']>;

/** Requires a package from fastify's folder (its dependencies, whatever the install's layout). */
const fromFastify = (): NodeJS.Require => createRequire(createRequire(import.meta.url).resolve('fastify'));

/** The `schemaController` option of one fastify app: its default compilers, each loaded on first use (one pool per app, as fastify's). */
export function lazySchemaCompilers(): { compilersFactory: Factories } {
  let validators: ValidatorFactory | undefined;
  let serializers: SerializerFactory | undefined;
  return {
    compilersFactory: {
      buildValidator: (externalSchemas, options) =>
        (validators ??= (fromFastify()('@fastify/ajv-compiler') as () => ValidatorFactory)())(externalSchemas, options),
      buildSerializer: (externalSchemas, options) =>
        (serializers ??= (fromFastify()('@fastify/fast-json-stringify-compiler') as () => SerializerFactory)())(externalSchemas, options),
    },
  };
}
