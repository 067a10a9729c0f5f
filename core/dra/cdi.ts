/**
 * Container Device Interface (CDI) spec files, as far as nodelet applies
 * them: the DRA driver's NodePrepareResources returns fully-qualified CDI
 * device ids (`vendor.com/class=name`), and the specs under the CDI dirs
 * (`/etc/cdi`, `/var/run/cdi` by default; `--cdi-spec-dirs`) say what each
 * device adds to a container (spec-level `containerEdits` plus the device's
 * own). nodelet reads the env and mounts; device nodes, hooks and other
 * edits need a container runtime and come back as warnings.
 *
 * Hand-written: the CDI reference library is Go only (tags.cncf.io/container-device-interface);
 * no npm package parses CDI specs. Specs are JSON or YAML (the `yaml` package parses both).
 * Later dirs win for a device defined twice, as in the CDI registry.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** A CDI mount (`containerEdits.mounts[]`). */
export interface CdiMount {
  readonly hostPath: string;
  readonly containerPath: string;
  readonly options?: readonly string[];
}

/** The part of CDI `containerEdits` nodelet looks at. */
export interface CdiContainerEdits {
  readonly env?: readonly string[];
  readonly mounts?: readonly CdiMount[];
  readonly deviceNodes?: readonly { path: string }[];
  readonly hooks?: readonly { hookName: string; path: string }[];
  readonly additionalGIDs?: readonly number[];
  readonly intelRdt?: unknown;
}

/** The edits of the requested devices, merged, and what is unknown. */
export interface ResolvedCdiEdits {
  /** `KEY=VALUE` strings in spec order (later wins when applied). */
  readonly env: string[];
  readonly mounts: CdiMount[];
  readonly deviceNodes: string[];
  readonly hooks: string[];
  /** Device ids no spec defines. */
  readonly unresolved: string[];
}

interface CdiSpecFile {
  kind?: string;
  devices?: { name?: string; containerEdits?: CdiContainerEdits }[];
  containerEdits?: CdiContainerEdits;
}

/** Every device id the specs in `dirs` define, with its spec-level and own edits. */
function loadDevices(dirs: readonly string[]): Map<string, CdiContainerEdits[]> {
  const out = new Map<string, CdiContainerEdits[]>();
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      continue;
    }
    for (const n of names) {
      if (!/\.(json|ya?ml)$/.test(n)) continue;
      let spec: CdiSpecFile;
      try {
        const text = readFileSync(join(dir, n), 'utf8');
        spec = (n.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as CdiSpecFile;
      } catch {
        continue; // a spec being written, or not a spec: skipped, as the CDI registry reports and skips it
      }
      if (!spec || typeof spec.kind !== 'string' || !Array.isArray(spec.devices)) continue;
      for (const d of spec.devices) {
        if (typeof d?.name !== 'string') continue;
        out.set(`${spec.kind}=${d.name}`, [spec.containerEdits ?? {}, d.containerEdits ?? {}]);
      }
    }
  }
  return out;
}

/** The merged edits of `ids` from the specs in `dirs` (read now: drivers write specs at prepare). */
export function resolveCdiDevices(dirs: readonly string[], ids: readonly string[]): ResolvedCdiEdits {
  const r: ResolvedCdiEdits = { env: [], mounts: [], deviceNodes: [], hooks: [], unresolved: [] };
  if (ids.length === 0) return r;
  const devices = loadDevices(dirs);
  for (const id of ids) {
    const edits = devices.get(id);
    if (!edits) {
      r.unresolved.push(id);
      continue;
    }
    for (const e of edits) {
      r.env.push(...(e.env ?? []).filter((s) => typeof s === 'string'));
      r.mounts.push(...(e.mounts ?? []).filter((m) => typeof m?.hostPath === 'string' && typeof m?.containerPath === 'string'));
      r.deviceNodes.push(...(e.deviceNodes ?? []).map((d) => String(d?.path)));
      r.hooks.push(...(e.hooks ?? []).map((h) => `${h?.hookName} ${h?.path}`));
    }
  }
  return r;
}

/** `KEY=VALUE` strings as a record (a later key wins; an entry without `=` is an empty value, as runc). */
export function envRecord(env: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of env) {
    const i = kv.indexOf('=');
    if (i === 0) continue;
    if (i < 0) out[kv] = '';
    else out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}
