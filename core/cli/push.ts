/**
 * `nodelet push <module.wasm> <ref> [--insecure] [--chunk-size BYTES]`: publishes a
 * module as a CNCF Wasm OCI artifact with the credentials of `~/.docker/config.json`
 * (`$DOCKER_CONFIG`). Large modules go up in chunks with a progress line per chunk on
 * stderr; the manifest digest is printed on stdout.
 */
import { readFile } from 'node:fs/promises';
import { nodeletError } from '../errors/catalogue.ts';
import { credentialsFor } from '../images/credentials.ts';
import { dockerConfigCredentials } from '../images/docker-config.ts';
import { formatReference, parseReference, registryHostOf } from '../images/reference.ts';
import { DEFAULT_CHUNK_BYTES, pushWasmModule, type PushProgress } from '../images/registry-push.ts';
import { parseSubcommandArgs } from './subcommands.ts';

const human = (n: number) => (n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1 << 20)).toFixed(1)} MiB`);

/** The progress line of one chunk: `pushing sha256:0123456789ab: 4.0 MiB / 9.5 MiB (42%)`. */
export function progressLine(p: PushProgress): string {
  return `pushing ${p.digest.slice(0, 19)}: ${human(p.sentBytes)} / ${human(p.totalBytes)} (${Math.floor((p.sentBytes * 100) / p.totalBytes)}%)`;
}

/** Runs `nodelet push`; resolves to the exit code. */
export async function runPush(args: string[]): Promise<number> {
  const { positionals, flags } = parseSubcommandArgs('push', args, ['chunk-size'], ['insecure']);
  if (positionals.length !== 2) throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', 'nodelet push: usage: nodelet push <module.wasm> <ref> [--insecure] [--chunk-size BYTES]');
  const [file, refText] = positionals as [string, string];
  const chunkBytes = flags.has('chunk-size') ? Number(flags.get('chunk-size')) : DEFAULT_CHUNK_BYTES;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', `nodelet push: --chunk-size must be a positive integer`);
  const ref = parseReference(refText);
  const module = await readFile(file).catch((e: Error) => { throw new Error(`cannot read ${file}: ${e.message}`); });
  const credential = credentialsFor(ref, await dockerConfigCredentials())[0];
  const tty = process.stderr.isTTY === true;
  const result = await pushWasmModule(ref, module, {
    credential, chunkBytes,
    insecureRegistries: flags.has('insecure') ? [registryHostOf(ref)] : [],
    userAgent: 'nodelet-push',
    onProgress: (p) => process.stderr.write(tty ? `\r${progressLine(p)}${p.sentBytes === p.totalBytes ? '\n' : ''}` : `${progressLine(p)}\n`),
  });
  process.stderr.write(`pushed ${formatReference(ref)} (${result.size} bytes${result.skipped.length ? `, ${result.skipped.length} blob(s) already present` : ''})\n`);
  process.stdout.write(`${result.digest}\n`);
  return 0;
}
