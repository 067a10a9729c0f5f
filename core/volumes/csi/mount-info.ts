/**
 * Reading the mount table (`/proc/self/mountinfo`) to tell whether a
 * directory is a mount point — the check that keeps nodelet from removing a
 * volume dir while a driver's mount is still on it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Decodes the octal escapes of mountinfo fields (`\040` = space). */
function unescapeField(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Every mount point of this process's mount namespace. */
export async function mountPoints(mountinfo = '/proc/self/mountinfo'): Promise<string[]> {
  const text = await readFile(mountinfo, 'utf8');
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    if (fields.length > 4) out.push(unescapeField(fields[4]!));
  }
  return out;
}

/** True when `dir` is a mount point. */
export async function isMountPoint(dir: string, mountinfo?: string): Promise<boolean> {
  const p = path.resolve(dir);
  return (await mountPoints(mountinfo)).includes(p);
}

/** Mount points at or below `root`. */
export async function mountsUnder(root: string, mountinfo?: string): Promise<string[]> {
  const r = path.resolve(root);
  return (await mountPoints(mountinfo)).filter((m) => m === r || m.startsWith(r + path.sep));
}
