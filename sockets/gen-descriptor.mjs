// Writes the protobufjs JSON descriptor of one .proto (and everything it imports)
// for sockets/load.ts, so nodelet never parses .proto text at run time.
// Usage (from generate.sh): node gen-descriptor.mjs <proto dir> <file relative to it> <out.json>
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join } from 'node:path';
import protobuf from 'protobufjs';

const [protoDir, file, out] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => {
  if (target.startsWith('google/protobuf/')) return require.resolve(`protobufjs/${target}`);
  return isAbsolute(target) ? target : join(protoDir, target);
};
// Field names as written in the .proto (the loader's keepCase).
root.loadSync(file, { keepCase: true });
root.resolveAll();
writeFileSync(out, `${JSON.stringify(root.toJSON({ keepComments: false }))}\n`);
