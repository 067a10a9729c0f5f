/**
 * Where container logs live on disk, laid out like the upstream kubelet's
 * `/var/log/pods` (`pkg/kubelet/kuberuntime/kuberuntime_container.go`):
 *
 *   <rootDir>/logs/pods/<namespace>_<podName>_<podUID>/<containerName>/<restartCount>.log
 *   <rootDir>/logs/pods/<namespace>_<podName>_<podUID>/<containerName>/<restartCount>.log.<YYYYMMDD-HHMMSS>
 *
 * Every name is validated before it becomes a path component, and every
 * result is checked to stay under the pods-log root, so a name such as `..`
 * or `a/b` can never address a file elsewhere.
 */
import path from 'node:path';
import { readdir } from 'node:fs/promises';
import { nodeletError } from '../errors/index.ts';

/** The identity of a pod, as needed for its log directory. */
export interface PodLogIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const UID = /^[A-Za-z0-9][A-Za-z0-9-]{0,127}$/;
const ROTATED_SUFFIX = /^\.(\d{8}-\d{6})$/;

/** True if `s` is an RFC 1123 DNS label (namespaces, container names). */
function isDnsLabel(s: string): boolean {
  return s.length <= 63 && DNS_LABEL.test(s);
}

/** True if `s` is an RFC 1123 DNS subdomain (pod names). */
function isDnsSubdomain(s: string): boolean {
  return s.length <= 253 && DNS_SUBDOMAIN.test(s);
}

/** True if `s` can be a pod UID path component (UUIDs, static-pod hashes). */
function isPodUid(s: string): boolean {
  return UID.test(s);
}

function check(ok: boolean, what: string, value: string): void {
  if (!ok) throw nodeletError('NDL_PATH_ESCAPE', `invalid ${what} ${JSON.stringify(value)} for a log path`);
}

/** `<rootDir>/logs/pods`: the root every container log lives under. */
export function podLogsRoot(rootDir: string): string {
  return path.join(path.resolve(rootDir), 'logs', 'pods');
}

/** Throws `NDL_PATH_ESCAPE` unless `p` is strictly inside `root`. */
export function assertInside(root: string, p: string): string {
  const rel = path.relative(root, p);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    throw nodeletError('NDL_PATH_ESCAPE', `${p} is not inside ${root}`);
  }
  return p;
}

/** The directory name of a pod's logs: `<namespace>_<podName>_<podUID>`. */
function podLogDirName(pod: PodLogIdentity): string {
  check(isDnsLabel(pod.namespace), 'namespace', pod.namespace);
  check(isDnsSubdomain(pod.name), 'pod name', pod.name);
  check(isPodUid(pod.uid), 'pod uid', pod.uid);
  return `${pod.namespace}_${pod.name}_${pod.uid}`;
}

/** `<rootDir>/logs/pods/<namespace>_<podName>_<podUID>`. */
export function podLogDir(rootDir: string, pod: PodLogIdentity): string {
  const root = podLogsRoot(rootDir);
  return assertInside(root, path.join(root, podLogDirName(pod)));
}

/** `<rootDir>/logs/pods/<namespace>_<podName>_<podUID>/<containerName>`. */
export function containerLogDir(rootDir: string, pod: PodLogIdentity, container: string): string {
  check(isDnsLabel(container), 'container name', container);
  const root = podLogsRoot(rootDir);
  return assertInside(root, path.join(podLogDir(rootDir, pod), container));
}

/** The file name of one container instance's log: `<restartCount>.log`. */
function logFileName(restartCount: number): string {
  if (!Number.isSafeInteger(restartCount) || restartCount < 0) {
    throw nodeletError('NDL_PATH_ESCAPE', `invalid restart count ${restartCount} for a log path`);
  }
  return `${restartCount}.log`;
}

/** `<containerLogDir>/<restartCount>.log`. */
export function containerLogFile(logDir: string, restartCount: number): string {
  return path.join(logDir, logFileName(restartCount));
}

/** `<containerLogDir>/<restartCount>.log` computed from the pod identity. */
export function containerLogPath(rootDir: string, pod: PodLogIdentity, container: string, restartCount: number): string {
  return containerLogFile(containerLogDir(rootDir, pod, container), restartCount);
}

/** `YYYYMMDD-HHMMSS` in UTC, the suffix of a rotated log file. */
export function rotationStamp(at: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${p(at.getUTCFullYear(), 4)}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}-` + `${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}`
  );
}

/** `<containerLogDir>/<restartCount>.log.<YYYYMMDD-HHMMSS>`. */
export function rotatedLogFile(logDir: string, restartCount: number, at: Date): string {
  return `${containerLogFile(logDir, restartCount)}.${rotationStamp(at)}`;
}

/** The rotated files of one container instance, oldest first (full paths). */
export async function listRotatedLogs(logDir: string, restartCount: number): Promise<string[]> {
  const base = logFileName(restartCount);
  let names: string[];
  try {
    names = await readdir(logDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names
    .filter((n) => n.startsWith(base) && ROTATED_SUFFIX.test(n.slice(base.length)))
    .sort()
    .map((n) => path.join(logDir, n));
}
