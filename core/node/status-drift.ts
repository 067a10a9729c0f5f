/**
 * Where the Node's status on the server differs from what nodelet reports, as
 * upstream's kubelet checks on every `nodeStatusUpdateFrequency` tick
 * (`kubelet_node_status.go` `tryUpdateNodeStatus` → `nodeStatusHasChanged`): the
 * node-lifecycle controller may have set `Ready=Unknown` while the apiserver
 * could not hear from nodelet, or someone may have edited the status. Heartbeat
 * and transition times are ignored; quantities compare by value (the apiserver
 * writes `1048576Ki` back as `1Gi`), addresses as a set.
 */
import type { V1NodeAddress, V1NodeCondition, V1NodeStatus } from '@kubernetes/client-node';
import { parseQuantity } from '../kube/index.ts';

/** A condition as nodelet computes it (no times). */
export type ConditionView = Pick<V1NodeCondition, 'type' | 'status' | 'reason' | 'message'>;

/** True when two quantities have the same value (string equality when either does not parse). */
function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  try {
    const x = parseQuantity(a);
    const y = parseQuantity(b);
    return x.num * y.den === y.num * x.den;
  } catch {
    return false;
  }
}

function sameResources(server: Record<string, string> | undefined, want: Record<string, string> | undefined): boolean {
  const s = server ?? {};
  const w = want ?? {};
  const keys = new Set([...Object.keys(s), ...Object.keys(w)]);
  for (const k of keys) if (!sameQuantity(s[k], w[k])) return false;
  return true;
}

function addressKeys(list: V1NodeAddress[] | undefined): string {
  return (list ?? [])
    .map((a) => `${a.type}=${a.address}`)
    .sort()
    .join(',');
}

/**
 * The fields of `server` that differ from nodelet's view: `conditions[<type>]` for
 * each of nodelet's conditions whose status, reason or message differs (or is
 * missing), then `addresses`, `capacity`, `allocatable`. Empty when in step.
 * Conditions other writers own (types nodelet does not report) are left alone.
 */
export function statusDrift(server: V1NodeStatus | undefined, want: V1NodeStatus, conditions: readonly ConditionView[]): string[] {
  const out: string[] = [];
  for (const c of conditions) {
    const s = server?.conditions?.find((x) => x.type === c.type);
    if (!s || s.status !== c.status || (s.reason ?? '') !== (c.reason ?? '') || (s.message ?? '') !== (c.message ?? '')) out.push(`conditions[${c.type}]`);
  }
  if (addressKeys(server?.addresses) !== addressKeys(want.addresses)) out.push('addresses');
  if (!sameResources(server?.capacity, want.capacity)) out.push('capacity');
  if (!sameResources(server?.allocatable, want.allocatable)) out.push('allocatable');
  return out;
}
