/**
 * `ip` run through long-lived helper shells (`core/exec`) instead of one
 * `execFile` per call: a pod's IP costs one `ip addr replace` at start and one
 * `ip addr del` at deletion, and forking a big nodelet per call was the top
 * self-time function of a 100-pod burst (22 %). See `core/exec/helper-shell.ts`.
 */
import { helperShell } from '../exec/index.ts';
import type { IpCommand } from './pod-interface.ts';

/** An {@link IpCommand} over a helper (its shells spawned now); `close()` ends them. */
export function shellIpCommand(shell = '/bin/sh'): IpCommand & { close(): void } {
  const sh = helperShell({ errorCode: 'NDL_NETWORK_INTERFACE', shell });
  return Object.assign((args: readonly string[]) => sh('ip', args), { close: () => sh.close() });
}
