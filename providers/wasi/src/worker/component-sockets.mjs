// `wasi:sockets` (0.2) for components run through jco's bindings (component-worker.mjs):
// preview2-shim's sockets — which run their I/O in the shim's own thread and would reach any
// address — confined the way nodelet confines a module's network:
//
//   create-tcp-socket / create-udp-socket / accept ── a descriptor of the container's budget and of
//                                                    the node's (new-socket-limit beyond either),
//                                                    given back when the guest drops the socket
//   start-bind(addr)      ── only the pod's IP (127.0.0.1 without one); the unspecified address
//                            (0.0.0.0, ::) is bound as the pod's IP; the port must be 0 or a
//                            declared containerPort of that protocol: else access-denied
//   start-connect(addr)   ── the pod's allow-list (`tcp://addr:port`): access-denied outside it;
//                            then the node's Service resolver: a ClusterIP:port connects to a ready
//                            endpoint (none: connection-refused at once, as kube-proxy's REJECT)
//   udp stream(remote) / send(datagrams) ── the allow-list (`udp://addr:port`) for each destination
//   resolve-addresses(name) ── cluster names (`web`, `web.ns`, `web.ns.svc.cluster.local`, per the
//                            pod's search path) answer the Service's address; other names go to
//                            the node's resolver; a cluster name without a Service: name-unresolvable
//
// The shim's classes are edited in place (their methods wrapped on the prototype), as
// component-worker.mjs does for the filesystem: one thread runs one component, so the shim's
// module state is this container's. Errors are the WIT error-code names jco lowers from a thrown
// string. Plain JavaScript, typed with JSDoc.
import { isIP } from 'node:net';
import { allowsDestination } from '../outbound-hosts.mjs';
/** @import { RouteClient } from './service-route.mjs' */
/** @import { OutboundPolicy } from '../outbound-hosts.mjs' */
/** @import { SocketConfinement } from '../worker-protocol.ts' */

/**
 * A WASI socket address as jco lifts it.
 * @typedef {{ tag: 'ipv4', val: { port: number, address: number[] } } | { tag: 'ipv6', val: { port: number, flowInfo: number, address: number[], scopeId: number } }} SocketAddress
 * @typedef {(this: any, ...args: any[]) => any} Method
 * @typedef {{ prototype: Record<string | symbol, Method> }} ShimClass
 * @typedef {{
 *   tcp: { TcpSocket: ShimClass }, tcpCreateSocket: { createTcpSocket(family: string): object },
 *   udp: { UdpSocket: ShimClass, OutgoingDatagramStream: ShimClass }, udpCreateSocket: { createUdpSocket(family: string): object },
 *   ipNameLookup: { resolveAddresses(network: object, name: string): object }, network: object, instanceNetwork: object,
 * }} ShimSockets
 */

const symbolDispose = Symbol.dispose || Symbol.for('dispose');

/** The text of a socket address's IP (IPv6 in its shortest form). @param {SocketAddress} a */
export function addressText(a) {
  if (a.tag === 'ipv4') return a.val.address.join('.');
  return new URL(`http://[${a.val.address.map((n) => n.toString(16)).join(':')}]`).hostname.slice(1, -1);
}

/** `ip` (IPv4 or IPv6 text) and `port` as a socket address. @param {string} ip @param {number} port @returns {SocketAddress} */
export function socketAddress(ip, port) {
  if (isIP(ip) === 4) return { tag: 'ipv4', val: { port, address: ip.split('.').map(Number) } };
  const [head = '', tail = ''] = ip.split('::');
  const parts = (/** @type {string} */ s) => (s === '' ? [] : s.split(':').map((h) => parseInt(h, 16)));
  const h = parts(head);
  const t = parts(tail);
  const address = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill(0), ...t] : h;
  return { tag: 'ipv6', val: { port, flowInfo: 0, address, scopeId: 0 } };
}

/** @param {SocketAddress} a */
const unspecified = (a) => a.val.address.every((n) => n === 0);

/** Counts sockets against the container's and the node's descriptor budgets. */
export class SocketBudget {
  #held = 0;
  /** @param {SocketConfinement['fdBudget']} budget */
  constructor(budget) {
    this.max = budget?.max ?? Infinity;
    this.nodeMax = budget?.nodeMax ?? Infinity;
    this.node = budget ? new Int32Array(budget.node) : undefined;
  }
  /** Takes one descriptor; false when the container or the node has none left. */
  take() {
    if (this.#held >= this.max) return false;
    if (this.node && Atomics.add(this.node, 0, 1) >= this.nodeMax) {
      Atomics.sub(this.node, 0, 1);
      return false;
    }
    this.#held++;
    return true;
  }
  give() {
    if (this.#held === 0) return;
    this.#held--;
    if (this.node) Atomics.sub(this.node, 0, 1);
  }
  get held() {
    return this.#held;
  }
}

/**
 * Confines `shim`'s sockets (see the module comment) and returns them as jco's imports.
 * @param {ShimSockets} shim
 * @param {{ confinement: SocketConfinement, policy?: OutboundPolicy, routes?: Pick<RouteClient, 'routeSync'>, denied?: (what: string) => void }} opts
 *   denied: told of each destination the allow-list refused (a line in the container's log)
 * @returns {Record<string, unknown>} by interface, as jco names them
 */
export function confinedSockets(shim, { confinement, policy, routes, denied = () => {} }) {
  const budget = new SocketBudget(confinement.fdBudget);
  /** Each connection's output stream (its shutdown(send) ends it). @type {WeakMap<object, Record<symbol, () => void>>} */
  const outputs = new WeakMap();
  /** Sockets counted in the budget, given back once when dropped. @type {WeakSet<object>} */
  const counted = new WeakSet();
  /** @param {object} s */
  const count = (s) => {
    counted.add(s);
    return s;
  };

  /** @param {ShimClass} cls @param {string | symbol} name @param {(orig: Method) => Method} wrap */
  const patch = (cls, name, wrap) => {
    const orig = cls.prototype[name];
    if (typeof orig !== 'function') throw new Error(`preview2-shim has no ${String(name)} to confine`);
    cls.prototype[name] = wrap(orig);
  };

  /**
   * The address a bind goes to, or access-denied.
   * @param {SocketAddress} a @param {readonly number[]} ports
   * @returns {SocketAddress}
   */
  const bindAddress = (a, ports) => {
    const port = a.val.port;
    if (port !== 0 && !ports.includes(port)) throw 'access-denied';
    const host = confinement.bindHost;
    const family = isIP(host) === 4 ? 'ipv4' : 'ipv6';
    if (unspecified(a)) {
      if (a.tag !== family) throw 'access-denied';
      return socketAddress(host, port);
    }
    if (addressText(a) !== addressText(socketAddress(host, 0))) throw 'access-denied';
    return a;
  };

  /** @param {'tcp' | 'udp'} scheme @param {SocketAddress} a */
  const checkAllowed = (scheme, a) => {
    const host = addressText(a);
    if (allowsDestination(policy, { scheme, host, port: a.val.port })) return;
    denied(`${scheme}://${a.tag === 'ipv6' ? `[${host}]` : host}:${a.val.port}`);
    throw 'access-denied';
  };

  const { TcpSocket } = shim.tcp;
  const { UdpSocket, OutgoingDatagramStream } = shim.udp;
  for (const cls of [TcpSocket, UdpSocket])
    patch(
      cls,
      symbolDispose,
      (orig) =>
        function () {
          if (counted.has(this)) {
            counted.delete(this);
            budget.give();
          }
          return orig.call(this);
        },
    );
  patch(
    TcpSocket,
    'startBind',
    (orig) =>
      function (network, local) {
        return orig.call(this, network, bindAddress(local, confinement.tcpPorts));
      },
  );
  patch(
    UdpSocket,
    'startBind',
    (orig) =>
      function (network, local) {
        return orig.call(this, network, bindAddress(local, confinement.udpPorts));
      },
  );
  patch(
    TcpSocket,
    'startConnect',
    (orig) =>
      function (network, /** @type {SocketAddress} */ remote) {
        checkAllowed('tcp', remote);
        let target = remote;
        if (routes && !unspecified(remote) && remote.val.port !== 0) {
          const r = routes.routeSync(addressText(remote), remote.val.port);
          switch (r.kind) {
            case 'connect':
              if (isIP(r.host) === 0) throw 'remote-unreachable';
              if (r.host !== addressText(remote) || r.port !== remote.val.port) {
                target = socketAddress(r.host, r.port);
                // A Service of the other family cannot be reached from this socket.
                if (target.tag !== remote.tag) throw 'remote-unreachable';
              }
              break;
            case 'refused':
              throw 'connection-refused';
            case 'unavailable':
              throw 'remote-unreachable';
            case 'not-found':
              throw 'name-unresolvable';
            default:
              throw 'unknown';
          }
        }
        return orig.call(this, network, target);
      },
  );
  patch(
    TcpSocket,
    'accept',
    (orig) =>
      function () {
        if (!budget.take()) throw 'new-socket-limit';
        let out;
        try {
          out = orig.call(this);
        } catch (e) {
          budget.give();
          throw e;
        }
        count(out[0]);
        outputs.set(out[0], out[2]);
        return out;
      },
  );
  patch(
    TcpSocket,
    'finishConnect',
    (orig) =>
      function () {
        const out = orig.call(this);
        outputs.set(this, out[1]);
        return out;
      },
  );
  // The shim's shutdown destroys the connection whatever the type; `send` is a half-close here
  // (the output stream ends: the peer reads its end, and the socket still reads what it answers),
  // `receive` alone changes nothing, `both` is the shim's.
  patch(
    TcpSocket,
    'shutdown',
    (orig) =>
      function (/** @type {string} */ how) {
        if (how === 'both') return orig.call(this, how);
        if (how === 'send') outputs.get(this)?.[symbolDispose]?.();
        return undefined;
      },
  );
  patch(
    UdpSocket,
    'stream',
    (orig) =>
      function (/** @type {SocketAddress | undefined} */ remote) {
        if (remote) checkAllowed('udp', remote);
        return orig.call(this, remote);
      },
  );
  patch(
    OutgoingDatagramStream,
    'send',
    (orig) =>
      function (/** @type {Array<{ remoteAddress?: SocketAddress }>} */ datagrams) {
        for (const d of datagrams) if (d.remoteAddress) checkAllowed('udp', d.remoteAddress);
        return orig.call(this, datagrams);
      },
  );

  /** @param {(family: string) => object} create */
  const counting = (create) => (/** @type {string} */ family) => {
    if (!budget.take()) throw 'new-socket-limit';
    try {
      return count(create(family));
    } catch (e) {
      budget.give();
      throw e;
    }
  };
  const lookup = shim.ipNameLookup.resolveAddresses;
  /**
   * Cluster names answer the Service's address (the resolver's route for the name, asked with a
   * port no Service has, is the Service's own address); the shim resolves that address, or a name
   * the resolver forwards.
   * @param {object} network @param {string} name
   */
  const resolveAddresses = (network, name) => {
    const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
    if (!routes || isIP(bare) !== 0 || name === '') return lookup(network, name);
    const r = routes.routeSync(name, 1, 'SCTP');
    if (r.kind === 'connect') return lookup(network, r.host);
    if (r.kind === 'not-found') throw 'name-unresolvable';
    if (r.kind === 'error') throw 'temporary-resolver-failure';
    return lookup(network, name);
  };

  return {
    'wasi:sockets/network': shim.network,
    'wasi:sockets/instance-network': shim.instanceNetwork,
    'wasi:sockets/tcp': shim.tcp,
    'wasi:sockets/tcp-create-socket': { createTcpSocket: counting(shim.tcpCreateSocket.createTcpSocket) },
    'wasi:sockets/udp': shim.udp,
    'wasi:sockets/udp-create-socket': { createUdpSocket: counting(shim.udpCreateSocket.createUdpSocket) },
    'wasi:sockets/ip-name-lookup': { ...shim.ipNameLookup, resolveAddresses },
  };
}
