/**
 * A container's environment, following upstream `makeEnvironmentVariables`:
 *
 *  1. `envFrom` in order (configMapRef / secretRef, with `prefix`; keys that
 *     are not valid env var names are skipped and reported as an
 *     `InvalidEnvironmentVariableNames` warning);
 *  2. `env` in order: `value` with `$(VAR)` expanded against what is defined
 *     so far (then the service env), else `valueFrom` (fieldRef,
 *     resourceFieldRef, configMapKeyRef, secretKeyRef).
 *
 * Service env vars (`FOO_SERVICE_HOST`, and `KUBERNETES_SERVICE_*` that
 * upstream adds even with `enableServiceLinks: false`) are not computed here:
 * this node type has no Service networking yet. A caller that has them passes
 * `serviceEnv` (already filtered by `enableServiceLinks`); they are visible to
 * `$(VAR)` expansion and never override container-defined vars, as upstream.
 *
 * Errors are `NDL_CONTAINER_CONFIG` whose `detail` is upstream's message
 * (`configmap "x" not found`, `couldn't find key K in ConfigMap ns/name`) —
 * the lead reports it as `CreateContainerConfigError`.
 */
import type { V1ConfigMap, V1Container, V1Pod, V1Secret } from '@kubernetes/client-node';
import { errorDetail, isNodeletError, nodeletError } from '../errors/index.ts';
import { podFieldValue, resourceFieldValue, type ObjectSource } from '../volumes/index.ts';

/** Upstream `expansion.MappingFuncFor`: the first context holding `name` wins; unknown stays `$(name)`. */
export function mappingFuncFor(...contexts: ReadonlyArray<Readonly<Record<string, string>>>): (name: string) => string {
  return (name) => {
    for (const c of contexts) if (Object.hasOwn(c, name)) return c[name]!;
    return `$(${name})`;
  };
}

/**
 * Upstream `expansion.Expand`: `$(VAR)` → mapping(VAR); `$$` → `$`; a `$`
 * not followed by `(` or `$`, or an unclosed `$(`, is kept as written.
 */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    if (next === '$') {
      out += '$';
    } else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close >= 0) {
        out += mapping(input.slice(cursor + 2, close));
        cursor = close;
        checkpoint = cursor + 1;
        continue;
      }
      out += '$(';
    } else {
      out += '$' + next;
    }
    cursor += 1;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** Upstream `IsEnvVarName`. */
export function isEnvVarName(name: string): boolean {
  return ENV_VAR_NAME.test(name);
}

/** Options of {@link resolveEnv}. */
export interface ResolveEnvOptions {
  readonly source: ObjectSource;
  readonly nodeName: string;
  /** The node's primary IP (`status.hostIP`). */
  readonly hostIP: string;
  /** All node IPs (`status.hostIPs`); defaults to `[hostIP]`. */
  readonly hostIPs?: readonly string[];
  /** The pod's IPs, primary first (`status.podIP` is the first). */
  readonly podIPs: readonly string[];
  /** Node allocatable; used for `resourceFieldRef` `limits.*` when the container has no limit. */
  readonly nodeAllocatable?: Readonly<Record<string, string>>;
  /** Service env vars, if the caller has any (see the module doc). */
  readonly serviceEnv?: Readonly<Record<string, string>>;
  /**
   * Extra vars applied first, with the lowest precedence (e.g. device-plugin
   * `Allocate` envs — the container's own vars win, as with CRI runtimes).
   * Not visible to `$(VAR)` expansion, as upstream.
   */
  readonly extra?: Readonly<Record<string, string>>;
  /** Receives warnings as `(reason, message)`, e.g. `InvalidEnvironmentVariableNames`. */
  readonly onWarning?: (reason: string, message: string) => void;
}

function configError(detail: string, cause?: unknown) {
  return nodeletError('NDL_CONTAINER_CONFIG', detail, cause);
}

class Objects {
  private readonly cms = new Map<string, V1ConfigMap | undefined>();
  private readonly secrets = new Map<string, V1Secret | undefined>();
  constructor(
    readonly source: ObjectSource,
    readonly ns: string,
  ) {}

  async configMap(name: string): Promise<V1ConfigMap | undefined> {
    if (!this.cms.has(name)) this.cms.set(name, await this.source.getConfigMap(this.ns, name));
    return this.cms.get(name);
  }

  async secret(name: string): Promise<V1Secret | undefined> {
    if (!this.secrets.has(name)) this.secrets.set(name, await this.source.getSecret(this.ns, name));
    return this.secrets.get(name);
  }
}

/**
 * Resolves the environment of `container` in `pod`. Insertion order of the
 * result: `extra`, service env, then the container's vars in definition order.
 */
export async function resolveEnv(pod: V1Pod, container: V1Container, opts: ResolveEnvOptions): Promise<Record<string, string>> {
  const ns = pod.metadata?.namespace ?? 'default';
  const objects = new Objects(opts.source, ns);
  const env: Record<string, string> = {};
  await applyEnvFrom(container, objects, env, opts);
  const serviceEnv = opts.serviceEnv ?? {};
  const mapping = mappingFuncFor(env, serviceEnv);
  const facts = { hostIPs: opts.hostIPs && opts.hostIPs.length > 0 ? opts.hostIPs : [opts.hostIP], podIPs: opts.podIPs };
  for (const v of container.env ?? []) {
    let value = v.value ?? '';
    if (value !== '') {
      value = expand(value, mapping);
    } else if (v.valueFrom) {
      const from = v.valueFrom;
      try {
        if (from.fieldRef) value = podFieldValue(pod, from.fieldRef, facts);
        else if (from.resourceFieldRef) value = resourceFieldValue(pod, container, from.resourceFieldRef, opts.nodeAllocatable ?? {});
        else if (from.configMapKeyRef) {
          const r = await keyRef(objects, 'configmap', from.configMapKeyRef);
          if (r === undefined) continue;
          value = r;
        } else if (from.secretKeyRef) {
          const r = await keyRef(objects, 'secret', from.secretKeyRef);
          if (r === undefined) continue;
          value = r;
        } else if (from.fileKeyRef) {
          throw configError(`env var ${v.name}: fileKeyRef is not supported on this node`);
        }
      } catch (e) {
        throw isNodeletError(e, 'NDL_CONTAINER_CONFIG') ? e : configError(errorDetail(e), e);
      }
    }
    // Re-insert so the result's order follows the definition order.
    delete env[v.name];
    env[v.name] = value;
  }
  const out: Record<string, string> = { ...opts.extra };
  for (const [k, val] of Object.entries(serviceEnv)) if (!Object.hasOwn(env, k)) out[k] = val;
  for (const k of Object.keys(env)) delete out[k];
  return Object.assign(out, env);
}

async function applyEnvFrom(container: V1Container, objects: Objects, env: Record<string, string>, opts: ResolveEnvOptions): Promise<void> {
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const kind = from.configMapRef ? 'configMap' : 'secret';
    const name = ref.name ?? '';
    const data = from.configMapRef ? await configMapData(objects, name) : await secretData(objects, name);
    if (data === undefined) {
      if (ref.optional === true) continue;
      throw configError(`${kind.toLowerCase()} ${JSON.stringify(name)} not found`);
    }
    const invalid: string[] = [];
    for (const [key, value] of Object.entries(data)) {
      const k = (from.prefix ?? '') + key;
      if (!isEnvVarName(k)) invalid.push(k);
      else env[k] = value;
    }
    if (invalid.length > 0) {
      invalid.sort();
      opts.onWarning?.(
        'InvalidEnvironmentVariableNames',
        `Keys [${invalid.join(', ')}] from the EnvFrom ${kind} ${objects.ns}/${name} were skipped since they are considered invalid environment variable names.`,
      );
    }
  }
}

async function configMapData(objects: Objects, name: string): Promise<Record<string, string> | undefined> {
  const cm = await objects.configMap(name);
  return cm ? { ...cm.data } : undefined; // upstream's envFrom reads `data` only, not `binaryData`
}

async function secretData(objects: Objects, name: string): Promise<Record<string, string> | undefined> {
  const s = await objects.secret(name);
  if (!s) return undefined;
  return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** A configMapKeyRef/secretKeyRef value; `undefined` = optional and absent (skip the var). */
async function keyRef(objects: Objects, kind: 'configmap' | 'secret', ref: { name?: string; key: string; optional?: boolean }): Promise<string | undefined> {
  const name = ref.name ?? '';
  const optional = ref.optional === true;
  const data = kind === 'configmap' ? await configMapData(objects, name) : await secretData(objects, name);
  if (data === undefined) {
    if (optional) return undefined;
    throw configError(`${kind} ${JSON.stringify(name)} not found`);
  }
  if (!Object.hasOwn(data, ref.key)) {
    if (optional) return undefined;
    throw configError(`couldn't find key ${ref.key} in ${kind === 'configmap' ? 'ConfigMap' : 'Secret'} ${objects.ns}/${name}`);
  }
  return data[ref.key];
}
