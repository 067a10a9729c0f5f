// `wasi:http/outgoing-handler` for components run through jco's bindings with preview2-shim
// (component-worker.mjs): the shim's handler, asked first where the request connects (the
// node's Service resolver, service-route.mjs). The component calls `handle` synchronously, so
// the question blocks its thread until the provider answers (microseconds in nodelet's process).
//
//   handle(request) ──routeSync(host, port)──► connect elsewhere: the request's authority becomes
//                                              the endpoint's address:port, then the shim sends it
//                                            ► connect as given: the shim sends it unchanged
//                                            ► refused / unavailable / not-found / error: the
//                                              error-code (connection-refused at once, as
//                                              kube-proxy's REJECT; destination-unavailable;
//                                              DNS-error; internal-error)
//
// What the shim allows: it derives the `Host` header from the address it connects to (a guest
// may not set `Host`), so a request sent to a Service carries the endpoint's `address:port` as
// `Host` on this path (nodelet's own host keeps the name); an IPv6 endpoint cannot be written as
// the shim's authority and fails with internal-error. Plain JavaScript, typed with JSDoc.
import { isIP } from 'node:net';
import { allowsDestination, allowsRelative } from '../outbound-hosts.mjs';
import { splitAuthority } from './service-route.mjs';
/** @import { RouteClient } from './service-route.mjs' */
/** @import { OutboundPolicy } from '../outbound-hosts.mjs' */
/** @import { WorkerRoute } from '../worker-protocol.ts' */

/**
 * The part of preview2-shim's `OutgoingRequest` used here.
 * @typedef {{ authority(): string | undefined, setAuthority(a: string | undefined): void, scheme(): { tag: string, val?: string } | undefined }} ShimRequest
 * @typedef {{ handle(request: ShimRequest, options?: unknown): unknown }} ShimOutgoingHandler
 */

/**
 * A wasi:http error-code as jco lowers it (`{ tag, val }`).
 * @typedef {{ tag: string, val?: unknown }} ShimErrorCode
 */

/**
 * The error-code of a route that connects nowhere.
 * @param {Exclude<WorkerRoute, { kind: 'connect' }>} r
 * @returns {ShimErrorCode}
 */
export function shimRouteError(r) {
  switch (r.kind) {
    case 'refused':
      return { tag: 'connection-refused' };
    case 'unavailable':
      return { tag: 'destination-unavailable' };
    case 'not-found':
      return { tag: 'DNS-error', val: { rcode: 'NXDOMAIN', infoCode: undefined } };
    default:
      return { tag: 'internal-error', val: r.message };
  }
}

/**
 * `shim`'s outgoing handler with each request checked against the pod's allow-list (`policy`:
 * `HTTP-request-denied` outside it, as Spin answers) and routed by `routes` (see the module
 * comment); either may be absent.
 * @param {ShimOutgoingHandler} shim
 * @param {Pick<RouteClient, 'routeSync'> | undefined} routes
 * @param {{ policy?: OutboundPolicy, denied?: (url: string) => void }} [opts] denied: told of each refused request
 * @returns {ShimOutgoingHandler}
 */
export function routedOutgoingHandler(shim, routes, { policy, denied = () => {} } = {}) {
  return {
    handle(request, options) {
      const authority = request.authority();
      // The shim's default scheme is https.
      const https = (request.scheme()?.tag ?? 'HTTPS') === 'HTTPS';
      const at = authority ? splitAuthority(authority, https ? 443 : 80) : undefined;
      if (policy) {
        const scheme = https ? 'https' : request.scheme()?.tag === 'HTTP' ? 'http' : String(request.scheme()?.val ?? '').toLowerCase();
        // No authority: a request to the app itself (Spin's relative URL), allowed by `self` entries.
        const refused = at
          ? !allowsDestination(policy, { scheme, host: at.host, port: at.port })
          : authority !== undefined || !allowsRelative(policy, [scheme]);
        if (refused) {
          denied(`${scheme}://${authority ?? ''}`);
          return { tag: 'err', val: { tag: 'HTTP-request-denied' } };
        }
      }
      // Nothing to route (no authority, one the shim refuses anyway): the shim answers as it does.
      if (!at || !routes) return shim.handle(request, options);
      const r = routes.routeSync(at.host, at.port);
      if (r.kind !== 'connect') return { tag: 'err', val: shimRouteError(r) };
      if (r.host !== at.host || r.port !== at.port) {
        if (isIP(r.host) === 6)
          return { tag: 'err', val: { tag: 'internal-error', val: `endpoint ${r.host} is IPv6, which this component's HTTP client cannot address` } };
        request.setAuthority(`${r.host}:${r.port}`);
      }
      return shim.handle(request, options);
    },
  };
}
