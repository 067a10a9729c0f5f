// The bearer-token flow against a real docker-registry in `auth: token` mode, trusting a real
// token issuer (test/harness/token-issuer.ts) — both key references distribution 2.8 accepts.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProviderError, type ImageRequest, type RegistryCredential } from '@nodelet/plugin-api/v1';
import { OciImageService } from '../../../core/images/image-service.ts';
import { WASM_LAYER_TYPES } from '../../../core/images/manifest.ts';
import { parseReference } from '../../../core/images/reference.ts';
import { pushWasmModule } from '../../../core/images/registry-push.ts';
import { tinyModule } from '../../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../../harness/registry.ts';
import { libtrustKeyId, startTokenIssuer, type TokenIssuer } from '../../harness/token-issuer.ts';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});
async function service(): Promise<OciImageService> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-token-'));
  roots.push(root);
  return OciImageService.open({ rootDir: root });
}
const req = (credentials: RegistryCredential[]): ImageRequest => ({ pullPolicy: 'Always', credentials, acceptLayerTypes: WASM_LAYER_TYPES });

it('computes the libtrust key ID: 12 groups of 4 base32 characters from the SPKI sha256', () => {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = libtrustKeyId(publicKey);
  expect(kid).toMatch(/^([A-Z2-7]{4}:){11}[A-Z2-7]{4}$/);
  expect(libtrustKeyId(createPublicKey(publicKey.export({ format: 'pem', type: 'spki' })))).toBe(kid);
});

describe.each(['kid', 'x5c'] as const)('bearer tokens signed with a %s key reference', (keyRef) => {
  let issuer: TokenIssuer;
  let reg: TestRegistry;
  let alice: RegistryCredential;
  let bob: RegistryCredential;

  beforeAll(async () => {
    issuer = await startTokenIssuer({
      users: { alice: 'wonderland', bob: 'builder' },
      keyRef,
      // bob may only pull.
      grant: (user, _repo, actions) => (user === 'alice' ? actions : user === 'bob' ? actions.filter((a) => a === 'pull') : []),
    });
    reg = await startRegistry({ token: issuer.registryAuth });
    alice = { registry: reg.host, username: 'alice', password: 'wonderland' };
    bob = { registry: reg.host, username: 'bob', password: 'builder' };
  });
  afterAll(async () => {
    await reg?.stop();
    await issuer?.stop();
  });

  it('pushes with the push,pull scope and pulls the module back', async () => {
    const mod = tinyModule(`bearer-${keyRef}`);
    const pushed = await pushWasmModule(parseReference(`${reg.host}/private/app:v1`), mod, { credential: alice });
    expect(issuer.requests[0]).toEqual({ user: 'alice', scopes: ['repository:private/app:push,pull', 'repository:private/app:pull'], status: 200 });
    expect(issuer.requests.filter((r) => r.user === 'alice')).toHaveLength(1);
    const img = await (await service()).pull(`${reg.host}/private/app:v1`, req([alice]));
    expect(img.digest).toBe(pushed.digest);
    expect(await readFile(img.path)).toEqual(mod);
    expect(issuer.requests).toContainEqual({ user: 'alice', scopes: ['repository:private/app:pull'], status: 200 });
    // A second user's pull: bob may pull.
    expect((await (await service()).pull(`${reg.host}/private/app:v1`, req([bob]))).digest).toBe(pushed.digest);
  });

  it('a wrong password fails with the issuer reason; anonymous and pull-only users get the registry reason', async () => {
    const wrong = await (await service()).pull(`${reg.host}/private/app:v1`, req([{ ...alice, password: 'nope' }])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isProviderError(wrong)).toBe(true);
    expect((wrong as Error).message).toBe(
      `failed to pull image "${reg.host}/private/app:v1": unauthorized: invalid username or password for "alice" (GET token: HTTP 401)`,
    );
    const anon = await (await service()).pull(`${reg.host}/private/app:v1`, req([])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((anon as Error).message).toMatch(
      new RegExp(`^failed to pull image "${reg.host}/private/app:v1": unauthorized: authentication required \\(GET manifests/v1: HTTP 401\\)`),
    );
    const push = await pushWasmModule(parseReference(`${reg.host}/private/app:bob`), tinyModule('bob'), { credential: bob }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((push as Error).message).toMatch(/^unauthorized: authentication required \((HEAD|POST) .*HTTP 401\)$/);
  });
});
