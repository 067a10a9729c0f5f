/**
 * The `terminated.message` of a container, as upstream's kuberuntime builds it:
 *
 *   file = terminationMessagePath (default /dev/termination-log) inside the container's mounts
 *   fallback = policy FallbackToLogsOnError and exit code != 0
 *   file present and not empty ─▶ its last 4096 bytes
 *   file absent or empty       ─▶ fallback ? the last 80 log lines, at most 2048 bytes : nothing
 *   message = runtime message (a trap, an OOM) [+ ": " + that text]
 *
 * With WASI there is no bind-mounted file: the module can only write the path
 * when it lies inside one of its mounts (e.g. an emptyDir at /dev or /tmp). The
 * file is read without following symlinks out of the mount, at the time of the
 * read, so a module cannot make nodelet read host files into the pod status:
 *  - the mount's host path (a real path when the container started, see
 *    core/pods/mounts.ts) must still be one: a subPath directory the
 *    container renamed away and replaced by a symlink is refused;
 *  - the path below it is resolved with every symlink checked (resolveInRoot);
 *  - the file is opened with O_NOFOLLOW (and O_NONBLOCK: a FIFO never blocks)
 *    and must be a regular file whose real path, read back from the open
 *    descriptor, is the path checked (no parent was swapped in between).
 */
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { V1Container } from '@kubernetes/client-node';
import type { Mount } from '@nodelet/plugin-api/v1';
import { readContainerLog } from '../logs/index.ts';
import { isNodeletError, nodeletError } from '../errors/index.ts';
import { resolveInRoot } from '../paths/index.ts';

/** Upstream `kubecontainer.MaxContainerTerminationMessageLength`. */
const MAX_TERMINATION_MESSAGE_BYTES = 4096;
/** Upstream `MaxContainerTerminationMessageLogLines` / `MaxContainerTerminationMessageLogLength`. */
const FALLBACK_LOG_LINES = 80;
const FALLBACK_LOG_BYTES = 2048;
const DEFAULT_PATH = '/dev/termination-log';

/** The host file behind `containerPath`, if a mount covers it (longest mount path wins), checked now. */
async function hostFileOf(containerPath: string, mounts: readonly Mount[]): Promise<string | undefined> {
  const target = path.posix.normalize(containerPath);
  const covering = mounts
    .filter((m) => target === m.containerPath || target.startsWith(m.containerPath.endsWith('/') ? m.containerPath : `${m.containerPath}/`))
    .sort((a, b) => b.containerPath.length - a.containerPath.length)[0];
  if (!covering) return undefined;
  const root = path.resolve(covering.hostPath);
  if ((await realpath(root)) !== root) {
    throw nodeletError('NDL_PATH_ESCAPE', `${covering.name}: the volume's path was replaced by a symlink`);
  }
  if (target === covering.containerPath) return root;
  const rel = path.posix.relative(covering.containerPath, target);
  return resolveInRoot(root, covering.name, rel, { what: 'terminationMessagePath' });
}

/** The last `max` bytes of `file`: a regular file reached without any symlink. */
async function readTail(file: string, max: number): Promise<string> {
  const fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw nodeletError('NDL_TERMINATION_MESSAGE', 'not a regular file');
    if ((await realpath(`/proc/self/fd/${fh.fd}`).catch(() => file)) !== file) {
      throw nodeletError('NDL_PATH_ESCAPE', 'the file was moved while it was opened');
    }
    const length = Math.min(st.size, max);
    const buf = Buffer.alloc(length);
    await fh.read(buf, 0, length, st.size - length);
    return buf.toString('utf8');
  } finally {
    await fh.close();
  }
}

/** The last lines of the container's log as `kubectl logs` prints them. */
async function logTail(logPath: string): Promise<string> {
  const chunks: Buffer[] = [];
  const stream = await readContainerLog(logPath, { tailLines: FALLBACK_LOG_LINES, limitBytes: FALLBACK_LOG_BYTES });
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Returns [text, checkLogs] like upstream's getTerminationMessage. */
async function fromFile(spec: V1Container, mounts: readonly Mount[], fallback: boolean): Promise<[string, boolean]> {
  const p = spec.terminationMessagePath ?? DEFAULT_PATH;
  let file: string | undefined;
  try {
    file = await hostFileOf(p, mounts);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return ['', fallback];
    return [`Error on reading termination log ${p}: ${(e as Error).message}`, false];
  }
  if (!file) return ['', fallback];
  try {
    const text = await readTail(file, MAX_TERMINATION_MESSAGE_BYTES);
    return [text, fallback && text.length === 0];
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return ['', fallback];
    // Host paths stay out of the pod status.
    const why =
      code === 'ELOOP'
        ? 'the file is a symbolic link'
        : code?.startsWith('E')
          ? code
          : isNodeletError(e, 'NDL_TERMINATION_MESSAGE')
            ? e.detail
            : (e as Error).message;
    return [`Error on reading termination log ${p}: ${why}`, false];
  }
}

/**
 * The message for a finished container: the runtime's `message` joined with the
 * termination message file or, under FallbackToLogsOnError after a failure, the log tail.
 */
export async function terminationMessage(
  spec: V1Container,
  exit: { exitCode: number; message?: string },
  mounts: readonly Mount[],
  logPath: string,
): Promise<string | undefined> {
  const fallback = spec.terminationMessagePolicy === 'FallbackToLogsOnError' && exit.exitCode !== 0;
  let [text, checkLogs] = await fromFile(spec, mounts, fallback);
  if (checkLogs) text = await logTail(logPath).catch(() => '');
  if (!text) return exit.message;
  return exit.message ? `${exit.message}: ${text}` : text;
}
