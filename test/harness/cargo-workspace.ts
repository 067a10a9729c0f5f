/**
 * A Cargo workspace of test components built for `wasm32-wasip2` and cached by the hash of its
 * sources (and Cargo.lock): `build(crate)` returns `<cacheDir>/<crate>-<hash>.wasm`, running one
 * `cargo build --release --locked` for the whole workspace when it is missing (concurrent callers
 * share that build). Used by the component fixtures (wasm-components.ts) and the Spin app (spin-app.ts).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where a workspace is and where its builds go. */
export interface CargoWorkspace<C extends string> {
  /** The workspace's directory (its `target/` is not hashed). */
  readonly dir: string;
  /** cargo's target dir. */
  readonly targetDir: string;
  /** Where the built components are cached. */
  readonly cacheDir: string;
  /** Crate → the artifact cargo writes. */
  readonly artifacts: Readonly<Record<C, string>>;
  /** What is built, for the error message ("the test components"). */
  readonly what: string;
}

/** The hash of the workspace's sources (16 hex digits). */
function sourceHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (name === 'target') continue;
      if (statSync(p).isDirectory()) walk(p);
      else h.update(relative(dir, p)).update('\0').update(readFileSync(p)).update('\0');
    }
  };
  walk(dir);
  return h.digest('hex').slice(0, 16);
}

/** The builder of a workspace's components. */
export function cargoWorkspace<C extends string>(w: CargoWorkspace<C>): (crate: C) => Promise<string> {
  let building: Promise<void> | undefined;
  const cargoBuild = async (hash: string): Promise<void> => {
    try {
      await run('cargo', ['build', '--release', '--locked', '--target', 'wasm32-wasip2', '-j', '1'], {
        cwd: w.dir,
        env: { ...process.env, CARGO_TARGET_DIR: w.targetDir },
        timeout: 600_000,
      });
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { stderr?: string };
      if (err.code === 'ENOENT') throw new Error('cargo not found: install Rust (rustup) and `rustup target add wasm32-wasip2`');
      throw new Error(`building ${w.what} failed: ${err.stderr ?? err.message}`);
    }
    mkdirSync(w.cacheDir, { recursive: true });
    for (const [crate, artifact] of Object.entries<string>(w.artifacts)) {
      const out = join(w.cacheDir, `${crate}-${hash}.wasm`);
      const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
      copyFileSync(join(w.targetDir, 'wasm32-wasip2', 'release', artifact), tmp);
      renameSync(tmp, out);
    }
  };
  return async (crate) => {
    const hash = sourceHash(w.dir);
    const out = join(w.cacheDir, `${crate}-${hash}.wasm`);
    if (existsSync(out)) return out;
    building ??= cargoBuild(hash).finally(() => (building = undefined));
    await building;
    return out;
  };
}
