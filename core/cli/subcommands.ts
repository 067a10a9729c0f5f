/**
 * `nodelet push`, `nodelet pull` and `nodelet run`: dispatch, and the argument parsing they
 * share (node:util `parseArgs`, strict: positionals plus `--flag[=value]`;
 * `-h`/`--help` on every subcommand). Both print errors as
 * `nodelet <cmd>: <message>` and return exit code 1 (2 for bad usage).
 */
import type { ParseArgsOptionsConfig } from 'node:util';
import { isNodeletError, nodeletError } from '../errors/index.ts';

// node:util's ES module namespace reads every export of the module, and its lazy ones load
// their own modules: ~2 ms of every `nodelet run` (bench/README.md, "nodelet run"). parseArgs
// alone is taken from the module itself, which Node has loaded already.
const { parseArgs } = process.getBuiltinModule('node:util');

/** The subcommands `nodelet` knows. */
export type SubcommandName = 'push' | 'pull' | 'run';

/** One subcommand: its usage text and its options (parseArgs's config). */
export interface SubcommandSpec {
  readonly usage: string;
  readonly options: ParseArgsOptionsConfig;
}

/** Parsed arguments: positionals in order and option values by name; `help` when -h/--help was given. */
export interface SubcommandArgs {
  readonly positionals: string[];
  readonly values: Record<string, string | boolean | string[] | undefined>;
  readonly help: boolean;
}

/**
 * Parses `args` against `spec` (plus `-h`/`--help`). Unknown flags and missing
 * values fail with `NDL_CONFIG_UNEXPECTED_ARG`, naming the subcommand.
 */
export function parseSubcommandArgs(_cmd: SubcommandName, args: readonly string[], spec: SubcommandSpec): SubcommandArgs {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: { ...spec.options, help: { type: 'boolean', short: 'h' } },
    });
    const { help, ...rest } = values as Record<string, string | boolean | string[] | undefined>;
    return { positionals, values: rest, help: help === true };
  } catch (e) {
    // parseArgs's own messages name the flag ("Unknown option '--x'", "Option '--y <value>' argument missing").
    throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', `${(e as Error).message.split('.')[0]}`, e);
  }
}

/** Runs `nodelet push|pull|run args`; resolves to the exit code. */
export async function runSubcommand(name: SubcommandName, args: string[]): Promise<number> {
  try {
    if (name === 'push') return await (await import('./push.ts')).runPush(args);
    if (name === 'run') return await (await import('./run-module.ts')).runModule(args);
    return await (await import('./pull.ts')).runPull(args);
  } catch (e) {
    return subcommandFailed(name, e);
  }
}

/** Prints `e` as `nodelet <name>: <message>` (with a pointer to --help for bad usage); returns the exit code, 2 for bad usage, else 1. */
export function subcommandFailed(name: SubcommandName, e: unknown): number {
  const usage = isNodeletError(e, 'NDL_CONFIG_UNEXPECTED_ARG');
  process.stderr.write(`nodelet ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
  if (usage) process.stderr.write(`Run "nodelet ${name} --help" for usage.\n`);
  return usage ? 2 : 1;
}

const human = (n: number) => (n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1 << 20)).toFixed(1)} MiB`);

/** A transfer's progress line: `pushing sha256:0123456789ab: 4.0 MiB / 9.5 MiB (42%)`. */
export function transferLine(verb: 'pushing' | 'pulling', digest: string, doneBytes: number, totalBytes: number): string {
  const pct = totalBytes > 0 ? Math.floor((doneBytes * 100) / totalBytes) : 100;
  return `${verb} ${digest.slice(0, 19)}: ${human(doneBytes)} / ${human(totalBytes)} (${pct}%)`;
}

/**
 * Writes progress lines to stderr: on a TTY one line rewritten in place (a newline
 * once complete), otherwise one line per report.
 */
export function progressWriter(): (line: string, complete: boolean) => void {
  const tty = process.stderr.isTTY === true;
  return (line, complete) => {
    process.stderr.write(tty ? `\r${line}${complete ? '\n' : ''}` : `${line}\n`);
  };
}
