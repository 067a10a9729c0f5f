/**
 * `nodelet pull <ref> [--root-dir DIR] [--insecure]`: pulls an image into the
 * local image store (as the agent would, policy Always) with the credentials of
 * `~/.docker/config.json`, and prints its manifest digest on stdout.
 */
import { nodeletError } from '../errors/catalogue.ts';
import { dockerConfigCredentials } from '../images/docker-config.ts';
import { OciImageService } from '../images/image-service.ts';
import { WASM_LAYER_TYPES } from '../images/manifest.ts';
import { parseReference, registryHostOf } from '../images/reference.ts';
import { parseSubcommandArgs } from './subcommands.ts';

/** `--root-dir`'s default, as for the agent. */
export const DEFAULT_ROOT_DIR = '/var/lib/nodelet';

/** Runs `nodelet pull`; resolves to the exit code. */
export async function runPull(args: string[]): Promise<number> {
  const { positionals, flags } = parseSubcommandArgs('pull', args, ['root-dir'], ['insecure']);
  if (positionals.length !== 1) throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', 'nodelet pull: usage: nodelet pull <ref> [--root-dir DIR] [--insecure]');
  const image = positionals[0]!;
  const ref = parseReference(image);
  const rootDir = String(flags.get('root-dir') ?? DEFAULT_ROOT_DIR);
  const svc = await OciImageService.open({ rootDir, insecureRegistries: flags.has('insecure') ? [registryHostOf(ref)] : [], userAgent: 'nodelet-pull' });
  const img = await svc.pull(image, { pullPolicy: 'Always', credentials: await dockerConfigCredentials(), acceptLayerTypes: WASM_LAYER_TYPES });
  process.stderr.write(`${img.cached ? 'up to date' : 'pulled'}: ${img.imageID} (${img.size} bytes) -> ${img.path}\n`);
  process.stdout.write(`${img.digest}\n`);
  return 0;
}
