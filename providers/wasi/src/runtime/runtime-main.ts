/**
 * The WASI runtime process's entry (`node dist/runtime/runtime-main.js
 * <provider root dir>`): the `wasi` provider spawns it detached, in its own
 * process group, so that it outlives nodelet (see README.md, "The runtime
 * process"). It writes its pid file, serves the socket, and logs JSON lines to
 * `runtime.log`, rotated by size (runtime-log.ts); its stdout and stderr (the
 * spawner points them at `runtime.out`) get only what is not a log line, such
 * as a crash's stack. SIGTERM/SIGINT stop every module and exit: stopping the
 * runtime is what ends the containers.
 */
import { renameSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@nodelet/plugin-api/v1';
import { optionsFromEnv } from '../index.ts';
import { LOG_FILE_NAME, PID_FILE_NAME, SOCKET_NAME } from './protocol.ts';
import { RotatingLog } from './runtime-log.ts';
import { RuntimeServer } from './runtime-server.ts';

/** A JSON-lines logger on `out` (pino's shape: level, time, msg, bindings). */
function jsonLogger(out: RotatingLog, bindings: Record<string, unknown>): Logger {
  const line = (level: number) => (obj: object | string, msg?: string) => {
    const fields = typeof obj === 'string' ? { msg: obj } : { ...obj, msg };
    out.write(`${JSON.stringify({ level, time: Date.now(), pid: process.pid, ...bindings, ...fields })}\n`);
  };
  return { debug: () => undefined, info: line(30), warn: line(40), error: line(50), child: (b) => jsonLogger(out, { ...bindings, ...b }) };
}

/**
 * The runtime's OOM score adjustment. nodelet's unit protects nodelet with
 * `OOMScoreAdjust=-999`, which a child inherits; the runtime holds every
 * module's memory, so when the node runs out the kernel must pick it, not
 * nodelet (raising one's own score needs no privilege).
 */
const RUNTIME_OOM_SCORE_ADJ = 0;

function raiseOomScore(log: Logger): void {
  try {
    const current = Number(readFileSync('/proc/self/oom_score_adj', 'utf8').trim());
    if (current < RUNTIME_OOM_SCORE_ADJ) {
      writeFileSync('/proc/self/oom_score_adj', String(RUNTIME_OOM_SCORE_ADJ));
      log.info({ from: current, to: RUNTIME_OOM_SCORE_ADJ }, 'raised the runtime oom_score_adj above nodelet');
    }
  } catch (e) {
    log.warn({ err: String(e) }, 'could not set the runtime oom_score_adj');
  }
}

async function main(): Promise<void> {
  const rootDir = process.argv[2];
  if (!rootDir) {
    process.stderr.write('usage: runtime-main <provider root dir>\n');
    process.exit(2);
  }
  const log = jsonLogger(new RotatingLog(join(rootDir, LOG_FILE_NAME)), { name: 'wasi-runtime' });
  raiseOomScore(log);
  const pidFile = join(rootDir, PID_FILE_NAME);
  const server = new RuntimeServer({ socketPath: join(rootDir, SOCKET_NAME), rootDir, log, provider: optionsFromEnv(process.env) });
  await server.start();
  // Replaced whole by a rename. It is for operators (nodelet reaches the runtime by its socket), so on
  // a full disk the runtime serves on without it rather than failing to start.
  try {
    writeFileSync(`${pidFile}.tmp`, `${process.pid}\n`);
    renameSync(`${pidFile}.tmp`, pidFile);
  } catch (e) {
    rmSync(`${pidFile}.tmp`, { force: true });
    log.warn({ err: String(e), pidFile }, 'cannot write the pid file');
  }
  log.info({ rootDir }, 'wasi runtime is serving');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, containers: server.size }, 'wasi runtime stopping: its containers end');
    void server.close().finally(() => {
      // Remove the pid file only if it is still ours (a newer runtime may have replaced it).
      try {
        if (readFileSync(pidFile, 'utf8').trim() === String(process.pid)) rmSync(pidFile, { force: true });
      } catch {
        // already gone
      }
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // nodelet going away closes its connection; the runtime's pipes are a file, never a terminal.
  process.on('SIGHUP', () => undefined);
}

main().catch((e: unknown) => {
  process.stderr.write(`wasi runtime failed to start: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
