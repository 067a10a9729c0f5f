/**
 * The provider's side of one connection to the WASI runtime process: sends
 * requests (protocol.ts), matches their responses, hands notifications and
 * the connection's end to the provider, and answers the runtime's questions
 * (`ask` lines, protocol 1.3: where a container's connection goes) with `onAsk`.
 */
import { connect, type Socket } from 'node:net';
import { providerError } from '@nodelet/plugin-api/v1';
import type { ServiceRoute } from '@nodelet/plugin-api/v1';
import { PROTOCOL_VERSION, lineReader, type AnswerLine, type AskLine, type NoteLine, type Op, type Requests, type ResponseLine } from './protocol.ts';

/** Answers a runtime's question (a route); a throw answers an error. */
export type AskHandler = (ask: AskLine) => ServiceRoute;

/** An open, greeted connection to the runtime. */
export class RuntimeConnection {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private closedOnPurpose = false;
  /** The runtime's pid and version, from the handshake. */
  hello?: Requests['hello']['result'];

  private constructor(
    private readonly sock: Socket,
    private readonly onNote: (n: NoteLine) => void,
    private readonly onLost: () => void,
    private readonly onAsk?: AskHandler,
  ) {
    sock.on(
      'data',
      lineReader(
        (v) => this.receive(v as ResponseLine | NoteLine | AskLine),
        () => undefined,
      ),
    );
    sock.on('error', () => undefined);
    sock.on('close', () => {
      for (const p of this.pending.values()) p.reject(providerError('Unavailable', 'the wasi runtime connection closed'));
      this.pending.clear();
      if (!this.closedOnPurpose) this.onLost();
    });
  }

  /**
   * Connects to the runtime at `socketPath` and says hello; rejects when no
   * runtime answers there (ENOENT, ECONNREFUSED; ECONNRESET when the connection
   * closed before the answer) or it speaks another version.
   */
  static async open(socketPath: string, onNote: (n: NoteLine) => void, onLost: () => void, onAsk?: AskHandler): Promise<RuntimeConnection> {
    const sock = await new Promise<Socket>((resolve, reject) => {
      const s = connect(socketPath);
      s.once('connect', () => {
        s.off('error', reject);
        resolve(s);
      });
      s.once('error', reject);
    });
    let greeted = false;
    const conn = new RuntimeConnection(
      sock,
      onNote,
      () => {
        if (greeted) onLost();
      },
      onAsk,
    );
    try {
      conn.hello = await conn.request('hello', { version: PROTOCOL_VERSION, ...(onAsk ? { routes: true } : {}) });
    } catch (e) {
      const unanswered = sock.destroyed && !conn.closedOnPurpose;
      conn.close();
      // A runtime killed a moment ago can still accept a connection (its listening
      // socket closes last) and then drop it: that is no runtime answering, not a refusal.
      if (unanswered) throw Object.assign(new Error('the wasi runtime closed the connection before answering'), { code: 'ECONNRESET' });
      throw e;
    }
    greeted = true;
    return conn;
  }

  /** Sends `op` and resolves with its result (a branded provider error on failure). */
  request<K extends Op>(op: K, args: Requests[K]['args']): Promise<Requests[K]['result']> {
    if (this.sock.destroyed) return Promise.reject(providerError('Unavailable', 'the wasi runtime connection is closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.sock.write(`${JSON.stringify({ id, op, ...args })}\n`);
    });
  }

  private answer(ask: AskLine): void {
    let line: AnswerLine;
    try {
      if (!this.onAsk || ask.op !== 'route') throw new Error(`this client answers no ${String(ask.op)} questions`);
      line = { answer: ask.ask, ok: true, result: this.onAsk(ask) };
    } catch (e) {
      line = { answer: ask.ask, ok: false, error: { code: String((e as { code?: unknown }).code ?? 'Internal'), message: (e as Error).message } };
    }
    if (!this.sock.destroyed) this.sock.write(`${JSON.stringify(line)}\n`);
  }

  /** Closes the connection without telling the provider the runtime was lost. */
  close(): void {
    this.closedOnPurpose = true;
    this.sock.destroy();
  }

  private receive(line: ResponseLine | NoteLine | AskLine): void {
    if ('note' in line) {
      this.onNote(line);
      return;
    }
    if ('ask' in line) {
      this.answer(line);
      return;
    }
    const p = this.pending.get(line.id);
    if (!p) return;
    this.pending.delete(line.id);
    if (line.ok) p.resolve(line.result);
    else p.reject(providerError(line.error.code as 'Internal', line.error.message));
  }
}
