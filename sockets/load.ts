/**
 * Loads the .proto files in sockets/proto/ with the one set of options that the
 * generated types in sockets/generated/ were made for (see sockets/generate.sh).
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Absolute path of the folder holding the .proto files. */
export const PROTO_ROOT = fileURLToPath(new URL('./proto/', import.meta.url));

/**
 * proto-loader options. Must stay in step with the generator flags in generate.sh:
 * field names as in the .proto, 64-bit integers as decimal strings, enums as
 * their names, defaults for absent fields, and a virtual field naming each set oneof.
 */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

const cache = new Map<string, grpc.GrpcObject>();

/**
 * Loads one .proto (path relative to {@link PROTO_ROOT}) into a grpc-js object,
 * once per process. `T` is the generated `ProtoGrpcType` for that file.
 */
export function loadProto<T>(relativePath: string): T {
  let loaded = cache.get(relativePath);
  if (loaded === undefined) {
    const definition = protoLoader.loadSync(relativePath, LOADER_OPTIONS);
    loaded = grpc.loadPackageDefinition(definition);
    cache.set(relativePath, loaded);
  }
  return loaded as unknown as T;
}
