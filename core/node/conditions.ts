/**
 * Node conditions with upstream's types, reasons and messages
 * (pkg/kubelet/nodestatus/setters.go). Pressure uses upstream's default hard
 * eviction thresholds: memory.available<100Mi, nodefs.available<10%, and 5% of pid_max.
 */
import type { V1NodeCondition } from '@kubernetes/client-node';
import type { NodeConditionContribution } from '@nodelet/plugin-api/v1';
import type { Pressure } from './host-info.ts';

const MEMORY_THRESHOLD = 100 * 1024 * 1024;
const DISK_THRESHOLD = 0.1;
const PID_THRESHOLD = 0.05;

type Cond = Pick<V1NodeCondition, 'type' | 'status' | 'reason' | 'message'>;

function cond(type: string, bad: boolean, yes: [string, string], no: [string, string]): Cond {
  const [reason, message] = bad ? yes : no;
  return { type, status: bad ? 'True' : 'False', reason, message };
}

/** Joins reasons like apimachinery's errors.NewAggregate: duplicates once, one as is, several as `[a, b]`. */
function aggregate(reasons: string[]): string {
  const unique = [...new Set(reasons)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

/** Which pressure conditions are True, as the eviction manager decides them (thresholds, transition period). */
export interface PressureFlags {
  memory: boolean;
  disk: boolean;
  pid: boolean;
}

/** Pressure flags from a raw sample against upstream's default hard thresholds (when no eviction manager runs). */
function flagsOf(p: Pressure | PressureFlags): PressureFlags {
  if ('memory' in p) return p;
  return { memory: p.memoryAvailableBytes < MEMORY_THRESHOLD, disk: p.diskAvailableFraction < DISK_THRESHOLD, pid: p.pidsAvailableFraction < PID_THRESHOLD };
}

/**
 * Computes the four standard conditions; `notReady` lists reasons the node cannot take pods.
 * `p` is the eviction manager's verdict, or a raw sample checked against the default thresholds.
 */
export function computeConditions(sample: Pressure | PressureFlags, notReady: string[]): Cond[] {
  const p = flagsOf(sample);
  return [
    notReady.length
      ? { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: aggregate(notReady) }
      : { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
    cond(
      'MemoryPressure',
      p.memory,
      ['KubeletHasInsufficientMemory', 'kubelet has insufficient memory available'],
      ['KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
    ),
    cond('DiskPressure', p.disk, ['KubeletHasDiskPressure', 'kubelet has disk pressure'], ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure']),
    cond(
      'PIDPressure',
      p.pid,
      ['KubeletHasInsufficientPID', 'kubelet has insufficient PID available'],
      ['KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
    ),
  ];
}

/**
 * Appends the providers' node conditions (`NodeContribution.conditions`) to core's:
 * a provider condition whose type core already reports (`Ready`, the pressures) is
 * dropped, as is a second one of the same type; the result is what the status loop
 * posts and compares with the server's copy.
 */
export function withProviderConditions(core: Cond[], provided: readonly NodeConditionContribution[]): Cond[] {
  const out = [...core];
  const seen = new Set(core.map((c) => c.type));
  for (const c of provided) {
    if (seen.has(c.type)) continue;
    seen.add(c.type);
    out.push({ type: c.type, status: c.status, reason: c.reason, message: c.message });
  }
  return out;
}

/**
 * Merges freshly computed conditions into the previous ones: lastTransitionTime
 * moves only when status changes; lastHeartbeatTime is `now` (set on every post).
 */
export function mergeConditions(prev: V1NodeCondition[] | undefined, next: Cond[], now: Date): V1NodeCondition[] {
  return next.map((c) => {
    const old = prev?.find((p) => p.type === c.type);
    const transition = old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now;
    return { ...c, lastHeartbeatTime: now, lastTransitionTime: transition };
  });
}
