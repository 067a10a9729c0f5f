/**
 * An error answer from a registry, carrying its reason: the HTTP status and the
 * first entry of the distribution error body (`{"errors":[{"code","message"}]}`).
 * The message reads like docker's: `unauthorized: authentication required`,
 * `manifest unknown`, or `unexpected status 502 Bad Gateway` when there is no body.
 */
import { MAX_ERROR_BODY_BYTES, readCapped } from './body-limits.ts';
import { statusText, type RegistryResponse } from './registry-transport.ts';

export class RegistryError extends Error {
  override readonly name = 'RegistryError';

  constructor(
    /** HTTP status of the answer. */
    readonly status: number,
    /** The registry's error code (`UNAUTHORIZED`, `MANIFEST_UNKNOWN`, ...), if it sent one. */
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }

  /** True for 401/403: the credential (or its absence) was refused. */
  get unauthorized(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

interface ErrorBody {
  errors?: { code?: unknown; message?: unknown }[];
}

/** Formats `code: message`, dropping the code when the message only repeats it. */
function reason(code: string | undefined, message: string | undefined): string | undefined {
  const spoken = code?.toLowerCase().replace(/_/g, ' ');
  if (message && spoken && message.toLowerCase() !== spoken) return `${spoken}: ${message}`;
  return message || spoken;
}

/** Longest registry-provided reason kept in a {@link RegistryError}'s message. */
const MAX_REASON_LENGTH = 512;

/** Cuts `text` to `max` characters, marking the cut with ` ...` like upstream's status messages. */
export function truncateMessage(text: string, max: number): string {
  const suffix = ' ...';
  return text.length <= max ? text : text.slice(0, max - suffix.length) + suffix;
}

/**
 * Reads a failed response into a {@link RegistryError}: at most 64000 bytes of its body
 * (the rest is dropped, as containerd does) and at most {@link MAX_REASON_LENGTH}
 * characters of the registry's reason, so a hostile error body cannot grow a pod status.
 */
export async function registryErrorFrom(res: RegistryResponse, what: string): Promise<RegistryError> {
  let body: ErrorBody | undefined;
  try {
    const text = (await readCapped(res.body, MAX_ERROR_BODY_BYTES, 'error body', true)).toString('utf8');
    body = text ? (JSON.parse(text) as ErrorBody) : undefined;
  } catch {
    body = undefined;
  }
  const first = Array.isArray(body?.errors) ? body.errors[0] : undefined;
  const code = typeof first?.code === 'string' ? first.code : undefined;
  const message = typeof first?.message === 'string' ? first.message : undefined;
  const given = reason(code, message);
  const text = given ? truncateMessage(given, MAX_REASON_LENGTH) : `unexpected status ${res.status} ${truncateMessage(statusText(res.status), 100)}`.trim();
  return new RegistryError(res.status, code, `${text} (${what}: HTTP ${res.status})`);
}
