/** The checks against real local servers: HTTP (status, headers, redirects, body limit, timeout), TCP, gRPC health, exec without the capability, hooks. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Server as GrpcServer, ServerCredentials, status as GrpcStatus, type StatusObject } from '@grpc/grpc-js';
import { createProbeAgent, httpGetCheck } from '../../../core/probes/http-check.ts';
import { tcpCheck } from '../../../core/probes/tcp-check.ts';
import { decodeHealthStatus, encodeHealthRequest, grpcCheck } from '../../../core/probes/grpc-check.ts';
import { resolvePort, runAction } from '../../../core/probes/run-action.ts';
import { runHook } from '../../../core/probes/lifecycle-hooks.ts';
import type { ProbeTarget } from '../../../core/probes/probe-types.ts';

const agent = createProbeAgent();
let http: Server;
let port = 0;
const seen: IncomingMessage[] = [];
const sockets = new Set<string>();

beforeAll(async () => {
  http = createServer((req, res) => {
    seen.push(req);
    sockets.add(`${req.socket.remotePort}`);
    const u = new URL(req.url!, 'http://x');
    if (u.pathname === '/ok') return res.end('fine');
    if (u.pathname === '/503') return res.writeHead(503).end('no');
    if (u.pathname === '/big') return res.end('x'.repeat(100_000));
    if (u.pathname === '/hop') return res.writeHead(302, { location: '/ok' }).end();
    if (u.pathname === '/away') return res.writeHead(302, { location: 'http://other.invalid/' }).end('moved');
    if (u.pathname === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    if (u.pathname === '/hang') return; // never answers
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  port = (http.address() as AddressInfo).port;
});
afterAll(async () => {
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
  await agent.close();
});

const url = (p: string) => new URL(`http://127.0.0.1:${port}${p}`);
const target = (over: Partial<ProbeTarget> = {}): ProbeTarget => ({
  host: '127.0.0.1',
  ports: [{ name: 'web', containerPort: port }],
  providerName: 'wasi',
  ...over,
});

describe('HTTP check', () => {
  it('200 is a success with the body; 503 a failure with upstream text; the User-Agent and Accept are upstream', async () => {
    expect(await httpGetCheck(agent, url('/ok'), {}, 2000)).toEqual({ result: 'success', output: 'fine' });
    expect(await httpGetCheck(agent, url('/503'), {}, 2000)).toEqual({ result: 'failure', output: 'HTTP probe failed with statuscode: 503' });
    const req = seen.at(-1)!;
    expect(req.headers['user-agent']).toBe('kube-probe/1.36');
    expect(req.headers.accept).toBe('*/*');
  });

  it("the action's headers override the defaults", async () => {
    await httpGetCheck(agent, url('/ok'), { 'User-Agent': 'mine', 'X-Custom': 'v' }, 2000);
    expect(seen.at(-1)!.headers['user-agent']).toBe('mine');
    expect(seen.at(-1)!.headers['x-custom']).toBe('v');
  });

  it('follows a same-host redirect, warns on one to another host, fails after 10 hops', async () => {
    expect(await httpGetCheck(agent, url('/hop'), {}, 2000)).toEqual({ result: 'success', output: 'fine' });
    expect(await httpGetCheck(agent, url('/away'), {}, 2000)).toEqual({ result: 'warning', output: 'Probe terminated redirects, Response body: moved' });
    const loop = await httpGetCheck(agent, url('/loop'), {}, 2000);
    expect(loop.result).toBe('failure');
    expect(loop.output).toMatch(/stopped after 10 redirects$/);
  });

  it('reads at most 10 KiB of the body', async () => {
    const r = await httpGetCheck(agent, url('/big'), {}, 2000);
    expect(r.result).toBe('success');
    expect(r.output).toHaveLength(10 * 1024);
  });

  it('a server that does not answer within the timeout is a failure', async () => {
    const r = await httpGetCheck(agent, url('/hang'), {}, 300);
    expect(r).toEqual({ result: 'failure', output: `Get "${url('/hang').href}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
  });

  it('a refused connection reads like Go', async () => {
    const r = await httpGetCheck(agent, new URL('http://127.0.0.1:1/'), {}, 2000);
    expect(r).toEqual({ result: 'failure', output: 'Get "http://127.0.0.1:1/": dial tcp 127.0.0.1:1: connect: connection refused' });
  });

  it('checks reuse kept-alive connections of the shared agent', async () => {
    const fresh = createProbeAgent();
    sockets.clear();
    for (let i = 0; i < 6; i++) expect((await httpGetCheck(fresh, url('/ok'), {}, 2000)).result).toBe('success');
    await fresh.close();
    // back-to-back checks may find the first connection not yet idle and open a second; never one per check
    expect(sockets.size).toBeLessThanOrEqual(2);
  });
});

describe('actions', () => {
  it('a named port resolves from the container ports; an unknown name is an unknown result', async () => {
    expect(resolvePort('web', target())).toBe(port);
    expect(await runAction({ httpGet: { port: 'web', path: '/ok' } }, target(), 2000, agent)).toEqual({ result: 'success', output: 'fine' });
    const r = await runAction({ httpGet: { port: 'nope' } }, target(), 2000, agent);
    expect(r.result).toBe('unknown');
    expect(r.output).toMatch(/^couldn't find port: nope/);
  });

  it('tcpSocket: an open port succeeds, a closed one fails like Go', async () => {
    expect((await tcpCheck('127.0.0.1', port, 2000)).result).toBe('success');
    expect(await tcpCheck('127.0.0.1', 1, 2000)).toEqual({ result: 'failure', output: 'dial tcp 127.0.0.1:1: connect: connection refused' });
  });

  it('exec on a provider without exec fails with a clear message; with exec, the exit code decides', async () => {
    expect(await runAction({ exec: { command: ['true'] } }, target(), 1000, agent)).toEqual({
      result: 'failure',
      output: 'exec probes are not supported by provider "wasi"',
    });
    const exec = async (cmd: string[]) => ({ exitCode: cmd[0] === 'ok' ? 0 : 1, output: `ran ${cmd.join(' ')}` });
    expect(await runAction({ exec: { command: ['ok'] } }, target({ exec }), 1000, agent)).toEqual({ result: 'success', output: 'ran ok' });
    expect(await runAction({ exec: { command: ['bad'] } }, target({ exec }), 1000, agent)).toEqual({ result: 'failure', output: 'ran bad' });
  });
});

describe('gRPC check', () => {
  let server: GrpcServer;
  let gport = 0;
  const answers: Record<string, number> = { '': 1, sick: 2 };
  beforeAll(async () => {
    server = new GrpcServer();
    server.addService(
      {
        Check: {
          path: '/grpc.health.v1.Health/Check',
          requestStream: false,
          responseStream: false,
          requestSerialize: (r: { service: string }) => encodeHealthRequest(r.service),
          // an object: grpc-js refuses a falsy request message
          requestDeserialize: (b: Buffer) => ({ service: b.length ? b.subarray(2).toString() : '' }),
          responseSerialize: (n: number) => Buffer.from([0x08, n]),
          responseDeserialize: (b: Buffer) => decodeHealthStatus(b),
        },
      },
      {
        Check: (call: { request: { service: string } }, cb: (e: Partial<StatusObject> | null, v?: number) => void) =>
          call.request.service in answers ? cb(null, answers[call.request.service]) : cb({ code: GrpcStatus.NOT_FOUND, details: 'unknown service' }),
      },
    );
    gport = await new Promise<number>((res, rej) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
  });
  afterAll(() => server.forceShutdown());

  it('SERVING is a success; NOT_SERVING and errors are failures with upstream text', async () => {
    expect(await grpcCheck('127.0.0.1', gport, '', 2000)).toEqual({ result: 'success', output: 'service is serving' });
    expect(await grpcCheck('127.0.0.1', gport, 'sick', 2000)).toEqual({ result: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
    expect((await grpcCheck('127.0.0.1', gport, 'other', 2000)).output).toMatch(/^error: health rpc probe failed: /);
    expect((await grpcCheck('127.0.0.1', 1, '', 300)).output).toMatch(/^timeout: failed to connect service "127.0.0.1:1" within 0.3s/);
  });
});

describe('lifecycle hooks', () => {
  const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };
  it('httpGet succeeds on any response and fails on a transport error with upstream text', async () => {
    expect(await runHook({ httpGet: { port, path: '/503' } }, pod, { name: 'main' }, target(), 2000, agent)).toBeUndefined();
    expect(await runHook({ httpGet: { port: 1, path: '/x' } }, pod, { name: 'main' }, target(), 2000, agent)).toBe(
      'HTTP lifecycle hook (/x) for Container "main" in Pod "p_ns(u1)" failed - error: Get "http://127.0.0.1:1/x": dial tcp 127.0.0.1:1: connect: connection refused',
    );
  });
  it('exec on a provider without exec fails; sleep succeeds; tcpSocket connects', async () => {
    expect(await runHook({ exec: { command: ['x'] } }, pod, { name: 'main' }, target(), 2000, agent)).toMatch(
      /exec probes are not supported by provider "wasi"/,
    );
    expect(await runHook({ sleep: { seconds: 0 } }, pod, { name: 'main' }, target(), 2000, agent)).toBeUndefined();
    expect(await runHook({ tcpSocket: { port } }, pod, { name: 'main' }, target(), 2000, agent)).toBeUndefined();
  });
});
