import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { shellIpCommand } from '../../../core/network/ip-shell.ts';

/** A fake `ip` first on PATH: echoes its arguments one per line; `fail` exits 2 with a message on stderr. */
function fakeIpOnPath(): void {
  const dir = mkdtempSync(join(tmpdir(), 'ip-shell-'));
  const ip = join(dir, 'ip');
  writeFileSync(ip, '#!/bin/sh\nif [ "$1" = fail ]; then echo "RTNETLINK answers: File exists" >&2; exit 2; fi\nfor a in "$@"; do printf "%s\\n" "$a"; done\n');
  chmodSync(ip, 0o755);
  process.env.PATH = `${dir}:${process.env.PATH}`;
}

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((c) => c()));

describe('shellIpCommand', () => {
  it('runs ip through one helper shell: arguments passed verbatim (quotes, spaces, $), stdout returned', async () => {
    fakeIpOnPath();
    const ip = shellIpCommand({ perl: false });
    closers.push(ip.close);
    expect(await ip(['addr', 'replace', '10.0.0.5/32', 'dev', 'ndl0'])).toBe('addr\nreplace\n10.0.0.5/32\ndev\nndl0');
    expect(await ip(["it's", 'a b', '$HOME', '`x`'])).toBe("it's\na b\n$HOME\n`x`");
  });

  it('keeps calls in order when many are in flight, and reports a failure with its output as stderr', async () => {
    fakeIpOnPath();
    const ip = shellIpCommand({ perl: false });
    closers.push(ip.close);
    const outs = await Promise.all(Array.from({ length: 20 }, (_, i) => ip([`n${i}`])));
    expect(outs).toEqual(Array.from({ length: 20 }, (_, i) => `n${i}`));
    const err = await ip(['fail']).catch((e: unknown) => e);
    expect((err as { stderr?: string }).stderr).toBe('RTNETLINK answers: File exists');
    expect(await ip(['after'])).toBe('after');
  });

  // Needs /usr/bin/perl (Debian and Ubuntu always have it: perl-base); elsewhere every call goes to the shell.
  it.skipIf(!existsSync('/usr/bin/perl'))(
    "sends a pod IP's addr replace/del to the netlink helper where perl exists, every other call to the shell (skipped without /usr/bin/perl)",
    async () => {
      fakeIpOnPath();
      const ip = shellIpCommand();
      closers.push(ip.close);
      // The fake ip would echo these; the netlink helper looks the device up and finds none.
      const err = await ip(['addr', 'replace', '10.0.0.5/32', 'dev', 'ndl-none0']).catch((e: unknown) => e);
      expect((err as { stderr?: string }).stderr).toBe('Cannot find device "ndl-none0"');
      const del = await ip(['addr', 'del', 'fd00::5/128', 'dev', 'ndl-none0']).catch((e: unknown) => e);
      expect((del as { stderr?: string }).stderr).toBe('Cannot find device "ndl-none0"');
      expect(await ip(['addr', 'replace', '10.0.0.5/32', 'dev', 'ndl0', 'noprefixroute'])).toBe('addr\nreplace\n10.0.0.5/32\ndev\nndl0\nnoprefixroute');
      expect(await ip(['link', 'add', 'name', 'ndl0', 'type', 'bridge'])).toBe('link\nadd\nname\nndl0\ntype\nbridge');
    },
  );

  it('starts a new shell when the helper died', async () => {
    fakeIpOnPath();
    const ip = shellIpCommand({ perl: false });
    closers.push(ip.close);
    expect(await ip(['one'])).toBe('one');
    ip.close();
    expect(await ip(['two'])).toBe('two');
  });
});
