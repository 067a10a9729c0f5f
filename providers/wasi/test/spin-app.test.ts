// The spin handler's parts without a cluster: the locked app reader, Spin's routing and headers
// (cases from spinframework/spin crates/http routes.rs and crates/trigger-http headers.rs tests),
// and variable resolution.
import { describe, expect, it } from 'vitest';
import { parseLockedApp } from '../src/spin/locked-app.ts';
import { SpinRouter, spinRequestHeaders } from '../src/spin/spin-routes.ts';
import { appVariableValues, componentVariables } from '../src/spin/spin-variables.ts';
import { spinListenAddress } from '../src/spin/spin-app-runner.ts';
import type { ContainerSpec } from '@nodelet/plugin-api/v1';

const D = (c: string) => `sha256:${c.repeat(64)}`;
const app = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    spin_lock_version: 1,
    variables: { greeting: { default: 'hi' }, token: { secret: true } },
    triggers: [
      { id: 't1', trigger_type: 'http', trigger_config: { component: 'a', route: '/a/...' } },
      { id: 't2', trigger_type: 'http', trigger_config: { component: 'a', route: { private: true } } },
      { id: 't3', trigger_type: 'redis', trigger_config: { component: 'a', channel: 'x' } },
    ],
    components: [
      {
        id: 'a',
        source: { content_type: 'application/wasm', digest: D('a') },
        files: [
          { digest: D('b'), path: 'static/x.txt' },
          { inline: Buffer.from('hey').toString('base64'), digest: D('c'), path: '/small.txt' },
        ],
        config: { greeting: '{{ greeting }}', url: 'https://{{token}}/x' },
        metadata: { allowed_outbound_hosts: ['https://example.com'], key_value_stores: ['default'] },
        env: { RUST_LOG: 'info' },
      },
    ],
    ...over,
  });

describe('the locked app', () => {
  it('reads components, public http triggers, variables, files and metadata', () => {
    const a = parseLockedApp(app(), 'img');
    expect(a.httpTriggers).toEqual([{ id: 't1', component: 'a', route: '/a/...' }]);
    expect(a.otherTriggerTypes).toEqual(['redis']);
    const c = a.components.get('a')!;
    expect(c.source).toBe(D('a'));
    expect(c.files).toEqual([
      { path: 'static/x.txt', digest: D('b') },
      { path: 'small.txt', inline: Buffer.from('hey') },
    ]);
    expect(c.allowedOutboundHosts).toEqual(['https://example.com']);
    expect(c.keyValueStores).toEqual(['default']);
    expect(c.env).toEqual({ RUST_LOG: 'info' });
    expect(a.variables.get('token')).toEqual({ default: undefined, secret: true });
  });

  it.each([
    ['not JSON', '{', /is not JSON/],
    ['an unknown version', app({ spin_lock_version: 2 }), /spin_lock_version 2/],
    ['a must_understand it does not know', app({ must_understand: ['teleport'] }), /does not understand: teleport/],
    ['a required host feature', app({ host_requirements: { local_service_chaining: 'required' } }), /local_service_chaining/],
    [
      'a trigger naming no component',
      app({ triggers: [{ id: 'x', trigger_type: 'http', trigger_config: { component: 'zz', route: '/' } }] }),
      /"zz", which it does not have/,
    ],
    [
      'a source without a digest',
      app({ components: [{ id: 'a', source: { content_type: 'application/wasm', source: 'file:///a.wasm' } }] }),
      /no sha256 digest/,
    ],
    [
      'a file path climbing out',
      app({ components: [{ id: 'a', source: { digest: D('a') }, files: [{ digest: D('b'), path: '../etc/passwd' }] }] }),
      /not a plain relative path/,
    ],
  ])('refuses %s with InvalidImage naming it', (_what, text, message) => {
    expect(() => parseLockedApp(text, 'img')).toThrow(message);
    try {
      parseLockedApp(text, 'img');
    } catch (e) {
      expect((e as { code?: string }).code).toBe('InvalidImage');
    }
  });
});

describe("Spin's routes", () => {
  const router = (routes: Array<[string, string]>) => new SpinRouter(routes.map(([component, route]) => ({ component, route })));

  it('matches exact routes, and a base of /', () => {
    const r = router([
      ['foo', '/foo'],
      ['foobar', '/foo/bar'],
    ]);
    expect(r.match('/foo')?.route.component).toBe('foo');
    expect(r.match('/foo/bar')?.route.component).toBe('foobar');
    expect(r.match('/foo/')?.route.component).toBe('foo');
    expect(r.match('/other')).toBeUndefined();
  });

  it('matches the wildcard everywhere, and prefers exact routes and the longest prefix', () => {
    const r = router([
      ['all', '/...'],
      ['one', '/one'],
      ['one_wild', '/one/...'],
      ['onetwo_wild', '/one/two/...'],
    ]);
    expect(r.match('/')?.route.component).toBe('all');
    expect(r.match('/abc/')?.route.component).toBe('all');
    expect(r.match('/one')?.route.component).toBe('one');
    expect(r.match('/one/x')?.route.component).toBe('one_wild');
    expect(r.match('/one/two/three/four')?.route.component).toBe('onetwo_wild');
  });

  it('takes the trailing part as path-info as Spin does (trailing slashes kept)', () => {
    const r = router([['c', '/foo/...']]);
    expect(r.match('/foo')?.pathInfo).toBe('');
    expect(r.match('/foo/')?.pathInfo).toBe('/');
    expect(r.match('/foo/bar')?.pathInfo).toBe('/bar');
    expect(r.match('/foo/bar/')?.pathInfo).toBe('/bar/');
    expect(r.match('/foobar')).toBeUndefined();
  });

  it('captures :params, and a later duplicate route wins', () => {
    const r = router([
      ['first', '/users/:id/...'],
      ['second', '/users/:id/...'],
    ]);
    const m = r.match('/users/42/bar')!;
    expect(m.route.component).toBe('second');
    expect(m.params.get('id')).toBe('42');
    expect(r.duplicates).toEqual(['/users/:id/...']);
  });

  it("sets Spin's headers (crates/trigger-http headers.rs test_default_headers)", () => {
    const m = router([['DUMMY', '/foo/...']]).match('/foo/bar')!;
    expect(spinRequestHeaders(m, '/foo/bar?key1=value1&key2=value2', 'fermyon.dev', { address: '127.0.0.1', port: 8777 })).toEqual({
      'spin-full-url': 'http://fermyon.dev/foo/bar?key1=value1&key2=value2',
      'spin-path-info': '/bar',
      'spin-matched-route': '/foo/...',
      'spin-base-path': '/',
      'spin-raw-component-route': '/foo/...',
      'spin-component-route': '/foo',
      'spin-client-addr': '127.0.0.1:8777',
    });
    const p = router([['DUMMY', '/foo/:userid/...']]).match('/foo/42/bar')!;
    const h = spinRequestHeaders(p, '/foo/42/bar', undefined, { address: '::1', port: 1 });
    expect(h['spin-component-route']).toBe('/foo/:userid');
    expect(h['spin-path-match-userid']).toBe('42');
    expect(h['spin-path-info']).toBe('/bar');
    expect(h['spin-client-addr']).toBe('[::1]:1');
    expect(h['spin-full-url']).toBe('http://localhost/foo/42/bar');
  });
});

describe('variables and the listen address', () => {
  const parsed = parseLockedApp(app(), 'img');
  it('takes SPIN_VARIABLE_<NAME> over the default and expands component templates', () => {
    const values = appVariableValues(parsed, { SPIN_VARIABLE_TOKEN: 'tok', SPIN_VARIABLE_GREETING: 'hello' }, 'c');
    expect(componentVariables(parsed.components.get('a')!, values, 'img')).toEqual({ greeting: 'hello', url: 'https://tok/x' });
    expect(componentVariables(parsed.components.get('a')!, appVariableValues(parsed, { SPIN_VARIABLE_TOKEN: 't' }, 'c'), 'img').greeting).toBe('hi');
  });

  it('fails the start naming a required variable without a value', () => {
    expect(() => appVariableValues(parsed, {}, 'c')).toThrow(/required variables token have no value: set SPIN_VARIABLE_TOKEN/);
  });

  it("listens at SPIN_HTTP_LISTEN_ADDR's port, else the first containerPort, else 80", () => {
    const spec = (env: Record<string, string>, ports?: ContainerSpec['ports']) =>
      ({ name: 'c', env, ports, network: { podIPs: ['10.0.0.5'] } }) as unknown as ContainerSpec;
    expect(spinListenAddress(spec({ SPIN_HTTP_LISTEN_ADDR: '0.0.0.0:3000' }))).toEqual({ host: '10.0.0.5', port: 3000 });
    expect(spinListenAddress(spec({}, [{ containerPort: 8080, protocol: 'TCP' }]))).toEqual({ host: '10.0.0.5', port: 8080 });
    expect(spinListenAddress(spec({}))).toEqual({ host: '10.0.0.5', port: 80 });
    expect(() => spinListenAddress(spec({ SPIN_HTTP_LISTEN_ADDR: 'nope' }))).toThrow(/not <address>:<port>/);
  });
});
