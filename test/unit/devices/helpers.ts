import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { until as untilHolds } from '../../harness/until.ts';

/** A logger that keeps lines for assertions. */
export function memLogger(): Logger & { lines: Array<{ level: string; obj: unknown; msg?: string }> } {
  const lines: Array<{ level: string; obj: unknown; msg?: string }> = [];
  const at = (level: string) => (obj: unknown, msg?: string) => {
    lines.push({ level, obj, msg });
  };
  const l = { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => l };
  return l as never;
}

export const tmp = (p = 'nodelet-dev-') => mkdtempSync(join(tmpdir(), p));

let n = 0;
/** A pod whose containers request `limits` of extended resources. */
export function pod(name: string, containers: Array<Record<string, string>>, init: Array<Record<string, string> & { restart?: string }> = []): V1Pod {
  n++;
  const uid = `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;
  return {
    metadata: { name, namespace: 'ns', uid },
    spec: {
      containers: containers.map((limits, i) => ({ name: `c${i}`, image: 'x', resources: { limits, requests: limits } })),
      initContainers: init.map(({ restart, ...limits }, i) => ({ name: `i${i}`, image: 'x', restartPolicy: restart, resources: { limits } })),
    },
  };
}

/** Polls `fn` until it holds; fails after `ms` naming `what`. */
export const until = (what: string, fn: () => boolean, ms = 5000): Promise<void> => untilHolds(what, fn, ms);
