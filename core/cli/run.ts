/**
 * `nodelet [flags]`: starts the node agent and runs until SIGTERM/SIGINT,
 * then stops taking pods, stops containers within their grace periods and
 * exits 0 (the Node object stays, as upstream).
 */
import { createLogger, flushLogger } from '../logging/index.ts';
import { startNodelet } from '../agent/index.ts';
import { type NodeletOptions, KUBELET_COMPATIBLE_VERSION, packageVersion } from '../config/index.ts';
import { startIdleCompaction } from './idle-compaction.ts';

/**
 * How long a start interrupted by SIGTERM/SIGINT may still take to complete (then nodelet stops
 * cleanly) before nodelet exits without waiting for it. Exiting then is safe: every file nodelet
 * keeps is written whole or not at all (write-then-rename), and containers in the runtime process
 * outlive nodelet by design; the next start finds them as after a crash. The exit status is 0: the
 * stop was asked for, and a service manager must not record it as a failure.
 */
const START_ABORT_MS = 750;

/**
 * Runs until a termination signal; resolves to the exit code. `onStarted` is called once the
 * agent has started (the launcher's release of V8's optimizing tiers, see main.ts).
 */
export async function runNodelet(options: NodeletOptions, warnings: string[], onStarted?: () => void): Promise<number> {
  const log = createLogger({ level: options.logLevel, name: 'nodelet', format: options.loggingFormat });
  // Listen before the first log line: a SIGTERM while the agent is still starting (the Node
  // can be registered and Ready well before every subsystem is up) must stop it cleanly, not
  // kill the process with the signal's default action. A caller that signals as soon as it
  // reads "starting nodelet" must find the handler already installed.
  const signalled = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info({ version: packageVersion(), kubeletVersion: KUBELET_COMPATIBLE_VERSION, nodeVersion: process.version }, 'starting nodelet');
  for (const w of warnings) log.warn(w);
  let started = false;
  void signalled.then((signal) => {
    if (started) return;
    log.warn({ signal }, 'signal received while starting: stopping as soon as the start completes');
    const giveUp = setTimeout(() => {
      log.warn({ waitedMs: START_ABORT_MS }, 'nodelet did not finish starting after the signal: exiting without waiting for it');
      flushLogger();
      process.exit(0);
    }, START_ABORT_MS);
    giveUp.unref();
  });
  let agent;
  try {
    agent = await startNodelet(options, log);
    started = true;
    onStarted?.();
  } catch (e) {
    log.error({ err: (e as Error).message }, 'nodelet failed to start');
    flushLogger();
    // What the start opened before it failed (servers, watches, timers) would keep the process
    // alive: a kubelet that cannot start exits, so that its service manager sees it and restarts it.
    process.exit(1);
  }
  const mib = (b: number) => Math.round(b / 2 ** 17) / 8;
  const stopCompaction = startIdleCompaction({
    onCompacted: (c) => log.debug({ rssBeforeMiB: mib(c.rssBefore), rssAfterMiB: mib(c.rssAfter), ms: Math.round(c.ms) }, 'idle: heap compacted'),
  });
  const signal = await signalled;
  stopCompaction();
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
