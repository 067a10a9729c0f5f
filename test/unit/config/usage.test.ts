import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAGS } from '../../../core/config/flag-table.ts';
import { REPO_ROOT } from '../../../core/config/repo-root.ts';
import { helpText, shownDefault, versionText } from '../../../core/config/usage.ts';

describe('nodelet --help', () => {
  const text = helpText();
  const lines = text.split('\n');
  const upstreamAt = lines.indexOf('Kubelet flags (upstream names and meaning):');
  const ownAt = lines.indexOf('nodelet flags:');

  it('has both groups, upstream first', () => {
    expect(upstreamAt).toBeGreaterThan(0);
    expect(ownAt).toBeGreaterThan(upstreamAt);
  });

  it.each(FLAGS.map((f) => [f.name, f] as const))('lists --%s in its group with its help and default', (name, f) => {
    const at = lines.findIndex((l) => new RegExp(`^ {2}(-v, | {4})--${name}( |$)`).test(l));
    expect(at).toBeGreaterThan(-1);
    expect(f.upstream ? at > upstreamAt && at < ownAt : at > ownAt).toBe(true);
    expect(lines[at]).toContain(f.help);
    if (f.default !== '') expect(lines[at]).toContain(`(default ${f.type === 'string' || f.type === 'ip' ? `"${shownDefault(f)}"` : shownDefault(f)})`);
  });

  it('shows upstream defaults for key flags', () => {
    expect(text).toMatch(/--max-pods int +.*\(default 110\)/);
    expect(text).toMatch(/--port int +.*\(default 10250\)/);
    expect(text).toMatch(/--root-dir string +.*\(default "\/var\/lib\/nodelet"\)/);
  });

  it('describes the subcommands', () => {
    expect(text).toContain('nodelet push <module.wasm> <ref>');
    expect(text).toContain('nodelet pull <ref>');
    expect(text).toContain('-h, --help');
    expect(text).toContain('--version');
  });
});

describe('nodelet --version', () => {
  it('prints the package version and the kubelet version it follows', () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(versionText()).toBe(`nodelet v${version} (kubelet-compatible v1.36)`);
  });
});
