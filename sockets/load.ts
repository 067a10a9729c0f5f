/**
 * The gRPC protocols as grpc-js packages, built from the static code ts-proto
 * generated ahead of time (sockets/generated/<protocol>/<version>/*.ts, made from
 * sockets/proto/ by sockets/generate.sh): no .proto file or descriptor is read and
 * no protobufjs runs at start.
 *
 * This is the thin adapter that keeps the call sites as they were with
 * @grpc/proto-loader: a package is a tree by proto package (`csi.v1.Node`), each
 * service a client constructor with `.service`, keyed by upstream's method names
 * (`NodeGetInfo`); requests and responses are plain objects in proto-loader's
 * shapes (field names as in the .proto, 64-bit integers as strings, enums as names):
 *
 *   object ──fromPartial (absent fields get their defaults)──► encode ──► wire
 *   wire ──► decode (every scalar and list present; an unset message field is undefined) ──► object
 *
 * Two differences from proto-loader's objects, which no call site relies on: an unset
 * message field is undefined rather than null, and a set oneof has no virtual field
 * naming it (proto-loader's `oneofs: true`); the generated `__Output` types still show both.
 */
import { fileURLToPath } from 'node:url';
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from './grpc-js.ts';
import type { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';

/** Absolute path of the folder holding the .proto files (the generator's and tests' input). */
export const PROTO_ROOT = fileURLToPath(new URL('./proto/', import.meta.url));

/** A ts-proto message codec. */
interface MessageFns {
  encode(message: never, writer?: BinaryWriter): BinaryWriter;
  decode(input: BinaryReader | Uint8Array, length?: number): unknown;
  fromPartial(object: never): unknown;
}

/** A ts-proto generic service definition (`outputServices=generic-definitions`). */
export interface GenericDefinition {
  readonly fullName: string;
  readonly methods: Record<string, { name: string; requestType: MessageFns; requestStream: boolean; responseType: MessageFns; responseStream: boolean }>;
}

const serialize = (t: MessageFns) => (value: object) => Buffer.from(t.encode(t.fromPartial(value as never) as never).finish());
const deserialize = (t: MessageFns) => (bytes: Buffer) => t.decode(bytes);

/** The grpc-js service definition of a generated service: upstream method names, static codecs. */
export function grpcService(def: GenericDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<object, unknown>> = {};
  for (const m of Object.values(def.methods)) {
    out[m.name] = {
      path: `/${def.fullName}/${m.name}`,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestSerialize: serialize(m.requestType),
      requestDeserialize: deserialize(m.requestType) as (b: Buffer) => object,
      responseSerialize: serialize(m.responseType) as (v: unknown) => Buffer,
      responseDeserialize: deserialize(m.responseType),
      originalName: m.name,
    };
  }
  return out as grpc.ServiceDefinition;
}

const cache = new Map<string, grpc.GrpcObject>();

/**
 * One protocol (its .proto path relative to {@link PROTO_ROOT}) as a grpc-js package,
 * once per process, from its generated `services`. `T` is the generated `ProtoGrpcType`
 * for that file. Each protocol's module (csi.ts, deviceplugin.ts…) passes its own
 * services, so that loading one protocol loads no other's generated code (CSI's alone
 * is 0.35 MB, which a node without CSI drivers never needs).
 */
export function loadProto<T>(relativePath: string, services: readonly GenericDefinition[]): T {
  let loaded = cache.get(relativePath);
  if (loaded === undefined) {
    loaded = {};
    for (const def of services) {
      const parts = def.fullName.split('.');
      let ns = loaded;
      for (const p of parts.slice(0, -1)) ns = (ns[p] ??= {}) as grpc.GrpcObject;
      ns[parts.at(-1)!] = grpcJs().makeGenericClientConstructor(grpcService(def), def.fullName);
    }
    cache.set(relativePath, loaded);
  }
  return loaded as unknown as T;
}
