/**
 * An error answer from a registry, carrying its reason: the HTTP status and the
 * first entry of the distribution error body (`{"errors":[{"code","message"}]}`).
 * The message reads like docker's: `unauthorized: authentication required`,
 * `manifest unknown`, or `unexpected status 502 Bad Gateway` when there is no body.
 */
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

/** Reads a failed response (consuming its body) into a {@link RegistryError}. */
export async function registryErrorFrom(res: Response, what: string): Promise<RegistryError> {
  let body: ErrorBody | undefined;
  try {
    const text = await res.text();
    body = text ? (JSON.parse(text) as ErrorBody) : undefined;
  } catch {
    body = undefined;
  }
  const first = Array.isArray(body?.errors) ? body.errors[0] : undefined;
  const code = typeof first?.code === 'string' ? first.code : undefined;
  const message = typeof first?.message === 'string' ? first.message : undefined;
  const text = reason(code, message) ?? `unexpected status ${res.status} ${res.statusText}`.trim();
  return new RegistryError(res.status, code, `${text} (${what}: HTTP ${res.status})`);
}
