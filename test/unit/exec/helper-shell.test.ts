import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { helperShell, type HelperProgram } from '../../../core/exec/helper-shell.ts';
import { isNodeletError } from '../../../core/errors/catalogue.ts';

// The real spawn, counted: which shells a helper started, and when.
vi.mock('node:child_process', async (importOriginal) => {
  const m = await importOriginal<typeof import('node:child_process')>();
  return { ...m, spawn: vi.fn(m.spawn) };
});
const spawned = () => vi.mocked(spawn).mock.results.map((r) => r.value as ChildProcess);

/** Answers each line with its pid; at EOF it lingers 0.5 s before it exits (a shell still ending). */
const pidProgram: HelperProgram = {
  argv: ['/usr/bin/perl', '-e', '$| = 1; while (<STDIN>) { print "0 " . length("$$") . "\n$$\n"; } select(undef, undef, undef, 0.5);'],
  line: () => 'pid\n',
};

const closers: (() => void)[] = [];
afterEach(() => {
  closers.splice(0).forEach((c) => c());
  vi.mocked(spawn).mockClear();
});

describe('helperShell', () => {
  it('runs any command through its shells: the output back (bytes, not characters, framed), the same shells for every call', async () => {
    const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', size: 1 });
    closers.push(sh.close);
    expect(await sh('printf', ['%s|', 'a b', "it's", '$HOME', 'é€'])).toBe("a b|it's|$HOME|é€|");
    expect(await sh('printf', ['two\\nlines\\n\\n'])).toBe('two\nlines'); // trailing newlines dropped, as $(...) does
    const pids = await Promise.all([sh('sh', ['-c', 'echo $PPID']), sh('sh', ['-c', 'echo $PPID'])]);
    expect(pids[0]).toMatch(/^\d+$/);
    expect(pids[1]).toBe(pids[0]);
    expect(Number(pids[0])).not.toBe(process.pid);
  });

  it('spreads calls in flight over its shells (default 2)', async () => {
    const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS' });
    closers.push(sh.close);
    const pids = await Promise.all(Array.from({ length: 6 }, () => sh('sh', ['-c', 'sleep 0.05; echo $PPID'])));
    expect(new Set(pids).size).toBe(2);
  });

  it("rejects a failed command with the caller's error code and its output as stderr", async () => {
    const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS' });
    closers.push(sh.close);
    const err = await sh('sh', ['-c', 'echo "mount: permission denied" >&2; exit 32']).catch((e: unknown) => e);
    expect(isNodeletError(err, 'NDL_VOLUME_TMPFS')).toBe(true);
    expect((err as { stderr?: string }).stderr).toBe('mount: permission denied');
    expect((err as Error).message).toContain('exited 32');
    expect(await sh('echo', ['after'])).toBe('after');
  });

  it('writes calls at once (pipelined); when its shell dies, every call written to it fails and the next call gets a new shell', async () => {
    const sh = helperShell({ errorCode: 'NDL_NETWORK_INTERFACE', size: 1 });
    closers.push(sh.close);
    const first = await sh('sh', ['-c', 'echo $PPID']);
    const dying = sh('sh', ['-c', 'kill -9 $PPID; sleep 1']).catch((e: unknown) => e);
    const behind = sh('echo', ['one']).catch((e: unknown) => e); // written to the dying shell: may or may not have run, never run twice
    const err = await dying;
    expect(isNodeletError(err, 'NDL_NETWORK_INTERFACE')).toBe(true);
    expect((err as Error).message).toContain('the helper shell exited');
    expect(isNodeletError(await behind, 'NDL_NETWORK_INTERFACE')).toBe(true);
    const pid = await sh('sh', ['-c', 'echo $PPID']);
    expect(pid).toMatch(/^\d+$/);
    expect(pid).not.toBe(first);
  });

  it('writes the calls of one tick in one write, so its program reads them together; each is answered in its turn', async () => {
    // Answers each line with how many lines came in the same read, then the line.
    const perl = [
      'while (sysread(STDIN, my $b, 65536)) {',
      '  my @l = split(/\\n/, $b);',
      '  for my $x (@l) { my $o = scalar(@l) . " $x"; syswrite(STDOUT, sprintf("0 %d\\n%s\\n", length($o), $o)); }',
      '}',
    ].join('\n');
    const sh = helperShell({
      errorCode: 'NDL_POD_DIRS',
      size: 1,
      program: { argv: ['/usr/bin/perl', '-e', perl], line: (c, a) => `${[c, ...a].join(' ')}\n` },
    });
    closers.push(sh.close);
    expect(await Promise.all(['a', 'b', 'c', 'd', 'e'].map((x) => sh(x, [])))).toEqual(['5 a', '5 b', '5 c', '5 d', '5 e']);
    expect(await sh('f', ['g'])).toBe('1 f g');
    expect(await Promise.all([sh('h', []), sh('i', [])])).toEqual(['2 h', '2 i']);
  });

  it('spawns no shell until a call needs one; an idle shell ends itself after idleMs and the next call spawns a new one', async () => {
    const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', idleMs: 50 });
    closers.push(sh.close);
    expect(spawned()).toHaveLength(0);
    const first = await sh('sh', ['-c', 'echo $PPID']);
    expect(spawned()).toHaveLength(1); // two shells at most, one taken
    const [old] = spawned();
    const [code, signal] = (await once(old!, 'exit')) as [number | null, string | null];
    expect({ code, signal }).toEqual({ code: 0, signal: null }); // ended at EOF, not killed
    const next = await sh('sh', ['-c', 'echo $PPID']);
    expect(next).toMatch(/^\d+$/);
    expect(next).not.toBe(first);
    expect(spawned()).toHaveLength(2);
  });

  it('never ends a shell while an answer is awaited: idleMs counts from its last answer', async () => {
    const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', size: 1, idleMs: 20 });
    closers.push(sh.close);
    const pids = await Promise.all([sh('sh', ['-c', 'sleep 0.3; echo $PPID']), sh('sh', ['-c', 'sleep 0.3; echo $PPID'])]);
    expect(pids[1]).toBe(pids[0]);
    expect(await sh('sh', ['-c', 'echo $PPID'])).toBe(pids[0]); // made as the last answer came: the same shell
    expect(spawned()).toHaveLength(1);
  });

  it('sends a call made while an idle shell is ending to a new shell, and answers it', async () => {
    const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', program: pidProgram, size: 1, idleMs: 20 });
    closers.push(sh.close);
    const first = await sh('pid', []);
    const [old] = spawned();
    await vi.waitFor(() => expect(old!.stdin!.writableEnded).toBe(true)); // told to end…
    expect({ code: old!.exitCode, signal: old!.signalCode }).toEqual({ code: null, signal: null }); // …and not gone yet
    const exited = once(old!, 'exit');
    const next = await sh('pid', []);
    expect(next).toMatch(/^\d+$/);
    expect(next).not.toBe(first);
    expect(spawned()).toHaveLength(2);
    expect(await exited).toEqual([0, null]); // the old one ended at EOF, with no call lost
  });
});
