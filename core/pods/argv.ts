/**
 * A container's argv: `command` + `args` with `$(VAR)` expanded against its
 * resolved environment (upstream `ExpandContainerCommandAndArgs`).
 *
 * Without `command`, argv[0] is the container's name: Wasm modules carry no
 * entrypoint metadata in the artifact formats nodelet supports (so there is
 * no image `Entrypoint`/`Cmd` to fall back to), and a program name is all
 * argv[0] means to a WASI module. `args` follow as given.
 */
import type { V1Container } from '@kubernetes/client-node';
import { expand, mappingFuncFor } from './env.ts';

/** Resolves argv for `container` given its environment (from `resolveEnv`). */
export function resolveArgv(container: V1Container, env: Readonly<Record<string, string>>): string[] {
  const mapping = mappingFuncFor(env);
  const command = (container.command ?? []).map((c) => expand(c, mapping));
  const args = (container.args ?? []).map((a) => expand(a, mapping));
  return command.length > 0 ? [...command, ...args] : [container.name, ...args];
}
