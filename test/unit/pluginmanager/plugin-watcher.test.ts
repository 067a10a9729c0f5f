// The watcher only edits the desired state: sockets in, everything else out.
import { lstat, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DesiredStateOfWorld } from '../../../core/pluginmanager/desired-state.ts';
import { PluginWatcher } from '../../../core/pluginmanager/plugin-watcher.ts';

const log = pino({ level: 'silent' });
const WAIT = { timeout: 10_000, interval: 20 };

let dir: string;
let servers: Server[];
let watcher: PluginWatcher | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ndl-pw-'));
  servers = [];
});

afterEach(async () => {
  await watcher?.stop();
  watcher = undefined;
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await rm(dir, { recursive: true, force: true });
});

/** A plain unix socket (the watcher does not talk to it). */
async function socket(name: string): Promise<string> {
  const path = join(dir, name);
  const server = createServer();
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return path;
}

async function startWatcher(): Promise<DesiredStateOfWorld> {
  const desired = new DesiredStateOfWorld();
  watcher = new PluginWatcher(dir, desired, log);
  await watcher.start();
  return desired;
}

const paths = (d: DesiredStateOfWorld): string[] =>
  d
    .plugins()
    .map((p) => p.socketPath)
    .sort();

describe('PluginWatcher', () => {
  it('walks existing entries at start: sockets only, no dotfiles, mtime as timestamp', async () => {
    const a = await socket('a.sock');
    await socket('.hidden.sock');
    await writeFile(join(dir, 'regular'), 'x');
    const desired = await startWatcher();
    expect(paths(desired)).toEqual([a]);
    expect(desired.timestampOf(a)).toBe((await lstat(a)).mtimeMs);
  });

  it('follows creations and removals after start, ignoring dotfiles and regular files', async () => {
    const desired = await startWatcher();
    await socket('.late-hidden.sock');
    await writeFile(join(dir, 'late-regular'), 'x');
    const b = await socket('b.sock');
    await vi.waitFor(() => expect(desired.has(b)).toBe(true), WAIT);
    expect(paths(desired)).toEqual([b]);
    await rm(b);
    await vi.waitFor(() => expect(desired.has(b)).toBe(false), WAIT);
  });

  it('gives a re-created socket a new timestamp', async () => {
    const desired = await startWatcher();
    const c = await socket('c.sock');
    await vi.waitFor(() => expect(desired.has(c)).toBe(true), WAIT);
    const before = desired.timestampOf(c)!;
    await new Promise((r) => servers.pop()!.close(r)); // unlinks c.sock
    await socket('c.sock');
    const after = (await lstat(c)).mtimeMs;
    expect(after).not.toBe(before);
    await vi.waitFor(() => expect(desired.timestampOf(c)).toBe(after), WAIT);
  });
});
