/** Scratch dirs and the Perl syscall helper for the core/exec tests; each is undone after the test that made it. */
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect } from 'vitest';
import { helperShell, type HelperShell } from '../../../core/exec/helper-shell.ts';
import { mountSyscalls } from '../../../core/exec/mount-syscalls.ts';

/** Registers the clean-up hook of the calling test file and returns its makers. */
export function execFixtures(prefix: string): {
  scratch(): Promise<string>;
  perlHelper(): HelperShell;
  /** Runs `undo` after the test, before what was made earlier is undone. */
  defer(undo: () => Promise<unknown> | void): void;
} {
  const cleanups: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    defer: (undo) => void cleanups.push(undo),
    async scratch() {
      const root = path.join(tmpdir(), `nodelet-${prefix}-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2)}`);
      await mkdir(root, { recursive: true });
      cleanups.push(() => rm(root, { recursive: true, force: true }));
      return root;
    },
    perlHelper() {
      const program = mountSyscalls();
      expect(program, 'this machine has /usr/bin/perl on x64 or arm64').toBeDefined();
      const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', program, size: 1 });
      cleanups.push(sh.close);
      return sh;
    },
  };
}
