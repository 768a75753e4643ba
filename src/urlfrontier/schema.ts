/**
 * Where meguri's URLFrontier schema lives and how it is loaded.
 *
 * The `.proto` file sits in the package's top-level `proto/` folder (shipped through
 * package.json "files"), two levels above both `src/urlfrontier/` and `dist/urlfrontier/`, so
 * the same relative URL finds it from the TypeScript sources (tests) and from the built
 * package. It is parsed once per process by @grpc/proto-loader; the codec is protobufjs's,
 * never hand-written.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Absolute path of meguri's `urlfrontier.proto`. */
export const URLFRONTIER_PROTO_PATH = fileURLToPath(new URL('../../proto/urlfrontier.proto', import.meta.url));

/**
 * How messages look in JavaScript: field names as in the schema, uint64 as numbers (epoch
 * seconds and counts stay far below 2^53), enums as their names, defaults filled in and the
 * set member of each oneof named by the oneof's own field (`item: 'known'`).
 */
export const LOADER_OPTIONS: protoLoader.Options = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});

let cached: grpc.GrpcObject | undefined;

/** The loaded `urlfrontier` package: `.URLFrontier` is the service constructor (client and definition). */
export function urlFrontierPackage(): grpc.GrpcObject {
  if (cached === undefined) {
    const definition = protoLoader.loadSync(URLFRONTIER_PROTO_PATH, LOADER_OPTIONS);
    cached = (grpc.loadPackageDefinition(definition) as { urlfrontier: grpc.GrpcObject }).urlfrontier;
  }
  return cached;
}

/** The URLFrontier service definition, for `Server#addService`. */
export function urlFrontierService(): grpc.ServiceDefinition {
  return (urlFrontierPackage()['URLFrontier'] as grpc.ServiceClientConstructor).service;
}
