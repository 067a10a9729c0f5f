// `nodelet run`'s argument parsing: module, argv after the module or `--`,
// repeated --env / --dir, and usage errors naming the argument at fault.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../../core/cli/run-module.ts';
import { isNodeletError } from '../../../core/errors/index.ts';

describe('parseRunArgs', () => {
  it('takes the module, its arguments after "--", repeated --env and --dir', () => {
    const r = parseRunArgs(['-e', 'A=1', '--env', 'B=x=y', '--dir', '/srv/data:/data', '--dir', 'rel', 'm.wasm', '--', '--flag', 'two'], {});
    expect(r).toEqual({
      target: 'm.wasm',
      args: ['--flag', 'two'],
      env: { A: '1', B: 'x=y' },
      dirs: [
        { host: '/srv/data', guest: '/data' },
        { host: resolve('rel'), guest: resolve('rel') },
      ],
      rootDir: expect.any(String),
      insecure: false,
    });
  });

  it('plain words after the module are its arguments too; --root-dir and --insecure apply', () => {
    const r = parseRunArgs(['--root-dir', '/tmp/store', '--insecure', 'registry.local/app:1', 'a', 'b'], {});
    expect(r).toMatchObject({ target: 'registry.local/app:1', args: ['a', 'b'], rootDir: '/tmp/store', insecure: true });
  });

  it('--env NAME without a value takes it from the host environment (absent: not set)', () => {
    expect(parseRunArgs(['--env', 'HOME', '--env', 'MISSING', 'm.wasm'], { HOME: '/home/me' })?.env).toEqual({ HOME: '/home/me' });
  });

  it('--help gives undefined', () => {
    expect(parseRunArgs(['--help'])).toBeUndefined();
    expect(parseRunArgs(['-h', 'm.wasm'])).toBeUndefined();
  });

  it.each([
    [[], /missing the module/],
    [['--env', '=v', 'm.wasm'], /--env =v: the name is empty/],
    [['--dir', '/a:rel', 'm.wasm'], /guest path rel must be absolute/],
    [['--dir', ':/g', 'm.wasm'], /host directory is empty/],
    [['--bogus', 'm.wasm'], /--bogus/],
  ])('%j is a usage error', (args, message) => {
    let err: unknown;
    try {
      parseRunArgs(args as string[], {});
    } catch (e) {
      err = e;
    }
    expect(isNodeletError(err, 'NDL_CONFIG_UNEXPECTED_ARG')).toBe(true);
    expect((err as Error).message).toMatch(message);
  });
});
