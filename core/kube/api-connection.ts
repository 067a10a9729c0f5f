/**
 * What the API transport asks of a connection to the apiserver: send one exchange and
 * report its answer piece by piece, and close. Two kinds implement it:
 * - `h2-connection.ts`: one HTTP/2 connection over node:http2 (the apiserver's protocol
 *   over TLS, and client-go's), the default for an `https://` server;
 * - {@link undiciConnection}: an undici dispatcher (HTTP/1.1), for an `http://` server,
 *   a server that does not offer h2, and a kubeconfig's `proxy-url`.
 *
 * Timeouts are the connection's, as client-go's transport has them: `timeoutMs` bounds
 * the wait for the status line and each gap in the body; on expiry the exchange fails
 * with a `code` of {@link HEADERS_TIMEOUT} or {@link BODY_TIMEOUT}, and the connection
 * makes sure it is still alive before anything else uses it.
 */
import type { Dispatcher } from 'undici';

/** The code of an error for an answer whose status line did not come within the timeout. */
export const HEADERS_TIMEOUT = 'HEADERS_TIMEOUT';
/** The code of an error for an answer whose body stopped for the timeout. */
export const BODY_TIMEOUT = 'BODY_TIMEOUT';

/** One request. */
export interface ApiExchange {
  readonly path: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs?: number;
}

/**
 * The answer of one exchange: `started` first (with a function that cancels it), then
 * `response` once with the final status, `data` for each piece of the body, and either
 * `end` or `error`, once.
 */
export interface ApiAnswer {
  started(cancel: (reason?: Error) => void): void;
  response(status: number, retryAfter: string | string[] | undefined): void;
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
}

/** A connection (or pool of them) to one apiserver with one set of TLS credentials. */
export interface ApiConnection {
  send(exchange: ApiExchange, answer: ApiAnswer): void;
  /** Closes gracefully: exchanges in flight (watches included) finish first. */
  close(): Promise<void>;
}

/** undici's timeout codes as {@link HEADERS_TIMEOUT} and {@link BODY_TIMEOUT}. */
function undiciError(e: Error): Error {
  const code = (e as { code?: unknown }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return Object.assign(e, { code: HEADERS_TIMEOUT });
  if (code === 'UND_ERR_BODY_TIMEOUT') return Object.assign(e, { code: BODY_TIMEOUT });
  return e;
}

/** An {@link ApiConnection} over an undici dispatcher reaching `origin`. */
export function undiciConnection(dispatcher: Dispatcher, origin: string): ApiConnection {
  return {
    send(ex, answer) {
      const timeouts = ex.timeoutMs === undefined ? {} : { headersTimeout: ex.timeoutMs, bodyTimeout: ex.timeoutMs };
      try {
        dispatcher.dispatch(
          { origin, path: ex.path, method: ex.method as Dispatcher.HttpMethod, headers: ex.headers, body: ex.body, ...timeouts },
          {
            onRequestStart(c) {
              answer.started((reason) => c.abort(reason ?? new Error('request aborted')));
            },
            onResponseStart(_c, status, headers) {
              if (status >= 200) answer.response(status, headers['retry-after']); // 1xx: the final status follows
            },
            onResponseData(_c, chunk) {
              answer.data(chunk);
            },
            onResponseEnd() {
              answer.end();
            },
            onResponseError(_c, e) {
              answer.error(undiciError(e));
            },
          },
        );
      } catch (e) {
        answer.error(e as Error);
      }
    },
    close: () => dispatcher.close().catch(() => undefined),
  };
}
