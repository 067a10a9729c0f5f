import { describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { formatReference, manifestReferenceOf, parseReference, registryHostOf, repositoryOf } from '../../../core/images/reference.ts';

const HEX = 'a'.repeat(64);

describe('parseReference', () => {
  it.each([
    ['nginx', 'docker.io', 'library/nginx', 'latest', undefined],
    ['nginx:1.25', 'docker.io', 'library/nginx', '1.25', undefined],
    ['bitnami/redis', 'docker.io', 'bitnami/redis', 'latest', undefined],
    ['index.docker.io/library/nginx:x', 'docker.io', 'library/nginx', 'x', undefined],
    ['docker.io/nginx', 'docker.io', 'library/nginx', 'latest', undefined],
    ['ghcr.io/a/b/c:v1', 'ghcr.io', 'a/b/c', 'v1', undefined],
    ['localhost/hello', 'localhost', 'hello', 'latest', undefined],
    ['localhost:5000/hello', 'localhost:5000', 'hello', 'latest', undefined],
    ['127.0.0.1:5000/hello:v2', '127.0.0.1:5000', 'hello', 'v2', undefined],
    ['[::1]:5000/hello', '[::1]:5000', 'hello', 'latest', undefined],
    ['Registry/x', 'Registry', 'x', 'latest', undefined],
    ['a_b__c-d--e/f.g_h', 'docker.io', 'a_b__c-d--e/f.g_h', 'latest', undefined],
    [`127.0.0.1:5000/hello@sha256:${HEX}`, '127.0.0.1:5000', 'hello', undefined, `sha256:${HEX}`],
    [`hello:v1@sha256:${HEX}`, 'docker.io', 'library/hello', 'v1', `sha256:${HEX}`],
  ])('%s', (input, domain, path, tag, digest) => {
    const ref = parseReference(input);
    expect(ref.domain).toBe(domain);
    expect(ref.path).toBe(path);
    expect(ref.tag).toBe(tag);
    expect(ref.digest).toBe(digest);
  });

  it.each([
    ['', 'empty'],
    [' nginx', 'whitespace'],
    ['NGINX', 'lowercase'],
    ['ghcr.io/Org/x', 'lowercase'],
    ['nginx:', 'invalid tag'],
    ['nginx:-x', 'invalid tag'],
    [`nginx:${'t'.repeat(129)}`, 'invalid tag'],
    ['nginx@sha256:abc', 'invalid digest'],
    [`nginx@sha512:${'b'.repeat(128)}`, 'unsupported digest'],
    [`nginx@sha256:${'A'.repeat(64)}`, 'unsupported digest'],
    ['a//b', 'invalid repository name component ""'],
    ['a/-b', 'invalid repository name component "-b"'],
    ['a/b_', 'invalid repository name component "b_"'],
    ['ex-.com/x', 'invalid registry host'],
    ['ghcr.io/', 'repository name is empty'],
    [`x/${'a'.repeat(260)}`, 'longer than 255'],
  ])('rejects %j (%s)', (input, why) => {
    let err: unknown;
    try {
      parseReference(input);
    } catch (e) {
      err = e;
    }
    expect(isNodeletError(err, 'NDL_IMAGE_REFERENCE')).toBe(true);
    expect((err as Error).message).toContain(why);
  });
});

describe('reference helpers', () => {
  it('maps docker hub to its API host and keeps other hosts', () => {
    expect(registryHostOf(parseReference('nginx'))).toBe('registry-1.docker.io');
    expect(registryHostOf(parseReference('127.0.0.1:5000/x'))).toBe('127.0.0.1:5000');
  });

  it('formats the fully qualified reference and the repository', () => {
    const ref = parseReference(`busybox:1@sha256:${HEX}`);
    expect(formatReference(ref)).toBe(`docker.io/library/busybox:1@sha256:${HEX}`);
    expect(repositoryOf(ref)).toBe('docker.io/library/busybox');
    expect(formatReference(parseReference('busybox'))).toBe('docker.io/library/busybox:latest');
  });

  it('asks for the digest when pinned, else the tag', () => {
    expect(manifestReferenceOf(parseReference(`x:1@sha256:${HEX}`))).toBe(`sha256:${HEX}`);
    expect(manifestReferenceOf(parseReference('x:1'))).toBe('1');
  });
});
