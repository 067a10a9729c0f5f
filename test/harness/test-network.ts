/**
 * Test hosts in network namespaces of the test's own, so that pod IPs and a test's traffic to
 * them never touch the machine's root namespace (the machine's network rule: test traffic goes
 * only to loopback or to addresses inside namespaces the test made).
 *
 *   root namespace                                   host "n1" (netns ndlt-<pid>-<tok>-n1)
 *   ──────────────────────────────────────           ──────────────────────────────────────────
 *   control plane, registry on 127.0.0.1 ◄─root agent─ its agent: 127.0.0.1:<port> (forwardOut)
 *   the test: host.dial / httpGet ────────────────────► its agent connects from inside (a pod IP, 127.0.0.1:<port>)
 *   127.0.0.1:<kubelet port> (forwardIn): root agent ──► nodelet on the namespace's 127.0.0.1
 *   LAN bridge ndb<tok>, 198.18.<n>.1/24 ──────veth───► eth0 198.18.<n>.<10+k>/24 (only with { lan: true })
 *
 * Between the namespaces and the root one, bytes go over Unix sockets in a directory of the test,
 * relayed by agent processes (`netns-agent.ts`: one in each namespace, one in the root namespace,
 * so a test blocked in a synchronous call such as `kubectl logs` blocks no relay), never over an
 * IP route: no namespace has a default route, and the root
 * namespace has no route to a pod CIDR. The optional LAN is a bridge in the root namespace
 * holding one address the test owns (its `.1`) and removes with it; it joins the hosts' `eth0`s
 * on one L2 segment, in 198.18.0.0/15 (RFC 2544's range for network tests), in a /24 no address or
 * route of the machine is in.
 *
 * Names are unique per run (`ndlt-<pid>-<token>`); the root links carry the pid in their alias, so
 * a later run removes what a killed one left behind.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import ipaddr from 'ipaddr.js';
import { nodeBinary } from './node-binary.ts';

const AGENT = resolve(import.meta.dirname, 'netns-agent.ts');
const PREFIX = 'ndlt';

/** Why this machine cannot make test namespaces, or undefined when it can (CAP_NET_ADMIN and CAP_SYS_ADMIN). */
export function netnsUnavailable(): string | undefined {
  const eff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  const caps = eff ? BigInt(`0x${eff}`) : 0n;
  const has = (bit: bigint) => (caps >> bit) & 1n;
  if (!has(12n)) return 'needs CAP_NET_ADMIN (root) to make network namespaces';
  if (!has(21n)) return 'needs CAP_SYS_ADMIN (root) for ip netns add';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'needs ip from iproute2';
  }
  return undefined;
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const ipQuiet = (...args: string[]) => new Promise<void>((done) => execFile('ip', args, () => done()));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes namespaces and root links earlier runs of dead processes left (a killed test worker). */
function sweepLeftovers(): void {
  for (const name of ip('netns', 'list')
    .split('\n')
    .map((l) => l.split(' ')[0]!)) {
    const pid = new RegExp(`^${PREFIX}-(\\d+)-`).exec(name)?.[1];
    if (pid && !alive(Number(pid))) ip('netns', 'del', name);
  }
  const links = JSON.parse(ip('-j', 'link', 'show')) as { ifname: string; ifalias?: string }[];
  for (const l of links) {
    const pid = new RegExp(`^${PREFIX}-(\\d+)$`).exec(l.ifalias ?? '')?.[1];
    if (pid && !alive(Number(pid))) execFileSync('ip', ['link', 'del', l.ifname], { stdio: 'ignore' });
  }
}

/** A /24 of 198.18.0.0/16 that no address or route of the root namespace is in. */
function freeLan(): string {
  const used = [
    ...(JSON.parse(ip('-j', '-4', 'addr', 'show')) as { addr_info: { local: string; prefixlen: number }[] }[]).flatMap((l) =>
      l.addr_info.map((a) => `${a.local}/${a.prefixlen}`),
    ),
    ...(JSON.parse(ip('-j', '-4', 'route', 'show', 'table', 'all')) as { dst: string }[])
      .map((r) => r.dst)
      .filter((d) => d !== 'default' && /^[\d.]+(\/\d+)?$/.test(d)),
  ].map((c) => ipaddr.parseCIDR(c.includes('/') ? c : `${c}/32`));
  for (let tries = 0; tries < 64; tries++) {
    const lan = `198.18.${randomBytes(1)[0]!}.0`;
    const net = ipaddr.parse(lan) as ipaddr.IPv4;
    if (!used.some(([a, bits]) => a.kind() === 'ipv4' && ((a as ipaddr.IPv4).match(net, 24) || net.match(a as ipaddr.IPv4, bits))))
      return lan.replace(/\.0$/, '');
  }
  throw new Error('no free /24 in 198.18.0.0/16 for a test LAN');
}

/** One test host: a network namespace with its agent. */
export interface TestHost {
  readonly name: string;
  /** The namespace's name (`ip netns exec <netns> …`). */
  readonly netns: string;
  /**
   * The command prefix that runs a program in the namespace's network and nothing else
   * (`nsenter --net=/run/netns/<netns>`): unlike `ip netns exec`, the program keeps the test's
   * mount namespace (its mounts are the test's to see) and the root namespace's /sys.
   */
  readonly enter: readonly string[];
  /** Its address on the test LAN (with `{ lan: true }`). */
  readonly lanIP?: string;
  /** `ip -n <netns> <args>`: its output. */
  ip(...args: string[]): string;
  /** Makes 127.0.0.1:`port` in the namespace reach 127.0.0.1:`port` of the root namespace (the control plane, a registry). */
  forwardOut(port: number): Promise<void>;
  /** Makes 127.0.0.1:`port` of the root namespace reach 127.0.0.1:`port` in the namespace (nodelet's kubelet API and /healthz). */
  forwardIn(port: number): Promise<void>;
  /** A TCP connection made from inside the namespace; rejects with the error's `code` (`ENETUNREACH`, `ECONNREFUSED`…). */
  dial(to: { host: string; port: number; localAddress?: string }): Promise<Socket>;
  /** `GET http://host:port/path` from inside the namespace (from `localAddress` when given). */
  httpGet(host: string, port: number, path?: string, localAddress?: string): Promise<{ status: number; body: string }>;
}

/** The namespaces of one test file, and its LAN. */
export interface TestNetwork {
  /** The LAN's first three octets (`198.18.7`), with `{ lan: true }` hosts. */
  readonly lanPrefix?: string;
  addHost(name: string, o?: { lan?: boolean }): Promise<TestHost>;
  /** Ends the agents and removes the namespaces, the LAN and the socket directory. */
  dispose(): Promise<void>;
}

/** An agent process and its command channel (see `netns-agent.ts`). */
interface Agent {
  readonly proc: ChildProcess;
  /** Sends a command; rejects with the agent's error. */
  command(line: string): Promise<void>;
}

/** Starts `argv` (an agent) and waits for its `ready`. */
async function startAgent(argv: string[], what: string): Promise<Agent> {
  const proc = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map<string, (answer: string) => void>();
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    if (line === 'ready') return waiting.get('ready')?.('ok');
    const m = /^(.*?) (ok|error .*)$/.exec(line);
    if (m) waiting.get(m[1]!)?.(m[2]!);
  });
  await new Promise<void>((ok, fail) => {
    waiting.set('ready', () => ok());
    proc.once('exit', (code) => fail(new Error(`${what} exited ${code}`)));
  });
  return {
    proc,
    async command(line) {
      const answer = await new Promise<string>((ok) => {
        waiting.set(line, ok);
        proc.stdin!.write(`${line}\n`);
      });
      waiting.delete(line);
      if (answer !== 'ok') throw new Error(`${what}: ${line}: ${answer}`);
    },
  };
}

/** A network of test hosts (see the module comment); the caller checks {@link netnsUnavailable} first. */
export function createTestNetwork(): TestNetwork {
  sweepLeftovers();
  const token = randomBytes(3).toString('hex');
  const tag = `${PREFIX}-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-netns-'));
  const agentArgv = (role: string) => [nodeBinary(), '--no-warnings', AGENT, dir, role];
  let rootAgent: Promise<Agent> | undefined;
  const forwardedOut = new Map<number, Promise<void>>();
  const agents: Agent[] = [];
  const namespaces: string[] = [];
  const rootLinks: string[] = [];
  let lan: { prefix: string; bridge: string } | undefined;
  let hosts = 0;

  const ensureLan = () => {
    if (lan) return lan;
    const prefix = freeLan();
    const bridge = `ndb${token}`;
    ip('link', 'add', bridge, 'type', 'bridge');
    rootLinks.push(bridge);
    ip('link', 'set', 'dev', bridge, 'alias', tag);
    ip('addr', 'add', `${prefix}.1/24`, 'dev', bridge);
    ip('link', 'set', 'dev', bridge, 'up');
    lan = { prefix, bridge };
    return lan;
  };

  const rootCommand = async (line: string) => {
    rootAgent ??= startAgent(agentArgv('--root'), 'the root netns agent').then((a) => {
      agents.push(a);
      return a;
    });
    await (await rootAgent).command(line);
  };
  /** The root side of `out <port>`: `<dir>/out-<port>.sock` → 127.0.0.1:<port>, once per port. */
  const serveOut = (port: number) => {
    let done = forwardedOut.get(port);
    if (!done) forwardedOut.set(port, (done = rootCommand(`out ${port}`)));
    return done;
  };

  const network: TestNetwork = {
    get lanPrefix() {
      return lan?.prefix;
    },
    async addHost(name, o = {}) {
      const k = ++hosts;
      const netns = `${tag}-${token}-${name}`;
      ip('netns', 'add', netns);
      namespaces.push(netns);
      ip('-n', netns, 'link', 'set', 'lo', 'up');
      let lanIP: string | undefined;
      if (o.lan) {
        const l = ensureLan();
        const veth = `nv${token}${k}`;
        ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns);
        rootLinks.push(veth);
        ip('link', 'set', 'dev', veth, 'alias', tag);
        ip('link', 'set', 'dev', veth, 'master', l.bridge);
        ip('link', 'set', 'dev', veth, 'up');
        lanIP = `${l.prefix}.${10 + k}`;
        ip('-n', netns, 'addr', 'add', `${lanIP}/24`, 'dev', 'eth0');
        ip('-n', netns, 'link', 'set', 'eth0', 'up');
      }
      const agent = await startAgent(['ip', 'netns', 'exec', netns, ...agentArgv(name)], `the netns agent of ${name}`);
      agents.push(agent);
      const host: TestHost = {
        name,
        netns,
        enter: ['nsenter', `--net=/run/netns/${netns}`],
        lanIP,
        ip: (...args) => ip('-n', netns, ...args),
        async forwardOut(port) {
          await serveOut(port);
          await agent.command(`out ${port}`);
        },
        forwardIn: (port) => rootCommand(`in ${port} ${name}`),
        dial(to) {
          return new Promise((ok, fail) => {
            const s = connect({ path: join(dir, `${name}.dial.sock`), allowHalfOpen: true });
            let buf = Buffer.alloc(0);
            const onData = (d: Buffer) => {
              buf = Buffer.concat([buf, d]);
              const nl = buf.indexOf(0x0a);
              if (nl < 0) return;
              s.off('data', onData);
              const line = buf.subarray(0, nl).toString('utf8');
              if (line !== 'ok') {
                s.destroy();
                const [, code, ...msg] = line.split(' ');
                fail(Object.assign(new Error(`${to.host}:${to.port} from ${name}: ${msg.join(' ') || line}`), { code }));
                return;
              }
              s.pause();
              if (nl + 1 < buf.length) s.unshift(buf.subarray(nl + 1));
              ok(s);
            };
            s.on('data', onData);
            s.once('error', fail);
            s.write(`${JSON.stringify(to)}\n`);
          });
        },
        async httpGet(h, port, path = '/', localAddress) {
          const sock = await host.dial({ host: h, port, localAddress });
          return new Promise((ok, fail) => {
            // No `agent`: with one (even `agent: false`), node:http would open its own connection from this namespace.
            const req = request({ host: h, port, path, createConnection: () => sock }, (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (body += c));
              res.on('end', () => ok({ status: res.statusCode ?? 0, body }));
            });
            req.on('error', fail);
            // dial() hands the socket over paused; node:http listens on it by now.
            req.on('socket', (s) => s.resume());
            req.end();
          });
        },
      };
      return host;
    },
    async dispose() {
      for (const { proc } of agents) {
        if (proc.exitCode !== null || proc.signalCode !== null) continue;
        const exited = new Promise((r) => proc.once('exit', r));
        proc.stdin?.end();
        proc.kill('SIGTERM');
        await exited;
      }
      for (const ns of namespaces) await ipQuiet('netns', 'del', ns);
      for (const l of rootLinks.reverse()) await ipQuiet('link', 'del', l);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return network;
}
