import { describe, expect, it } from 'vitest';
import { credentialsFor, credentialsKey } from '../../../core/images/credentials.ts';
import { parseReference } from '../../../core/images/reference.ts';

const cred = (registry: string, username = registry) => ({ registry, username, password: 'p' });
const names = (image: string, creds: ReturnType<typeof cred>[]) => credentialsFor(parseReference(image), creds).map((c) => c?.username);

describe('credentialsFor', () => {
  it('matches host and port exactly, most specific path first', () => {
    const creds = [cred('reg:5000'), cred('reg:5000/team/app', 'app'), cred('reg:5000/team', 'team'), cred('reg:5001'), cred('reg:5000/other')];
    expect(names('reg:5000/team/app:v1', creds)).toEqual(['app', 'team', 'reg:5000']);
  });

  it('does not match a path prefix in the middle of a component', () => {
    expect(names('reg.io/teamster/x', [cred('reg.io/team')])).toEqual([undefined]);
  });

  it('understands docker hub aliases and URLs', () => {
    const creds = [cred('https://index.docker.io/v1/', 'hub'), cred('registry-1.docker.io', 'hub2')];
    expect(names('nginx', creds)).toEqual(['hub', 'hub2']);
  });

  it('matches one-label wildcards only', () => {
    expect(names('a.example.com/x', [cred('*.example.com')])).toEqual(['*.example.com']);
    expect(names('a.b.example.com/x', [cred('*.example.com')])).toEqual([undefined]);
    expect(names('example.com/x', [cred('*.example.com')])).toEqual([undefined]);
  });

  it('is anonymous when nothing matches', () => {
    expect(credentialsFor(parseReference('ghcr.io/x'), [])).toEqual([undefined]);
  });

  it('keys distinct identities differently without holding the secret in the key', () => {
    const a = credentialsKey([{ registry: 'r', username: 'u', password: 'one' }]);
    const b = credentialsKey([{ registry: 'r', username: 'u', password: 'two' }]);
    expect(a).not.toBe(b);
    expect(a).not.toContain('one');
    expect(credentialsKey([undefined])).toBe(credentialsKey([undefined]));
  });
});
