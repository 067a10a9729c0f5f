/** The text of `nodelet --help` and `nodelet --version`. */
import { FLAGS, type FlagSpec } from './flag-table.ts';
import { KUBELET_COMPATIBLE_VERSION, packageVersion } from './repo-root.ts';

/** `nodelet v<version> (kubelet-compatible v1.36)`. */
export function versionText(): string {
  return `nodelet v${packageVersion()} (kubelet-compatible ${KUBELET_COMPATIBLE_VERSION})`;
}

/** A flag's default as help shows it: a map's entries sorted (as pflag prints a map), the rest as written. */
export function shownDefault(f: FlagSpec): string {
  return f.type === 'mapStringString' ? f.default.split(',').sort().join(',') : f.default;
}

function flagLine(f: FlagSpec, width: number): string {
  const d = shownDefault(f);
  const shown = d === '' ? '' : f.type === 'string' || f.type === 'ip' ? ` (default "${d}")` : ` (default ${d})`;
  return `  ${flagHead(f).padEnd(width)}   ${f.help}${shown}`;
}

function flagHead(f: FlagSpec): string {
  const short = f.name === 'v' ? '-v, ' : '    ';
  return f.type === 'bool' ? `${short}--${f.name}` : `${short}--${f.name} ${f.type}`;
}

/** The full help text: usage, subcommands, then upstream and nodelet flags with defaults. */
export function helpText(): string {
  const width = Math.max(...FLAGS.map((f) => flagHead(f).length));
  const group = (upstream: boolean) => FLAGS.filter((f) => f.upstream === upstream).map((f) => flagLine(f, width));
  return [
    'nodelet: a Kubernetes kubelet that runs WebAssembly (WASI) pods through drop-in providers.',
    '',
    'Usage:',
    '  nodelet [flags]                     run the node agent',
    '  nodelet push <module.wasm> <ref>    push a Wasm module to an OCI registry as an image',
    '  nodelet pull <ref>                  pull an image into the local image store',
    '  nodelet run <ref|file.wasm> [-- args]  run a Wasm module once (like wasmtime run)',
    '  nodelet --version                   print the version',
    '  nodelet --help                      print this help',
    '',
    'Flags take --flag=value or --flag value; booleans take --flag or --flag=false.',
    'Settings come from the defaults, then --config, then flags (flags win).',
    '',
    'Kubelet flags (upstream names and meaning):',
    ...group(true),
    '',
    'nodelet flags:',
    ...group(false),
    `  ${'-h, --help'.padEnd(width)}   Print this help`,
    `  ${'    --version'.padEnd(width)}   Print the version`,
  ].join('\n');
}
