/**
 * A Spin application's variables, resolved at the container's start (Spin's "environment
 * variables" provider, which SpinKube's spin-operator feeds): the app variable `name` takes the
 * container's env `SPIN_VARIABLE_NAME` (upper case, or as the variable is spelled), else its
 * default; a required variable (no default) without a value fails the start. Each component's
 * `config` entries are templates over them (`"{{ name }}"`, `"https://{{ host }}/api"`); the
 * result is what the component reads, by key, through `fermyon:spin/variables` and
 * `wasi:config/store`. `allowed_outbound_hosts` entries may name variables the same way.
 */
import { providerError } from '@nodelet/plugin-api/v1';
import { CONFIG_ENV_PREFIX } from '../platform/config-store.mjs';
import type { SpinApp, SpinComponent } from './locked-app.ts';

const TEMPLATE = /\{\{\s*([^{}\s]*)\s*\}\}/g;

/** The app variables' values from `env` and their defaults; throws InvalidArgument naming the required ones without a value. */
export function appVariableValues(app: SpinApp, env: Readonly<Record<string, string>>, container: string): Map<string, string> {
  const values = new Map<string, string>();
  const missing: string[] = [];
  for (const [name, v] of app.variables) {
    const value = env[`${CONFIG_ENV_PREFIX}${name.toUpperCase()}`] ?? env[`${CONFIG_ENV_PREFIX}${name}`] ?? v.default;
    if (value === undefined) missing.push(name);
    else values.set(name, value);
  }
  if (missing.length > 0) {
    const envs = missing.map((n) => `${CONFIG_ENV_PREFIX}${n.toUpperCase()}`).join(', ');
    throw providerError(
      'InvalidArgument',
      `container ${container}: the Spin application's required variables ${missing.join(', ')} have no value: set ${envs} in the container's env`,
    );
  }
  return values;
}

/** `template` with each `{{ name }}` replaced by the variable's value; throws InvalidImage (naming `what`) for an unknown one. */
export function expandTemplate(template: string, values: ReadonlyMap<string, string>, image: string, what: string): string {
  return template.replace(TEMPLATE, (_all, name: string) => {
    const value = values.get(name.toLowerCase());
    if (value === undefined) throw providerError('InvalidImage', `image ${image}: ${what} names the undefined app variable ${JSON.stringify(name)}`);
    return value;
  });
}

/** A component's variables: each config key with its template expanded; throws InvalidImage for a template naming an unknown variable. */
export function componentVariables(component: SpinComponent, values: ReadonlyMap<string, string>, image: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, template] of Object.entries(component.config))
    out[key.toLowerCase()] = expandTemplate(template, values, image, `component ${JSON.stringify(component.id)} variable ${JSON.stringify(key)}`);
  return out;
}
