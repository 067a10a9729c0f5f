/**
 * Reading files named by operators or pods (static pod manifests, `file://`
 * modules) without ever blocking: only regular files are opened (a FIFO, socket
 * or device is refused after a `stat`), the open itself is non-blocking (so a
 * file swapped for a FIFO after the `stat` cannot hang a thread), the opened
 * descriptor is checked again, and reads are asynchronous and capped.
 */
import { constants } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { nodeletError, type ErrorCode } from '../errors/index.ts';

/** Opens `path` only if it is a regular file (following symlinks); the caller closes the handle. */
export async function openRegularFile(path: string, code: ErrorCode = 'NDL_POD_INVALID'): Promise<FileHandle> {
  const st = await stat(path);
  if (!st.isFile()) throw nodeletError(code, `${path}: not a regular file`);
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    if (!(await fh.stat()).isFile()) throw nodeletError(code, `${path}: not a regular file`);
    return fh;
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** Reads a regular file of at most `maxBytes`; a larger one is refused without reading past the cap. */
export async function readRegularFile(path: string, maxBytes: number, code: ErrorCode = 'NDL_POD_INVALID'): Promise<Buffer> {
  const fh = await openRegularFile(path, code);
  try {
    const size = (await fh.stat()).size;
    if (size > maxBytes) throw nodeletError(code, `${path}: ${size} bytes exceeds the ${maxBytes} byte limit`);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(64 * 1024);
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw nodeletError(code, `${path}: more than the ${maxBytes} byte limit`);
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks);
  } finally {
    await fh.close();
  }
}
