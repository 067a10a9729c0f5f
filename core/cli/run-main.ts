/**
 * The entry of `nodelet run` (bin/nodelet.mjs imports it when `run` is the first
 * argument): only the subcommand's own module graph, loaded at once, not main.ts's,
 * whose parsing of the agent's flags loads the configuration, defaults and help of the
 * whole node agent. Errors and exit codes are those of runSubcommand (subcommands.ts),
 * as through main.ts.
 */
import { runModule } from './run-module.ts';
import { subcommandFailed } from './subcommands.ts';

/** Runs `nodelet run args` (argv after `run`); resolves to the exit code. */
export async function main(args: string[]): Promise<number> {
  try {
    return await runModule(args);
  } catch (e) {
    return subcommandFailed('run', e);
  }
}
