/**
 * Registry credentials from a pod's `imagePullSecrets` (the ServiceAccount
 * admission plugin has already copied the service account's pull secrets into
 * the pod spec): `kubernetes.io/dockerconfigjson` and legacy `kubernetes.io/dockercfg`.
 * A missing or malformed secret is skipped, as upstream does.
 */
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import type { RegistryCredential } from '@nodelet/plugin-api/v1';

/** One `auths` entry of a docker config. */
export interface DockerAuth {
  username?: string;
  password?: string;
  auth?: string;
  identitytoken?: string;
  registrytoken?: string;
}

/**
 * Normalises a docker config key (`https://index.docker.io/v1/`, `host:port`, `host/repo/prefix`) to
 * `host[:port][/path]`: the scheme and trailing slashes go, a repository path stays (the keyring matches it as a prefix).
 */
export function registryHost(key: string): string {
  const bare = key
    .trim()
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/+$/, '');
  return /^index\.docker\.io(\/v[12])?$/.test(bare) ? 'docker.io' : bare;
}

/** A docker config `auths` entry (`auth` base64 `user:password`, or username/password, or a token) as a credential. */
export function toCredential(key: string, a: DockerAuth): RegistryCredential {
  let { username, password } = a;
  if ((!username || !password) && a.auth) {
    const decoded = Buffer.from(a.auth, 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i > 0) {
      username = decoded.slice(0, i);
      password = decoded.slice(i + 1);
    }
  }
  return { registry: registryHost(key), username, password, token: a.registrytoken ?? a.identitytoken };
}

/** Parses the credentials of one pull secret. */
export function parsePullSecret(secret: V1Secret): RegistryCredential[] {
  const data = secret.data ?? {};
  const decode = (k: string) => (data[k] ? JSON.parse(Buffer.from(data[k], 'base64').toString('utf8')) : undefined);
  try {
    const auths: Record<string, DockerAuth> | undefined =
      secret.type === 'kubernetes.io/dockerconfigjson'
        ? decode('.dockerconfigjson')?.auths
        : secret.type === 'kubernetes.io/dockercfg'
          ? decode('.dockercfg')
          : undefined;
    return Object.entries(auths ?? {}).map(([k, a]) => toCredential(k, a));
  } catch {
    return [];
  }
}

/** Reads a pod's pull secrets through `source`. */
export async function pullSecretCredentials(
  pod: V1Pod,
  source: { getSecret(ns: string, name: string): Promise<V1Secret | undefined> },
): Promise<RegistryCredential[]> {
  const out: RegistryCredential[] = [];
  for (const ref of pod.spec?.imagePullSecrets ?? []) {
    if (!ref.name) continue;
    const s = await source.getSecret(pod.metadata!.namespace!, ref.name).catch(() => undefined);
    if (s) out.push(...parsePullSecret(s));
  }
  return out;
}
