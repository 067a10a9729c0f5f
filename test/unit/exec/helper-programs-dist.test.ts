/** The built nodelet (dist/, what `bin/nodelet.mjs` and the Docker image run) carries the Perl helper programs next to the modules that run them. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../core/config/repo-root.ts';

/** Every `.pl` under `dir`, relative to REPO_ROOT. */
function perlFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? perlFiles(path.join(dir, e.name)) : e.name.endsWith('.pl') ? [path.join(dir, e.name)] : [],
  );
}

describe('helper programs in dist/', () => {
  it('every .pl under core/ is in dist/core/, byte for byte', () => {
    const sources = perlFiles('core');
    expect(sources).toEqual(expect.arrayContaining([path.join('core', 'exec', 'mount-syscalls.pl'), path.join('core', 'network', 'addr-netlink.pl')]));
    for (const f of sources) expect(readFileSync(path.join(REPO_ROOT, 'dist', f), 'utf8'), f).toBe(readFileSync(path.join(REPO_ROOT, f), 'utf8'));
  });

  it('the built modules run their copies: one call each through plain node', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodelet-dist-helpers-'));
    try {
      const script = `
        const dist = ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'core'))};
        const { mountSyscalls } = await import(dist + '/exec/mount-syscalls.js');
        const { addrNetlink } = await import(dist + '/network/addr-netlink.js');
        const { helperShell } = await import(dist + '/exec/helper-shell.js');
        const m = mountSyscalls(), n = addrNetlink();
        const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', program: m, size: 1 });
        const ip = helperShell({ errorCode: 'NDL_NETWORK_INTERFACE', program: n, size: 1 });
        const made = await sh('mkdirs', ['755', ${JSON.stringify(path.join(dir, 'a'))}]);
        const refused = await ip('ip', ['link', 'show']).catch((e) => e.stderr);
        sh.close();
        ip.close();
        console.log(JSON.stringify({ mount: m.argv[1], netlink: n.argv[1], made, refused }));
      `;
      const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<string, string>;
      expect(out).toEqual({
        mount: path.join(REPO_ROOT, 'dist', 'core', 'exec', 'mount-syscalls.pl'),
        netlink: path.join(REPO_ROOT, 'dist', 'core', 'network', 'addr-netlink.pl'),
        made: Buffer.from(path.join(dir, 'a')).toString('hex'),
        refused: 'unsupported: ip link show',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
