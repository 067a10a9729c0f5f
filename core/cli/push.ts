/**
 * `nodelet push <module.wasm> <ref> [--insecure] [--chunk-size BYTES]`: publishes a
 * module as a CNCF Wasm OCI artifact with the credentials of `~/.docker/config.json`
 * (`$DOCKER_CONFIG`). Large modules go up in chunks with a progress line per chunk on
 * stderr; the manifest digest is printed on stdout.
 */
import { readFile } from 'node:fs/promises';
import { nodeletError } from '../errors/index.ts';
import {
  credentialsFor,
  dockerConfigCredentials,
  formatReference,
  parseReference,
  registryHostOf,
  DEFAULT_CHUNK_BYTES,
  pushWasmModule,
  type PushProgress,
} from '../images/index.ts';
import { parseSubcommandArgs, progressWriter, transferLine, type SubcommandSpec } from './subcommands.ts';

/** The progress line of one chunk: `pushing sha256:0123456789ab: 4.0 MiB / 9.5 MiB (42%)`. */
function progressLine(p: PushProgress): string {
  return transferLine('pushing', p.digest, p.sentBytes, p.totalBytes);
}

/** `nodelet push`'s usage and options. */
const PUSH: SubcommandSpec = {
  usage: `Usage: nodelet push <module.wasm> <ref> [--insecure] [--chunk-size BYTES]

Publishes a WebAssembly module as a CNCF Wasm OCI artifact, with the credentials of
~/.docker/config.json ($DOCKER_CONFIG). Prints the manifest digest on stdout.

Flags:
  --insecure           speak plain HTTP to the registry
  --chunk-size BYTES   upload in chunks of this size, with a progress line each (default ${DEFAULT_CHUNK_BYTES})
  -h, --help           show this help`,
  options: { insecure: { type: 'boolean' }, 'chunk-size': { type: 'string' } },
};

/** Runs `nodelet push`; resolves to the exit code. */
export async function runPush(args: string[]): Promise<number> {
  const { positionals, values, help } = parseSubcommandArgs('push', args, PUSH);
  if (help) {
    process.stdout.write(`${PUSH.usage}\n`);
    return 0;
  }
  if (positionals.length !== 2)
    throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', 'nodelet push: usage: nodelet push <module.wasm> <ref> [--insecure] [--chunk-size BYTES]');
  const [file, refText] = positionals as [string, string];
  const chunkBytes = values['chunk-size'] !== undefined ? Number(values['chunk-size']) : DEFAULT_CHUNK_BYTES;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1)
    throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', `nodelet push: --chunk-size must be a positive integer`);
  const ref = parseReference(refText);
  const module = await readFile(file).catch((e: Error) => {
    throw nodeletError('NDL_CLI_FILE', `nodelet push: cannot read ${file}: ${e.message}`, e);
  });
  const credential = credentialsFor(ref, await dockerConfigCredentials())[0];
  const progress = progressWriter();
  const result = await pushWasmModule(ref, module, {
    credential,
    chunkBytes,
    insecureRegistries: values.insecure ? [registryHostOf(ref)] : [],
    userAgent: 'nodelet-push',
    onProgress: (p) => progress(progressLine(p), p.sentBytes === p.totalBytes),
  });
  process.stderr.write(
    `pushed ${formatReference(ref)} (${result.size} bytes${result.skipped.length ? `, ${result.skipped.length} blob(s) already present` : ''})\n`,
  );
  process.stdout.write(`${result.digest}\n`);
  return 0;
}
