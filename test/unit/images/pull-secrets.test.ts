import { describe, expect, it } from 'vitest';
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { parsePullSecret, pullSecretCredentials, registryHost } from '../../../core/images/pull-secrets.ts';
import { credentialsFor } from '../../../core/images/credentials.ts';
import { parseReference } from '../../../core/images/reference.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function dockerConfigJson(auths: Record<string, unknown>, name = 'regcred'): V1Secret {
  return { metadata: { name }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) } };
}

describe('parsePullSecret', () => {
  it('reads username/password entries of a dockerconfigjson secret', () => {
    expect(parsePullSecret(dockerConfigJson({ 'reg.example.com:5000': { username: 'u', password: 'p' } }))).toEqual([
      { registry: 'reg.example.com:5000', username: 'u', password: 'p', token: undefined },
    ]);
  });

  it('decodes `auth` (base64 user:password), keeping colons in the password', () => {
    expect(parsePullSecret(dockerConfigJson({ 'reg.io': { auth: b64('alice:pa:ss') } }))).toEqual([
      { registry: 'reg.io', username: 'alice', password: 'pa:ss', token: undefined },
    ]);
  });

  it('passes identity and registry tokens on', () => {
    const [c] = parsePullSecret(dockerConfigJson({ 'reg.io': { identitytoken: 'tok' } }));
    expect(c).toMatchObject({ registry: 'reg.io', token: 'tok' });
  });

  it('normalises Docker Hub URLs and schemes', () => {
    const creds = parsePullSecret(
      dockerConfigJson({ 'https://index.docker.io/v1/': { username: 'hub', password: 'p' }, 'http://reg.io:5000/': { username: 'r', password: 'p' } }),
    );
    expect(creds.map((c) => c.registry)).toEqual(['docker.io', 'reg.io:5000']);
    expect(registryHost('index.docker.io')).toBe('docker.io');
  });

  it('keeps a repository path so the credential applies only under it (upstream keyring)', () => {
    const creds = parsePullSecret(dockerConfigJson({ 'reg.io/team-a': { username: 'a', password: 'p' }, 'reg.io/team-b': { username: 'b', password: 'p' } }));
    expect(creds.map((c) => c.registry)).toEqual(['reg.io/team-a', 'reg.io/team-b']);
    expect(credentialsFor(parseReference('reg.io/team-b/app:v1'), creds).map((c) => c?.username)).toEqual(['b']);
  });

  it('reads the legacy kubernetes.io/dockercfg format', () => {
    const secret: V1Secret = { type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify({ 'reg.io': { auth: b64('bob:pw') } })) } };
    expect(parsePullSecret(secret)).toEqual([{ registry: 'reg.io', username: 'bob', password: 'pw', token: undefined }]);
  });

  it('yields nothing for malformed data, other secret types or missing keys', () => {
    expect(parsePullSecret({ type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{not json') } })).toEqual([]);
    expect(parsePullSecret({ type: 'Opaque', data: { '.dockerconfigjson': b64('{"auths":{"r":{}}}') } })).toEqual([]);
    expect(parsePullSecret({ type: 'kubernetes.io/dockerconfigjson', data: {} })).toEqual([]);
    expect(parsePullSecret({ type: 'kubernetes.io/dockerconfigjson' })).toEqual([]);
  });
});

describe('pullSecretCredentials', () => {
  const pod = (names: (string | undefined)[]): V1Pod => ({
    metadata: { name: 'p', namespace: 'team' },
    spec: { containers: [], imagePullSecrets: names.map((name) => ({ name })) },
  });

  it('reads every referenced secret from the pod namespace, in order, skipping missing and failing ones', async () => {
    const asked: string[] = [];
    const secrets: Record<string, V1Secret> = {
      'team/one': dockerConfigJson({ 'a.io': { username: 'one', password: 'p' } }),
      'team/two': dockerConfigJson({ 'b.io': { username: 'two', password: 'p' } }),
    };
    const source = {
      async getSecret(ns: string, name: string) {
        asked.push(`${ns}/${name}`);
        if (name === 'broken') throw new Error('forbidden');
        return secrets[`${ns}/${name}`];
      },
    };
    const creds = await pullSecretCredentials(pod(['one', 'missing', undefined, 'broken', 'two']), source);
    expect(creds.map((c) => c.username)).toEqual(['one', 'two']);
    expect(asked).toEqual(['team/one', 'team/missing', 'team/broken', 'team/two']);
  });

  it('is empty without imagePullSecrets', async () => {
    const source = {
      getSecret: async () => {
        throw new Error('must not be called');
      },
    };
    expect(await pullSecretCredentials({ metadata: { namespace: 'x' }, spec: { containers: [] } }, source)).toEqual([]);
  });
});
