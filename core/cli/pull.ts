/**
 * `nodelet pull <ref> [--root-dir DIR] [--insecure]`: pulls an image into the
 * local image store (as the agent would, policy Always) with the credentials of
 * `~/.docker/config.json`, and prints its manifest digest on stdout. The layer's
 * download shows progress on stderr like `nodelet push` (in place on a TTY).
 */
import { nodeletError } from '../errors/index.ts';
import { dockerConfigCredentials, OciImageService, WASM_LAYER_TYPES, parseReference, registryHostOf } from '../images/index.ts';
import { parseSubcommandArgs, progressWriter, transferLine, type SubcommandSpec } from './subcommands.ts';

/** `--root-dir`'s default, as for the agent. */
const DEFAULT_ROOT_DIR = '/var/lib/nodelet';

/** `nodelet pull`'s usage and options. */
const PULL: SubcommandSpec = {
  usage: `Usage: nodelet pull <ref> [--root-dir DIR] [--insecure]

Pulls an image into nodelet's local image store (as the agent does with pull policy
Always), with the credentials of ~/.docker/config.json ($DOCKER_CONFIG). Shows the
download's progress on stderr and prints the manifest digest on stdout.

Flags:
  --root-dir DIR   nodelet's root directory; the store is <DIR>/images (default "${DEFAULT_ROOT_DIR}")
  --insecure       speak plain HTTP to the registry
  -h, --help       show this help`,
  options: { 'root-dir': { type: 'string' }, insecure: { type: 'boolean' } },
};

/** Runs `nodelet pull`; resolves to the exit code. */
export async function runPull(args: string[]): Promise<number> {
  const { positionals, values, help } = parseSubcommandArgs('pull', args, PULL);
  if (help) {
    process.stdout.write(`${PULL.usage}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', 'nodelet pull: usage: nodelet pull <ref> [--root-dir DIR] [--insecure]');
  const image = positionals[0]!;
  const ref = parseReference(image);
  const rootDir = String(values['root-dir'] ?? DEFAULT_ROOT_DIR);
  const progress = progressWriter();
  const svc = await OciImageService.open({
    rootDir,
    insecureRegistries: values.insecure ? [registryHostOf(ref)] : [],
    userAgent: 'nodelet-pull',
    onProgress: (p) => progress(transferLine('pulling', p.digest, p.receivedBytes, p.totalBytes), p.receivedBytes >= p.totalBytes),
  });
  const img = await svc.pull(image, { pullPolicy: 'Always', credentials: await dockerConfigCredentials(), acceptLayerTypes: WASM_LAYER_TYPES });
  process.stderr.write(`${img.cached ? 'up to date' : 'pulled'}: ${img.imageID} (${img.size} bytes) -> ${img.path}\n`);
  process.stdout.write(`${img.digest}\n`);
  return 0;
}
