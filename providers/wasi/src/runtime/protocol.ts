/**
 * The wire protocol between the `wasi` provider (in nodelet) and the WASI
 * runtime process (runtime-main.ts): newline-delimited JSON over a unix socket
 * (`<provider root>/runtime.sock`). Hand-written rather than gRPC: a handful of
 * calls between two processes of the same package, no schema compiler at build
 * time, and a line a person can read with `socat`.
 *
 * The first request on a connection is `hello` with {@link PROTOCOL_VERSION};
 * the runtime answers with its own version and refuses a different major.
 * Requests carry an `id` that their response repeats; notifications (`exit`,
 * `event`) carry none and go to every connected client.
 *
 *   client                         runtime
 *     │ {id,op:'hello',version}  ──►│
 *     │◄── {id,ok:true,result}      │
 *     │ {id,op:'start',spec,podDir}──►│ runs the module, writes its CRI log
 *     │◄── {id,ok:true,result}      │
 *     │◄── {note:'exit',containerId,exit}   (when it ends)
 *     │ {id,op:'stream',kind:'stdin',data} ─►│ (1.1: kubectl attach -i)
 *     │ {id,op:'resize',containerId,limits} ─►│ (1.2: in-place resize)
 *     │◄── {ask,op:'route',host,port,…}     │ (1.3: a container connects out; to a client
 *     │ {answer,ok:true,result}  ──►│        that said `routes` in its hello)
 */
import type {
  ContainerExit,
  ContainerLimits,
  ContainerResizeOutcome,
  ContainerSpec,
  ContainerStats,
  EventType,
  ServiceClient,
  ServiceProtocol,
  ServiceRoute,
  ThreadLoad,
} from '@nodelet/plugin-api/v1';

/** The protocol version; the runtime refuses a client of another major version. */
export const PROTOCOL_VERSION = 1;

/**
 * The minor version: what a runtime of the same major version added, announced in
 * `hello`'s answer (a 1.0 runtime answers none). A client checks it before using
 * an addition, so a newer nodelet still drives an older runtime it re-adopts.
 *  - 1.1: `stream` with kind `stdin-open`/`stdin` forwards an attach session's stdin;
 *    `list` carries each run's `restartCount`; `warm` boots threads ahead of a start; `cancel`
 *    gives up a start in flight.
 *  - 1.2: `resize` changes a running container's limits in place (`resizeContainer`).
 *  - 1.3: a client whose `hello` says `routes: true` is asked (`ask` lines) where containers'
 *    outgoing connections go (the node's Service resolver: nodelet runs no kube-proxy) and
 *    answers with `answer` lines; the runtime asks the last such client that connected.
 */
export const PROTOCOL_MINOR = 3;

/** The socket file under the provider's root dir. */
export const SOCKET_NAME = 'runtime.sock';
/** The pid file of the runtime process under the provider's root dir. */
export const PID_FILE_NAME = 'runtime.pid';
/** The runtime's own log under the provider's root dir (JSON lines, rotated by size: runtime-log.ts). */
export const LOG_FILE_NAME = 'runtime.log';
/** The runtime's stdout and stderr under the provider's root dir: what is not a log line (a crash's stack). */
export const OUT_FILE_NAME = 'runtime.out';

/** A container as the runtime lists it (dates as ISO strings on the wire). */
export interface WireContainer {
  readonly id: string;
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly name: string;
  readonly startedAt: string;
  readonly exit?: WireExit;
  /** The run's `ContainerSpec.restartCount` (protocol 1.1; absent from a 1.0 runtime). */
  readonly restartCount?: number;
}

/** A {@link ContainerExit} on the wire. */
export interface WireExit {
  readonly exitCode: number;
  readonly reason: string;
  readonly message?: string;
  readonly finishedAt: string;
}

/** The requests and what each one answers. */
export interface Requests {
  /** `routes` (1.3): the client answers `route` asks (an older runtime ignores it). */
  hello: { args: { version: number; routes?: boolean }; result: { version: number; minor?: number; pid: number; runtimeVersion: string } };
  /** `podDir`: the pod's directory on the node (its components' key-value stores are kept there); an older client sends none. */
  start: { args: { spec: ContainerSpec; podDir?: string }; result: WireContainer };
  stop: { args: { containerId: string; graceMs: number }; result: null };
  list: { args: Record<string, never>; result: WireContainer[] };
  release: { args: { containerId: string }; result: null };
  stats: { args: { containerId: string }; result: ContainerStats & { timestamp: string } };
  /**
   * 1.1: gives up a `start` still in flight (its pod is being deleted), as the start's
   * `PodContext.signal` does in-process: the start answers an error, the module is unwound.
   */
  cancel: { args: { containerId: string }; result: null };
  /**
   * 1.1: boots the threads a start will take (nodelet sends it at each image pull, as in-process):
   * with `qosClass`, the pod's (`WasiProvider.warm`); without (an older client), the idle pooled
   * workers and the shared threads.
   */
  warm: { args: { qosClass?: ContainerSpec['qosClass'] }; result: null };
  /** The runtime's shared threads and their load (the provider's `threads()` capability). */
  threads: { args: Record<string, never>; result: ThreadLoad[] };
  /**
   * Stream operations of an attach session (1.1): kind `stdin-open` checks that the running
   * container has a stdin (NotFound, or InvalidArgument when it has none); kind `stdin` writes
   * `data` (base64) to it and answers once the pipe took it (the client sends the next chunk
   * then: that is the flow control). Other kinds, and any kind on a 1.0 runtime: NotSupported.
   */
  stream: { args: { containerId: string; kind: string; data?: string }; result: null };
  /**
   * 1.2: the provider's `resizeContainer`: answers once the container's new limits are in force
   * (or were refused: `applied` false), which may wait for the module's next WASI call.
   */
  resize: { args: { containerId: string; limits: ContainerLimits }; result: ContainerResizeOutcome };
}

/** An operation name. */
export type Op = keyof Requests;

/** One request line. */
export type RequestLine = { [K in Op]: { id: number; op: K } & Requests[K]['args'] }[Op];

/** One response line. */
export type ResponseLine = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: { code: string; message: string } };

/** One notification line. */
export type NoteLine =
  { note: 'exit'; containerId: string; exit: WireExit } | { note: 'event'; containerId: string; type: EventType; reason: string; message: string };

/** A question of the runtime to a client (1.3): where a connection of a container of `client`'s pod goes. */
export interface AskLine {
  readonly ask: number;
  readonly op: 'route';
  readonly host: string;
  readonly port: number;
  readonly protocol: ServiceProtocol;
  readonly client: ServiceClient;
}

/** A client's answer to an {@link AskLine}. */
export type AnswerLine = { answer: number; ok: true; result: ServiceRoute } | { answer: number; ok: false; error: { code: string; message: string } };

/** A container exit for the wire. */
export function toWireExit(x: ContainerExit): WireExit {
  return { exitCode: x.exitCode, reason: x.reason, message: x.message, finishedAt: x.finishedAt.toISOString() };
}

/** A container exit from the wire. */
export function fromWireExit(x: WireExit): ContainerExit {
  return { exitCode: x.exitCode, reason: x.reason, message: x.message, finishedAt: new Date(x.finishedAt) };
}

/**
 * Splits a byte stream into lines and parses each as JSON; `onLine` gets each
 * value, `onBad` a line that is not JSON.
 */
export function lineReader(onLine: (value: unknown) => void, onBad: (line: string) => void): (chunk: Buffer) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        onBad(line);
        continue;
      }
      onLine(value);
    }
  };
}
