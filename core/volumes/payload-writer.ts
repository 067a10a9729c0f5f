/**
 * Writes the files of a data volume (configMap, secret, downwardAPI,
 * projected) — nodelet's take on upstream's AtomicWriter.
 *
 * A volume on tmpfs (`inMemory`) is written with direct calls, its manifest too (a few
 * hundred bytes beside the volume, never synced to disk): see {@link FileIo}.
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
import { closeSync, fchmodSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync, type Stats } from 'node:fs';
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

async function readManifest(file: string, owner: string, io: FileIo): Promise<Manifest> {
  try {
    const parsed = JSON.parse(await io.readFile(file)) as { files?: Manifest };
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

/**
 * How a payload is written: {@link diskIo} off the main thread (libuv's pool), or
 * {@link memoryIo} with direct calls, for a volume on tmpfs. There a call is a memory copy
 * of a few KB (~10 µs; the manifest beside it is as small and never synced), while each
 * pooled call waits for the pool and a turn of the event loop: under a 100-pod burst a
 * projected volume's ~20 such waits were ~500 ms per pod (bench/results/,
 * "Volume files on tmpfs").
 */
interface FileIo {
  mkdir(dir: string, mode?: number): Promise<unknown>;
  readFile(file: string): Promise<string>;
  /** Creates `file` (it must not exist) with `data` and exactly `mode` (the umask must not change it). */
  createFile(file: string, data: Buffer, mode: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  lstat(file: string): Promise<Stats>;
  unlink(file: string): Promise<void>;
}

const diskIo: FileIo = {
  mkdir: (dir, mode) => mkdir(dir, { recursive: true, mode }),
  readFile: (file) => readFile(file, 'utf8'),
  async createFile(file, data, mode) {
    const fh = await open(file, 'wx', mode);
    try {
      await fh.writeFile(data);
      await fh.chmod(mode);
    } finally {
      await fh.close();
    }
  },
  rename,
  lstat,
  unlink,
};

const memoryIo: FileIo = {
  mkdir: async (dir, mode) => mkdirSync(dir, { recursive: true, mode }),
  readFile: async (file) => readFileSync(file, 'utf8'),
  async createFile(file, data, mode) {
    const fd = openSync(file, 'wx', mode);
    try {
      writeSync(fd, data);
      fchmodSync(fd, mode);
    } finally {
      closeSync(fd);
    }
  },
  rename: async (from, to) => renameSync(from, to),
  lstat: async (file) => lstatSync(file),
  unlink: async (file) => unlinkSync(file),
};

/**
 * A temporary file's name is unique per nodelet process (a tag drawn once) and per write (a
 * counter): a random draw per file was a `getrandom` call on the main thread for each file
 * of each volume (~1.5 % of its time in a 100-pod burst, bench/results/, "Where a burst's tail goes").
 */
const TMP_TAG = `${process.pid.toString(36)}-${randomBytes(4).toString('hex')}`;
let tmpSeq = 0;

async function writeFileAtomic(file: string, data: Buffer, mode: number, io: FileIo = diskIo): Promise<{ ino: number; mtimeMs: number }> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file).slice(0, 200)}.nodelet-tmp-${TMP_TAG}-${(tmpSeq++).toString(36)}`);
  try {
    await io.createFile(tmp, data, mode);
    await io.rename(tmp, file);
  } catch (e) {
    await io.unlink(tmp).catch(() => {});
    throw e;
  }
  const st = await io.lstat(file);
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
export async function writePayload(
  volumeDir: string,
  owner: string,
  payload: Payload,
  manifestFile: string,
  dirMode = 0o755,
  o: { inMemory?: boolean } = {},
): Promise<WriteResult> {
  const files = normalise(owner, payload);
  const io = o.inMemory ? memoryIo : diskIo;
  await io.mkdir(volumeDir, dirMode);
  const rootSt = await io.lstat(volumeDir);
  if (!rootSt.isDirectory()) throw nodeletError('NDL_PATH_ESCAPE', `${owner}: volume dir ${volumeDir} is not a directory`);
  const old = await readManifest(manifestFile, owner, io);
  const removed: string[] = [];
  for (const p of Object.keys(old)) {
    if (files.has(p)) continue;
    if (await removeFileNoFollow(volumeDir, owner, p)) removed.push(p);
    await pruneEmptyParents(volumeDir, p);
  }
  const next: Manifest = {};
  const written: string[] = [];
  try {
    await writeFiles(volumeDir, owner, files, old, next, written, dirMode, io);
  } catch (e) {
    // Remember what is on disk now (old files not yet replaced included) so a retry cleans up.
    const kept = Object.fromEntries(Object.entries(old).filter(([p]) => !removed.includes(p)));
    await saveManifest(manifestFile, { ...kept, ...next }, io).catch(() => {});
    throw e;
  }
  await saveManifest(manifestFile, next, io);
  return { written, removed };
}

async function saveManifest(file: string, files: Manifest, io: FileIo): Promise<void> {
  await io.mkdir(path.dirname(file));
  await writeFileAtomic(file, Buffer.from(JSON.stringify({ version: 1, files })), 0o600, io);
}

async function writeFiles(
  volumeDir: string,
  owner: string,
  files: Map<string, FileProjection>,
  old: Manifest,
  next: Manifest,
  written: string[],
  dirMode: number,
  io: FileIo,
): Promise<void> {
  const writeOne = async (p: string, f: FileProjection): Promise<boolean> => {
    const sha256 = createHash('sha256').update(f.data).digest('hex');
    const prev = old[p];
    const target = path.join(volumeDir, p);
    const st = prev ? await io.lstat(target).catch(() => undefined) : undefined;
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
      return false;
    }
    const dir = path.posix.dirname(p);
    const parent = dir === '.' ? volumeDir : await resolveInRoot(volumeDir, owner, dir, { createMode: dirMode, noSymlinks: true });
    const ids = await writeFileAtomic(path.join(parent, path.posix.basename(p)), f.data, f.mode, io);
    next[p] = { mode: f.mode, sha256, size: f.data.length, ...ids };
    return true;
  };
  // Files at the top of the volume are written at once; nested ones after, one by one (they may make the same dirs).
  const entries = [...files];
  const top = entries.filter(([p]) => !p.includes('/'));
  const done = await Promise.allSettled(top.map(([p, f]) => writeOne(p, f)));
  for (const [i, r] of done.entries()) if (r.status === 'fulfilled' && r.value) written.push(top[i]![0]);
  const failed = done.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  for (const [p, f] of entries) if (p.includes('/') && (await writeOne(p, f))) written.push(p);
}
