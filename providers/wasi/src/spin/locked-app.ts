/**
 * A Spin application's locked form (spinframework/spin, crates/locked-app: `spin.lock`, the
 * JSON `spin registry push` stores in the OCI artifact), read into what the `spin` handler runs:
 *
 *   { spin_lock_version: 0 | 1, must_understand?, metadata?, variables?: { name: { default?, secret? } },
 *     triggers: [{ id, trigger_type: "http", trigger_config: { component, route | { private: true } } }],
 *     components: [{ id, source: { content_type, digest }, env?, files?: [{ digest | inline, path }],
 *                    config?: { key: "{{ variable }}" }, metadata?: { allowed_outbound_hosts?, key_value_stores? } }] }
 *
 * Unknown fields are ignored (as Spin does), except those listed in `must_understand`, which
 * refuse the app; so do host requirements other than optional ones. Every problem is one
 * InvalidImage error naming the field.
 */
import { providerError } from '@nodelet/plugin-api/v1';

/** A static file of a component: its content (a blob digest, or inline bytes) and its path under `/`. */
export interface SpinFile {
  readonly path: string;
  readonly digest?: string;
  readonly inline?: Uint8Array;
}

/** One component of the app. */
export interface SpinComponent {
  readonly id: string;
  /** Digest of the layer holding its Wasm component. */
  readonly source: string;
  /** Its WASI environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly files: readonly SpinFile[];
  /** Its variables: key → template (`"{{ name }}"`, text, or both). */
  readonly config: Readonly<Record<string, string>>;
  /** `allowed_outbound_hosts` as written (none: no outbound access, as in Spin). */
  readonly allowedOutboundHosts: readonly string[];
  /** `key_value_stores`: the store labels it may open. */
  readonly keyValueStores: readonly string[];
}

/** An HTTP trigger: a route served by a component. */
export interface SpinHttpTrigger {
  readonly id: string;
  readonly component: string;
  /** The route as written (`/hello`, `/api/...`, `/users/:id`). */
  readonly route: string;
}

/** A Spin application as the `spin` handler runs it. */
export interface SpinApp {
  readonly name?: string;
  /** App variables: name → default (undefined: required). */
  readonly variables: ReadonlyMap<string, { readonly default?: string; readonly secret: boolean }>;
  readonly components: ReadonlyMap<string, SpinComponent>;
  /** Public HTTP routes (private ones are left out: they serve only service chaining). */
  readonly httpTriggers: readonly SpinHttpTrigger[];
  /** Triggers of other types (redis, cron, …), which nodelet does not run. */
  readonly otherTriggerTypes: readonly string[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Parses and checks a locked app; throws InvalidImage naming what is wrong. */
export function parseLockedApp(text: string, image: string): SpinApp {
  const bad = (what: string) => providerError('InvalidImage', `image ${image}: the Spin application's locked app ${what}`, { reason: 'InvalidSpinApp' });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw bad(`is not JSON: ${(e as Error).message}`);
  }
  if (!isObject(body)) throw bad('is not a JSON object');
  const version = body.spin_lock_version;
  if (version !== 0 && version !== 1) throw bad(`has spin_lock_version ${JSON.stringify(version)} (nodelet reads 0 and 1)`);
  const must = body.must_understand ?? [];
  if (!Array.isArray(must)) throw bad('has a must_understand that is not a list');
  const understood = ['host_requirements', 'component_host_requirements'];
  const unknown = must.filter((m) => !understood.includes(m as string));
  if (unknown.length > 0) throw bad(`requires features nodelet does not understand: ${unknown.join(', ')}`);
  checkHostRequirements(body.host_requirements, 'host_requirements', bad);

  const variables = new Map<string, { default?: string; secret: boolean }>();
  if (body.variables !== undefined) {
    if (!isObject(body.variables)) throw bad('has variables that are not an object');
    for (const [name, v] of Object.entries(body.variables)) {
      if (!isObject(v)) throw bad(`has variable ${JSON.stringify(name)} that is not an object`);
      if (v.default !== undefined && typeof v.default !== 'string') throw bad(`has variable ${JSON.stringify(name)} whose default is not a string`);
      variables.set(name.toLowerCase(), { default: v.default as string | undefined, secret: v.secret === true });
    }
  }

  if (!Array.isArray(body.components)) throw bad('has no components list');
  const components = new Map<string, SpinComponent>();
  for (const [i, c] of body.components.entries()) {
    const component = parseComponent(c, `components[${i}]`, bad);
    if (components.has(component.id)) throw bad(`has component ${JSON.stringify(component.id)} twice`);
    components.set(component.id, component);
  }

  if (!Array.isArray(body.triggers)) throw bad('has no triggers list');
  const httpTriggers: SpinHttpTrigger[] = [];
  const other = new Set<string>();
  for (const [i, t] of body.triggers.entries()) {
    if (!isObject(t) || typeof t.trigger_type !== 'string') throw bad(`has triggers[${i}] without a trigger_type`);
    if (t.trigger_type !== 'http') {
      other.add(t.trigger_type);
      continue;
    }
    const cfg = t.trigger_config;
    if (!isObject(cfg)) throw bad(`has triggers[${i}] without a trigger_config`);
    const component = cfg.component;
    if (typeof component !== 'string')
      throw bad(`has http trigger ${JSON.stringify(t.id)} naming no component (inline components are resolved by spin registry push)`);
    if (!components.has(component)) throw bad(`has http trigger ${JSON.stringify(t.id)} naming component ${JSON.stringify(component)}, which it does not have`);
    const route = cfg.route;
    if (isObject(route) && route.private === true) continue;
    if (typeof route !== 'string') throw bad(`has http trigger ${JSON.stringify(t.id)} whose route is neither a string nor { private: true }`);
    httpTriggers.push({ id: typeof t.id === 'string' ? t.id : `trigger-${i}`, component, route });
  }
  const meta = isObject(body.metadata) ? body.metadata : {};
  return { name: typeof meta.name === 'string' ? meta.name : undefined, variables, components, httpTriggers, otherTriggerTypes: [...other] };
}

function checkHostRequirements(v: unknown, where: string, bad: (what: string) => Error): void {
  if (v === undefined) return;
  if (!isObject(v)) throw bad(`has a ${where} that is not an object`);
  const required = Object.entries(v).filter(([, r]) => r !== 'optional');
  if (required.length > 0) throw bad(`requires host features nodelet does not provide (${where}): ${required.map(([k]) => k).join(', ')}`);
}

function stringMap(v: unknown, where: string, bad: (what: string) => Error): Record<string, string> {
  if (v === undefined) return {};
  if (!isObject(v) || !Object.values(v).every((x) => typeof x === 'string')) throw bad(`has ${where} that is not a map of strings`);
  return v as Record<string, string>;
}

function stringList(v: unknown, where: string, bad: (what: string) => Error): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw bad(`has ${where} that is not a list of strings`);
  return v;
}

function parseComponent(c: unknown, where: string, bad: (what: string) => Error): SpinComponent {
  if (!isObject(c) || typeof c.id !== 'string' || c.id === '') throw bad(`has ${where} without an id`);
  const at = `component ${JSON.stringify(c.id)}`;
  if (isObject(c.dependencies) && Object.keys(c.dependencies).length > 0)
    throw bad(`has ${at} with dependencies: push the app composed (spin registry push composes by default)`);
  checkHostRequirements(c.host_requirements, `${at} host_requirements`, bad);
  const source = isObject(c.source) ? c.source.digest : undefined;
  if (typeof source !== 'string' || !DIGEST.test(source))
    throw bad(`has ${at} whose source has no sha256 digest (an app pulled from a registry names its layers by digest)`);
  const files: SpinFile[] = [];
  for (const [i, f] of (Array.isArray(c.files) ? c.files : c.files === undefined ? [] : [null]).entries()) {
    if (!isObject(f) || typeof f.path !== 'string') throw bad(`has ${at} files[${i}] without a path`);
    const path = f.path.replace(/^\/+/, '');
    if (path === '' || path.split('/').some((s) => s === '..' || s === '.' || s === ''))
      throw bad(`has ${at} file path ${JSON.stringify(f.path)} that is not a plain relative path`);
    if (typeof f.inline === 'string') files.push({ path, inline: Buffer.from(f.inline, 'base64') });
    else if (typeof f.digest === 'string' && DIGEST.test(f.digest)) files.push({ path, digest: f.digest });
    else throw bad(`has ${at} file ${JSON.stringify(f.path)} with neither inline content nor a sha256 digest`);
  }
  const meta = isObject(c.metadata) ? c.metadata : {};
  return {
    id: c.id,
    source,
    env: stringMap(c.env, `${at} env`, bad),
    files,
    config: stringMap(c.config, `${at} config`, bad),
    allowedOutboundHosts: stringList(meta.allowed_outbound_hosts, `${at} allowed_outbound_hosts`, bad),
    keyValueStores: stringList(meta.key_value_stores, `${at} key_value_stores`, bad),
  };
}
