/**
 * `nodelet push` and `nodelet pull`: dispatch, and the argument parsing they
 * share (positionals plus `--flag[=value]`). Both print errors as
 * `nodelet <cmd>: <message>` and return exit code 1 (2 for bad usage).
 */
import { isNodeletError, nodeletError } from '../errors/catalogue.ts';

/** Parsed arguments: positionals in order and flags by name (`true` for a bare boolean flag). */
export interface SubcommandArgs {
  readonly positionals: string[];
  readonly flags: Map<string, string | true>;
}

/**
 * Parses `args`. `valued` flags take `--f=v` or `--f v`; `bools` take `--f`.
 * Unknown flags fail with `NDL_CONFIG_UNEXPECTED_ARG`.
 */
export function parseSubcommandArgs(cmd: string, args: readonly string[], valued: readonly string[], bools: readonly string[]): SubcommandArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--') || a === '--') { positionals.push(a); continue; }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (bools.includes(name) && eq < 0) { flags.set(name, true); continue; }
    if (!valued.includes(name)) throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', `nodelet ${cmd}: unknown flag --${name}`);
    const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined) throw nodeletError('NDL_CONFIG_UNEXPECTED_ARG', `nodelet ${cmd}: --${name} needs a value`);
    flags.set(name, value);
  }
  return { positionals, flags };
}

/** Runs `nodelet push|pull args`; resolves to the exit code. */
export async function runSubcommand(name: 'push' | 'pull', args: string[]): Promise<number> {
  try {
    if (name === 'push') return await (await import('./push.ts')).runPush(args);
    return await (await import('./pull.ts')).runPull(args);
  } catch (e) {
    const usage = isNodeletError(e, 'NDL_CONFIG_UNEXPECTED_ARG');
    process.stderr.write(`nodelet ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    if (usage) process.stderr.write(`Run "nodelet --help" for usage.\n`);
    return usage ? 2 : 1;
  }
}
