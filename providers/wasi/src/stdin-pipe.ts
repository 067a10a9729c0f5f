/**
 * The stdin of a preview1 container whose spec has `stdin: true`: a named
 * pipe (FIFO) in a private directory. nodelet holds it open read-write and
 * non-blocking (a `net.Socket` over the fd, so a module that does not read
 * only fills the pipe, never blocks the event loop); the worker opens it
 * read-only as the module's fd 0, whose reads then block that worker thread
 * until `kubectl attach` sends a line. Closing nodelet's end (at stop or exit)
 * leaves the pipe without writers: a module blocked in `read` sees end of
 * input and the thread can unwind.
 *
 *   create ──► open (attach writes go in) ──close()──► closed (module reads EOF; FIFO unlinked)
 *
 * Node has no mkfifo(3) binding, so the FIFO is made with coreutils' `mkfifo`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { constants, openSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A container's stdin FIFO (see the module comment). */
export class StdinPipe {
  private closed = false;

  private constructor(
    /** The FIFO's path, for the worker to open. */
    readonly path: string,
    private readonly dir: string,
    private readonly sock: net.Socket,
  ) {}

  /** Makes the FIFO and opens nodelet's end. */
  static async create(): Promise<StdinPipe> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'nodelet-stdin-'));
    const fifo = path.join(dir, 'stdin');
    try {
      await run('mkfifo', ['-m', '600', fifo]);
      const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
      const sock = new net.Socket({ fd, readable: false, writable: true });
      sock.on('error', () => sock.destroy());
      return new StdinPipe(fifo, dir, sock);
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Writes `chunk` for the module; resolves once the pipe took it (or the pipe is closed). */
  write(chunk: Uint8Array): Promise<void> {
    if (this.closed || this.sock.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.sock.write(chunk)) return resolve();
      const done = () => {
        this.sock.off('drain', done);
        this.sock.off('close', done);
        resolve();
      };
      this.sock.once('drain', done);
      this.sock.once('close', done);
    });
  }

  /** Closes nodelet's end (the module reads end of input) and removes the FIFO. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sock.destroy();
    void rm(this.dir, { recursive: true, force: true });
  }
}
