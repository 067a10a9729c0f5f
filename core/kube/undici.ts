/**
 * The parts of undici nodelet uses (`Agent`, `ProxyAgent`, `request`, the redirect interceptor), loaded from
 * undici's own lib/ files instead of its index.js.
 *
 * Why: undici's index.js loads the whole package at once (fetch, WebSocket,
 * EventSource, the cache interceptors and stores, the mock agents…), about 1.3 MB
 * of source kept in the heap of every node, while nodelet only dispatches requests
 * through an `Agent` (the apiserver transport, probes and hooks) and, when a
 * kubeconfig names a proxy, a `ProxyAgent`. undici has no `exports` map, so its
 * lib/ files are reachable by path; what index.js wires up beyond loading them is
 * done here too:
 * - `Object.assign(Dispatcher.prototype, api)`: `dispatcher.request()` (and
 *   stream/pipeline/upgrade/connect) are lib/api's functions that index.js copies
 *   onto every dispatcher's prototype;
 * - `request(url, opts)`: index.js's wrapper, which turns a URL into the
 *   `origin`/`path` of `dispatcher.request` (here only with `opts.dispatcher`,
 *   the one way nodelet calls it).
 * Each is loaded on its first use, not when this module is: an idle node talks to
 * its apiserver over node:http2 (`h2-connection.ts`), and undici comes in with the
 * first probe, hook, pull, proxy or HTTP/1.1 apiserver.
 * The types are undici's own (index.d.ts), imported as types only.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const load = createRequire(import.meta.url);

interface Loaded {
  readonly Agent: typeof Undici.Agent;
  readonly parseURL: (url: string | URL) => URL;
}
let loaded: Loaded | undefined;

/** undici's dispatcher base with the request API on it, and `Agent`, loaded on the first call. */
function undici(): Loaded {
  if (loaded) return loaded;
  const Dispatcher = load('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
  Object.assign(Dispatcher.prototype, load('undici/lib/api/index.js'));
  loaded = {
    Agent: load('undici/lib/dispatcher/agent.js') as typeof Undici.Agent,
    parseURL: (load('undici/lib/core/util.js') as { parseURL(url: string | URL): URL }).parseURL,
  };
  return loaded;
}

/** undici's `Agent` (lib/dispatcher/agent.js). */
export type Agent = Undici.Agent;

/** A new undici `Agent` (lib/dispatcher/agent.js). */
export function newAgent(options?: Undici.Agent.Options): Undici.Agent {
  return new (undici().Agent)(options);
}

/** undici's redirect interceptor (`interceptors.redirect`, lib/interceptor/redirect.js), for `agent.compose(...)`. */
export function redirectInterceptor(options: Parameters<typeof Undici.interceptors.redirect>[0]): Undici.Dispatcher.DispatcherComposeInterceptor {
  undici();
  return (load('undici/lib/interceptor/redirect.js') as typeof Undici.interceptors.redirect)(options);
}

/** A new undici `ProxyAgent` (lib/dispatcher/proxy-agent.js): most kubeconfigs name no proxy. */
export function newProxyAgent(options: Undici.ProxyAgent.Options): Undici.ProxyAgent {
  undici();
  const ProxyAgent = load('undici/lib/dispatcher/proxy-agent.js') as typeof Undici.ProxyAgent;
  return new ProxyAgent(options);
}

/** Options of {@link request}: undici's, with the dispatcher required. */
export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method?: Undici.Dispatcher.HttpMethod;
  dispatcher: Undici.Dispatcher;
};

/** undici's `request(url, opts)` (index.js's `makeDispatcher(api.request)`) for a request through `opts.dispatcher`. */
export function request(url: string | URL, opts: RequestOptions): Promise<Undici.Dispatcher.ResponseData> {
  const u = undici().parseURL(url);
  const { dispatcher, ...rest } = opts;
  return dispatcher.request({
    ...rest,
    origin: u.origin,
    path: u.search ? `${u.pathname}${u.search}` : u.pathname,
    method: opts.method ?? (opts.body ? 'PUT' : 'GET'),
  });
}
