/**
 * Authorization of kubelet API requests, shaped like upstream's
 * `pkg/kubelet/server/auth.go` so a SubjectAccessReview (Webhook mode) can be
 * plugged in as an {@link Authorizer}:
 *
 * - resource `nodes`, name = the node name, apiVersion `v1`;
 * - verb from the HTTP method: GET→get, POST→create, PUT→update,
 *   PATCH→patch, DELETE→delete (others: empty);
 * - subresource from the path: `/stats`→stats, `/metrics`→metrics,
 *   `/logs`→log, `/spec`→spec, `/checkpoint`→checkpoint, everything else
 *   (containerLogs, exec, attach, portForward, run) →proxy;
 *   `/pods`, `/runningPods`→pods, `/healthz`→healthz, `/configz`→configz,
 *   each with a fallback to proxy (KubeletFineGrainedAuthz, GA in 1.36).
 *
 * A request is allowed if any of its attribute sets is allowed. Denied requests
 * get upstream's 403 text: `Forbidden (user=…, verb=…, resource=…, subresource=…)`.
 * The modes: `Webhook` (webhook-authz.ts) and `AlwaysAllow` ({@link alwaysAllow}).
 */
import type { UserInfo } from './authn.ts';

/** One authorization question, as a SubjectAccessReview's resourceAttributes. */
export interface RequestAttributes {
  readonly user: UserInfo;
  readonly verb: string;
  readonly apiVersion: 'v1';
  readonly resource: 'nodes';
  readonly subresource: string;
  /** The node name. */
  readonly name: string;
  readonly path: string;
}

/** A decision. */
export interface Decision {
  readonly allowed: boolean;
  readonly reason?: string;
}

/**
 * Decides one question (webhook-authz.ts sends a SubjectAccessReview and
 * caches the answer). Rejects when it cannot decide (the server answers 500).
 */
export type Authorizer = (attrs: RequestAttributes) => Decision | Promise<Decision>;

/** `--authorization-mode=AlwaysAllow`: every authenticated caller may do everything. */
export const alwaysAllow: Authorizer = () => ({ allowed: true });

const VERBS: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

const ONLY: Array<[string, string]> = [
  ['/stats', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs', 'log'],
  ['/spec', 'spec'],
  ['/checkpoint', 'checkpoint'],
];
const WITH_PROXY_FALLBACK: Array<[string, string]> = [
  ['/pods', 'pods'],
  ['/runningPods', 'pods'],
  ['/healthz', 'healthz'],
  ['/configz', 'configz'],
];

/** True if `p` is `root` or below it (upstream's isSubpath). */
function isSubpath(p: string, root: string): boolean {
  return p === root || p.startsWith(`${root}/`);
}

/** The subresources to ask about for a path, in order. */
export function subresourcesFor(p: string): string[] {
  for (const [root, sub] of ONLY) if (isSubpath(p, root)) return [sub];
  for (const [root, sub] of WITH_PROXY_FALLBACK) if (isSubpath(p, root)) return [sub, 'proxy'];
  return ['proxy'];
}

/** The attribute sets of a request (one, or two with the proxy fallback). */
export function requestAttributes(user: UserInfo, method: string, p: string, nodeName: string): RequestAttributes[] {
  const verb = VERBS[method.toUpperCase()] ?? '';
  return subresourcesFor(p).map((subresource) => ({
    user,
    verb,
    apiVersion: 'v1',
    resource: 'nodes',
    subresource,
    name: nodeName,
    path: p,
  }));
}

function describe(a: RequestAttributes): string {
  return `(user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
}

/** Why a request may not go on: the HTTP status and upstream's text. */
export interface Refusal {
  readonly status: 403 | 500;
  readonly message: string;
  /** The authorizer's failure, for the log (500 only). */
  readonly cause?: unknown;
}

/**
 * Runs the authorizer over the attribute sets; undefined if allowed, else a
 * 403 `Forbidden (user=…, verb=…, resource=…, subresource=…)` or, when the
 * authorizer failed, a 500 `Authorization error (…)`, as upstream's server.go.
 */
export async function authorize(authorizer: Authorizer, attrs: RequestAttributes[]): Promise<Refusal | undefined> {
  for (const a of attrs) {
    try {
      if ((await authorizer(a)).allowed) return undefined;
    } catch (cause) {
      return { status: 500, message: `Authorization error ${describe(a)}`, cause };
    }
  }
  return { status: 403, message: `Forbidden ${describe(attrs[0]!)}` };
}
