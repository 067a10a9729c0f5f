/**
 * Writes the files of a data volume (configMap, secret, downwardAPI,
 * projected) — nodelet's take on upstream's AtomicWriter.
 *
 * Differences from upstream, on purpose: files are written directly (no
 * `..data` symlink swap — WASI modules see the volume through a preopen and
 * symlinks are refused there), each file atomically (temp file + rename), so
 * a reader sees old or new content of a file but a multi-file update is not
 * one atomic step.
 *
 * Re-sync: a manifest of what nodelet wrote is kept *outside* the volume
 * (the container cannot see or edit it). Files listed there but no longer in
 * the payload are removed — never following symlinks (CVE-2017-1002102) —
 * and files whose content, mode and inode are unchanged are not rewritten.
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { nodeletError } from '../errors/index.ts';
import { resolveInRoot, validateRelativePath, pruneEmptyParents, removeFileNoFollow } from '../paths/index.ts';

/** One file of a payload (upstream `FileProjection`). */
export interface FileProjection {
  readonly data: Buffer;
  /** Permission bits, e.g. 0o644. */
  readonly mode: number;
}

/** Relative path → file. */
export type Payload = Map<string, FileProjection>;

interface ManifestEntry {
  mode: number;
  sha256: string;
  size: number;
  ino: number;
  mtimeMs: number;
}
type Manifest = Record<string, ManifestEntry>;

/** What a write changed. */
export interface WriteResult {
  readonly written: readonly string[];
  readonly removed: readonly string[];
}

async function readManifest(file: string, owner: string): Promise<Manifest> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as { files?: Manifest };
    const out: Manifest = {};
    for (const [p, e] of Object.entries(parsed.files ?? {})) {
      try {
        out[validateRelativePath(owner, p)] = e;
      } catch {
        // an entry that is not a clean relative path is ignored, never acted on
      }
    }
    return out;
  } catch {
    return {};
  }
}

async function writeFileAtomic(file: string, data: Buffer, mode: number): Promise<{ ino: number; mtimeMs: number }> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file).slice(0, 200)}.nodelet-tmp-${randomBytes(6).toString('hex')}`);
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.chmod(mode); // the umask must not change the requested mode
    await fh.close();
    await rename(tmp, file);
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
  const st = await lstat(file);
  return { ino: st.ino, mtimeMs: st.mtimeMs };
}

function normalise(owner: string, payload: Payload): Map<string, FileProjection> {
  const out = new Map<string, FileProjection>();
  for (const [p, f] of payload) out.set(validateRelativePath(owner, p, { forbidDotDotPrefix: true }), f);
  return out;
}

/**
 * Makes `volumeDir` hold exactly `payload` (as far as nodelet's own files
 * go). `manifestFile` must live outside `volumeDir`. `owner` names the
 * volume in errors. Throws `NDL_PATH_ESCAPE` for a bad path before writing
 * anything.
 */
export async function writePayload(volumeDir: string, owner: string, payload: Payload, manifestFile: string, dirMode = 0o755): Promise<WriteResult> {
  const files = normalise(owner, payload);
  await mkdir(volumeDir, { recursive: true, mode: dirMode });
  const rootSt = await lstat(volumeDir);
  if (!rootSt.isDirectory()) throw nodeletError('NDL_PATH_ESCAPE', `${owner}: volume dir ${volumeDir} is not a directory`);
  const old = await readManifest(manifestFile, owner);
  const removed: string[] = [];
  for (const p of Object.keys(old)) {
    if (files.has(p)) continue;
    if (await removeFileNoFollow(volumeDir, owner, p)) removed.push(p);
    await pruneEmptyParents(volumeDir, p);
  }
  const next: Manifest = {};
  const written: string[] = [];
  try {
    await writeFiles(volumeDir, owner, files, old, next, written, dirMode);
  } catch (e) {
    // Remember what is on disk now (old files not yet replaced included) so a retry cleans up.
    const kept = Object.fromEntries(Object.entries(old).filter(([p]) => !removed.includes(p)));
    await saveManifest(manifestFile, { ...kept, ...next }).catch(() => {});
    throw e;
  }
  await saveManifest(manifestFile, next);
  return { written, removed };
}

async function saveManifest(file: string, files: Manifest): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, Buffer.from(JSON.stringify({ version: 1, files })), 0o600);
}

async function writeFiles(
  volumeDir: string,
  owner: string,
  files: Map<string, FileProjection>,
  old: Manifest,
  next: Manifest,
  written: string[],
  dirMode: number,
): Promise<void> {
  for (const [p, f] of files) {
    const sha256 = createHash('sha256').update(f.data).digest('hex');
    const prev = old[p];
    const target = path.join(volumeDir, p);
    const st = prev ? await lstat(target).catch(() => undefined) : undefined;
    if (
      prev &&
      st?.isFile() &&
      prev.sha256 === sha256 &&
      prev.mode === f.mode &&
      st.ino === prev.ino &&
      st.mtimeMs === prev.mtimeMs &&
      st.size === f.data.length
    ) {
      next[p] = prev;
      continue;
    }
    const dir = path.posix.dirname(p);
    const parent = dir === '.' ? volumeDir : await resolveInRoot(volumeDir, owner, dir, { createMode: dirMode, noSymlinks: true });
    const ids = await writeFileAtomic(path.join(parent, path.posix.basename(p)), f.data, f.mode);
    next[p] = { mode: f.mode, sha256, size: f.data.length, ...ids };
    written.push(p);
  }
}
