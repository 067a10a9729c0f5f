/**
 * `nodelet` entry point: parses the command line and runs the node agent or a
 * subcommand. Returns the process exit code.
 */
import { parseCommandLine } from '../config/index.ts';
import { isNodeletError } from '../errors/index.ts';

/** What the launcher (bin/nodelet.mjs) hands to {@link main}. */
export interface MainHooks {
  /**
   * Called once the agent has started (or at once for any other command): the launcher
   * holds V8's optimizing tiers until then (bin/node-runtime.mjs, holdOptimizingTiers).
   */
  readonly started?: () => void;
}

/** Runs nodelet with `argv` (without `node` and the script); resolves to the exit code. */
export async function main(argv: string[], hooks: MainHooks = {}): Promise<number> {
  let cmd;
  try {
    cmd = parseCommandLine(argv);
  } catch (e) {
    process.stderr.write(`nodelet: ${isNodeletError(e) ? e.message : String(e)}\n`);
    process.stderr.write('Run "nodelet --help" for usage.\n');
    return 2;
  }
  if (cmd.kind !== 'run') hooks.started?.();
  switch (cmd.kind) {
    case 'help':
      process.stdout.write(`${cmd.text}\n`);
      return 0;
    case 'version':
      process.stdout.write(`${cmd.text}\n`);
      return 0;
    case 'subcommand': {
      const { runSubcommand } = await import('./subcommands.ts');
      return runSubcommand(cmd.name, cmd.args);
    }
    case 'run': {
      const { runNodelet } = await import('./run.ts');
      return runNodelet(cmd.options, cmd.warnings, hooks.started);
    }
  }
}
