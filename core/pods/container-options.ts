/**
 * The container-options extension point, like upstream's container manager
 * `GetResources(pod, container)` → `RunContainerOptions`: the composition
 * root builds an ordered list of contributors (device plugins now, DRA claims
 * later) and pod set-up applies them to every container it starts.
 *
 *   env:    contributor env (in order, a later one wins) < the container's own env
 *   mounts: the volume mounts, then each contributor's mounts appended
 *           (each contributor sees the container paths already taken)
 *   warnings: each becomes a `Warning` event on the container
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Mount } from '@nodelet/plugin-api/v1';

/** Something a contributor could not apply; it becomes a `Warning` event with this reason. */
export interface ContainerWarning {
  readonly reason: string;
  readonly message: string;
}

/** What {@link ContainerOptionsContributor.mounts} sees. */
export interface ContributorMountContext {
  /** The pod's own directory (for staged files). */
  readonly podDir: string;
  /** Container paths already mounted (volumes and earlier contributors). */
  readonly taken: readonly string[];
}

/** Mounts a contributor adds to a container, and what it could not apply. */
export interface ContributedMounts {
  readonly mounts?: readonly Mount[];
  readonly warnings?: readonly ContainerWarning[];
}

/** Adds env and mounts to the containers pod set-up starts. */
export interface ContainerOptionsContributor {
  /** For logs: what this contributes (`devices`). */
  readonly name: string;
  /**
   * Env vars of the container at the lowest precedence. Called before the
   * container's own env is resolved; may do work first (allocate); a throw
   * fails the container start.
   */
  env?(pod: V1Pod, container: V1Container): Promise<Record<string, string>> | Record<string, string>;
  /** Mounts appended after the volume mounts, and warnings. Called after {@link env}. */
  mounts?(pod: V1Pod, container: V1Container, ctx: ContributorMountContext): Promise<ContributedMounts> | ContributedMounts;
}

/** The container's env: the contributors' (in order) under `own()`, which wins. */
export async function contributedEnv(
  contributors: readonly ContainerOptionsContributor[],
  pod: V1Pod,
  container: V1Container,
  own: () => Promise<Record<string, string>>,
): Promise<Record<string, string>> {
  const extra: Record<string, string> = {};
  for (const c of contributors) if (c.env) Object.assign(extra, await c.env(pod, container));
  const mine = await own();
  if (Object.keys(extra).length === 0) return mine;
  for (const k of Object.keys(mine)) delete extra[k];
  return Object.assign(extra, mine);
}

/** `own` mounts with every contributor's mounts appended; `warn` gets each warning. */
export async function contributedMounts(
  contributors: readonly ContainerOptionsContributor[],
  pod: V1Pod,
  container: V1Container,
  podDir: string,
  own: readonly Mount[],
  warn: (w: ContainerWarning) => void,
): Promise<Mount[]> {
  const out = [...own];
  for (const c of contributors) {
    if (!c.mounts) continue;
    const r = await c.mounts(pod, container, { podDir, taken: out.map((m) => m.containerPath) });
    for (const w of r.warnings ?? []) warn(w);
    out.push(...(r.mounts ?? []));
  }
  return out;
}
