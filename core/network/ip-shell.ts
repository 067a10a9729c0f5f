/**
 * `ip` run through long-lived helpers (`core/exec`) instead of one `execFile` per
 * call: forking a big nodelet per call was the top self-time function of a 100-pod
 * burst (22 %). See `core/exec/helper-shell.ts`. A pod's IP costs one
 * `ip addr replace` at start and one `ip addr del` at deletion: where `perl` exists
 * those two go to the netlink helper (`addr-netlink.ts`, no fork per call), as do
 * the pod routes' changes (`pod-routes.ts`); the rest (the bridge's creation,
 * listing its addresses and nodelet's routes) to a `/bin/sh` helper.
 */
import { helperShell } from '../exec/index.ts';
import { addrNetlink, isNetlinkCall } from './addr-netlink.ts';
import type { IpCommand } from './pod-interface.ts';

/** Options of {@link shellIpCommand} (tests). */
export interface ShellIpOptions {
  /** Default `/bin/sh`. */
  readonly shell?: string;
  /** The perl of the netlink helper (default `/usr/bin/perl`); `false`: every call through the shell. */
  readonly perl?: string | false;
}

/** An {@link IpCommand} over helpers (each spawned by the first call it takes, ended when idle); `close()` ends them. */
export function shellIpCommand(o: ShellIpOptions = {}): IpCommand & { close(): void } {
  const program = o.perl === false ? undefined : addrNetlink({ perl: o.perl });
  const nl = program && helperShell({ errorCode: 'NDL_NETWORK_INTERFACE', program, size: 1 });
  // With the netlink helper, the shell runs only the rare calls: one is enough.
  const sh = helperShell({ errorCode: 'NDL_NETWORK_INTERFACE', shell: o.shell, size: nl ? 1 : 2 });
  return Object.assign((args: readonly string[]) => (nl && isNetlinkCall(args) ? nl('ip', args) : sh('ip', args)), {
    close: () => {
      sh.close();
      nl?.close();
    },
  });
}
