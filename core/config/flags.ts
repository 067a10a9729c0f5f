/**
 * The command line: upstream kubelet flag syntax (`--flag=value`,
 * `--flag value`, booleans `--flag` / `--flag=false`, `-v N`, `-h`), the
 * `push` / `pull` / `run` subcommands, and the merge defaults < --config < flags.
 */
import os from 'node:os';
import { errorDetail, nodeletError } from '../errors/index.ts';
import { helpText, versionText } from './usage.ts';
import { findFlag } from './flag-table.ts';
import { loadKubeletConfig } from './kubelet-config.ts';
import { resolveOptions, type NodeletOptions, type Settings } from './options.ts';
import { validateOptions } from './validate.ts';
import { parseBool } from './values.ts';

export { FLAGS, type FlagSpec } from './flag-table.ts';

/** What the command line asks for. `warnings` are for the caller to log once its logger exists. */
export type CommandLine =
  | { kind: 'run'; options: NodeletOptions; warnings: string[] }
  | { kind: 'help'; text: string }
  | { kind: 'version'; text: string }
  | { kind: 'subcommand'; name: 'push' | 'pull' | 'run'; args: string[] };

/** Test seams for {@link parseCommandLine}. */
export interface ParseEnv {
  /** Host name used when --hostname-override is not given (default os.hostname()). */
  hostname?: string;
}

const SUBCOMMANDS = ['push', 'pull', 'run'] as const;
const SHORTHANDS: Readonly<Record<string, string>> = { h: 'help', v: 'v' };

type Parsed = { kind: 'help' } | { kind: 'version' } | { kind: 'flags'; settings: Settings };

/** Splits `--name=value` / `-n value` into name, spelling and inline value; undefined for a non-flag. */
function splitArg(arg: string): { name: string; shown: string; inline?: string } | undefined {
  if (!arg.startsWith('-') || arg === '-' || arg === '--') return undefined;
  const long = arg.startsWith('--');
  const body = arg.slice(long ? 2 : 1);
  const eq = body.indexOf('=');
  const raw = eq < 0 ? body : body.slice(0, eq);
  const inline = eq < 0 ? undefined : body.slice(eq + 1);
  const shown = `${long ? '--' : '-'}${raw}`;
  const name = long ? raw : SHORTHANDS[raw];
  if (name === undefined || raw === '') throw nodeletError('NDL_CONFIG_UNKNOWN_FLAG', shown);
  return inline === undefined ? { name, shown } : { name, shown, inline };
}

function invalid(value: string, shown: string, reason: string) {
  return nodeletError('NDL_CONFIG_INVALID_VALUE', `${JSON.stringify(value)} for ${shown}: ${reason}`);
}

/** Reads flags into settings; stops early for --help / --version. */
function parseFlags(argv: readonly string[]): Parsed {
  const settings: Settings = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const split = splitArg(arg);
    if (!split) {
      throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', `${JSON.stringify(arg)} (nodelet takes flags, or a subcommand first: push, pull, run)`);
    }
    const { name, shown, inline } = split;
    if (name === 'help' || name === 'version') {
      const on = inline === undefined ? true : boolOf(inline, shown);
      if (on) return { kind: name };
      continue;
    }
    const spec = findFlag(name);
    if (!spec) throw nodeletError('NDL_CONFIG_UNKNOWN_FLAG', shown);
    let value = inline;
    if (value === undefined) {
      if (spec.type === 'bool') value = 'true';
      else if (i + 1 < argv.length) value = argv[++i]!;
      else throw nodeletError('NDL_CONFIG_INVALID_VALUE', `${shown}: needs a value`);
    }
    try {
      spec.apply(settings, value);
    } catch (e) {
      throw invalid(value, shown, errorDetail(e));
    }
  }
  return { kind: 'flags', settings };
}

function boolOf(raw: string, shown: string): boolean {
  try {
    return parseBool(raw);
  } catch (e) {
    throw invalid(raw, shown, errorDetail(e));
  }
}

/**
 * Parses nodelet's command line (without the node and script paths).
 * Throws a NodeletError (NDL_CONFIG_*) with a one-line message naming the
 * flag, config field or argument at fault.
 */
export function parseCommandLine(argv: readonly string[], env: ParseEnv = {}): CommandLine {
  const first = argv[0];
  if (first !== undefined && (SUBCOMMANDS as readonly string[]).includes(first)) {
    return { kind: 'subcommand', name: first as (typeof SUBCOMMANDS)[number], args: argv.slice(1) };
  }
  const parsed = parseFlags(argv);
  if (parsed.kind === 'help') return { kind: 'help', text: helpText() };
  if (parsed.kind === 'version') return { kind: 'version', text: versionText() };
  const flags = parsed.settings;
  const file = flags.config ? loadKubeletConfig(flags.config) : { settings: {}, warnings: [] };
  const options = resolveOptions({ ...file.settings, ...definedOnly(flags) }, env.hostname ?? os.hostname());
  validateOptions(options);
  return { kind: 'run', options, warnings: file.warnings };
}

function definedOnly(s: Settings): Settings {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as Settings;
}
