/**
 * Loads the gRPC protocols from the JSON descriptors generated ahead of time
 * (sockets/generated/<protocol>/descriptor.json, made from sockets/proto/ by
 * sockets/generate.sh), with the one set of options that the generated types
 * were made for. No .proto file is parsed at run time.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Absolute path of the folder holding the .proto files (the generator's and tests' input). */
export const PROTO_ROOT = fileURLToPath(new URL('./proto/', import.meta.url));

/** The generated descriptor of each .proto (path relative to {@link PROTO_ROOT}). */
const DESCRIPTORS: Record<string, string> = {
  'pluginregistration/v1/api.proto': 'pluginregistration',
  'deviceplugin/v1beta1/api.proto': 'deviceplugin',
  'podresources/v1/api.proto': 'podresources',
  'csi/v1/csi.proto': 'csi',
};

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
};

const cache = new Map<string, grpc.GrpcObject>();

/**
 * Loads one protocol (its .proto path relative to {@link PROTO_ROOT}) into a grpc-js
 * object from its generated descriptor, once per process. `T` is the generated
 * `ProtoGrpcType` for that file.
 */
export function loadProto<T>(relativePath: string): T {
  let loaded = cache.get(relativePath);
  if (loaded === undefined) {
    const dir = DESCRIPTORS[relativePath];
    if (!dir) throw new Error(`no generated descriptor for ${relativePath}: add it to sockets/generate.sh and load.ts`);
    const json = JSON.parse(readFileSync(new URL(`./generated/${dir}/descriptor.json`, import.meta.url), 'utf8')) as Parameters<typeof protoLoader.fromJSON>[0];
    const definition = protoLoader.fromJSON(json, LOADER_OPTIONS);
    loaded = grpc.loadPackageDefinition(definition);
    cache.set(relativePath, loaded);
  }
  return loaded as unknown as T;
}
