/**
 * `nodelet [flags]`: starts the node agent and runs until SIGTERM/SIGINT,
 * then stops taking pods, stops containers within their grace periods and
 * exits 0 (the Node object stays, as upstream).
 */
import { createLogger, flushLogger } from '../logging/index.ts';
import { startNodelet } from '../agent/index.ts';
import { type NodeletOptions, KUBELET_COMPATIBLE_VERSION, packageVersion } from '../config/index.ts';

/** Runs until a termination signal; resolves to the exit code. */
export async function runNodelet(options: NodeletOptions, warnings: string[]): Promise<number> {
  const log = createLogger({ level: options.logLevel, name: 'nodelet', format: options.loggingFormat });
  log.info({ version: packageVersion(), kubeletVersion: KUBELET_COMPATIBLE_VERSION, nodeVersion: process.version }, 'starting nodelet');
  for (const w of warnings) log.warn(w);
  let agent;
  try {
    agent = await startNodelet(options, log);
  } catch (e) {
    log.error({ err: (e as Error).message }, 'nodelet failed to start');
    flushLogger();
    return 1;
  }
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info({ signal }, 'shutting down');
  const force = setTimeout(() => {
    log.error('shutdown took too long, exiting');
    flushLogger();
    process.exit(1);
  }, agent.maxShutdownMs());
  force.unref();
  await agent.stop();
  log.info('stopped');
  flushLogger();
  return 0;
}
