/** Small fakes for the pod controller and worker tests: a provider, a pod setup, a status sink, events and a logger. */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import {
  API_VERSION,
  type ContainerExit,
  type ContainerSpec,
  type Logger,
  type PodContext,
  type Provider,
  type PulledImage,
  type RunningContainer,
} from '../../../plugin-api/v1/index.ts';
import type { PodSetup } from '../../../core/pods/pod-setup.ts';
import type { StatusSink } from '../../../core/pods/pod-controller.ts';
import type { Events, Regarding } from '../../../core/events/event-recorder.ts';

/** The identity of the fake pod provider `vm` (a `PodProvider` minus its `pods`). */
export const VM_PROVIDER = { name: 'vm', apiVersion: API_VERSION, handlers: ['vm'], architecture: 'amd64', os: 'linux', runtimeVersion: 'vm://1' } as const;

/** A logger that keeps lines in memory. */
export function memoryLogger(lines: string[] = []): Logger {
  const log = (level: string) => (obj: object | string, msg?: string) => {
    lines.push(`${level} ${typeof obj === 'string' ? obj : `${msg ?? ''} ${JSON.stringify(obj)}`}`);
  };
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: () => logger };
  return logger;
}

/** One started container whose end the test decides. */
export class FakeContainer implements RunningContainer {
  readonly startedAt = new Date();
  readonly exit: Promise<ContainerExit>;
  stoppedWith?: number;
  private settle!: (x: ContainerExit) => void;
  done = false;

  constructor(
    readonly id: string,
    readonly spec: ContainerSpec,
    /** Where `stop` records the container's name, in stop order. */
    private readonly stops: string[] = [],
  ) {
    this.exit = new Promise((r) => {
      this.settle = r;
    });
  }

  /** Ends the container with `exitCode`. */
  end(exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error'): void {
    if (this.done) return;
    this.done = true;
    this.settle({ exitCode, reason, finishedAt: new Date() });
  }

  async stop(gracePeriodMs: number): Promise<void> {
    this.stops.push(this.spec.name);
    this.stoppedWith = gracePeriodMs;
    this.end(137, 'Error');
    await this.exit;
  }
}

/** A v1 provider whose pulls and starts the test controls. */
export class FakeProvider implements Provider {
  readonly name = 'fake';
  readonly apiVersion = API_VERSION;
  readonly handlers = ['fake'];
  readonly architecture = 'wasm32-wasi';
  readonly os = 'wasi';
  readonly runtimeVersion = 'fake://1';
  readonly pulls: string[] = [];
  readonly started: FakeContainer[] = [];
  /** Names of the containers stopped through `stop`, in order. */
  readonly stops: string[] = [];
  /** For each start, the containers still running at that moment. */
  readonly runningAtStart: string[][] = [];
  /** Returns an error to make the pull of `image` fail. */
  pullError?: (image: string) => Error | undefined;
  /** Returns an error to make the start of a container fail. */
  startError?: (spec: ContainerSpec) => Error | undefined;
  /** Exit code applied right after start, per container name (absent: keeps running). */
  autoExit: Record<string, number> = {};

  /** Images reported as already present (`cached: true`). */
  readonly present = new Set<string>();
  /** Pull policies asked for, in pull order. */
  readonly pullPolicies: string[] = [];

  async pullImage(image: string, o: { pullPolicy: string }, _ctx: PodContext): Promise<PulledImage> {
    this.pulls.push(image);
    this.pullPolicies.push(o.pullPolicy);
    const e = this.pullError?.(image);
    if (e) throw e;
    return { image, imageID: `${image}@sha256:00`, digest: 'sha256:00', path: '/dev/null', size: 42, cached: this.present.has(image) };
  }

  async startContainer(spec: ContainerSpec, _ctx: PodContext): Promise<RunningContainer> {
    const e = this.startError?.(spec);
    if (e) throw e;
    const c = new FakeContainer(spec.id, spec, this.stops);
    this.runningAtStart.push(this.started.filter((x) => !x.done).map((x) => x.spec.name));
    this.started.push(c);
    const code = this.autoExit[spec.name];
    if (code !== undefined) setImmediate(() => c.end(code));
    return c;
  }

  /** Names of started containers, in start order. */
  names(): string[] {
    return this.started.map((c) => c.spec.name);
  }

  /** The latest instance of container `name`. */
  latest(name: string): FakeContainer {
    const c = [...this.started].reverse().find((x) => x.spec.name === name);
    if (!c) throw new Error(`container ${name} never started`);
    return c;
  }
}

/** A pod setup that prepares nothing and records teardowns. */
export function fakeSetup(): PodSetup & { teardowns: string[]; unmounts: string[]; prepares: number; unmountFailures: number } {
  const s = {
    teardowns: [] as string[],
    unmounts: [] as string[],
    /** How many next unmountVolumes calls fail. */
    unmountFailures: 0,
    prepares: 0,
    async prepare() {
      s.prepares++;
      return new Map();
    },
    async mounts() {
      return [];
    },
    async env() {
      return { A: '1' };
    },
    argv: (c: { name: string }) => [c.name],
    logPath: (_p: V1Pod, c: string, n: number) => `/nonexistent/${c}/${n}.log`,
    async credentials() {
      return [];
    },
    async teardown(p: V1Pod) {
      s.teardowns.push(p.metadata!.uid!);
    },
    async unmountVolumes(p: V1Pod) {
      if (s.unmountFailures > 0) {
        s.unmountFailures--;
        throw new Error('unmount failed');
      }
      s.unmounts.push(p.metadata!.uid!);
    },
    podDir: (p: V1Pod) => `/nonexistent/pods/${p.metadata!.uid}`,
  };
  return s;
}

/** A status sink that keeps every patch (as JSON round-trips, like the API would) and deletions. */
export class FakeSink implements StatusSink {
  readonly patches: { key: string; status: V1PodStatus }[] = [];
  readonly deleted: string[] = [];
  /** `patch <phase>` / `delete` in call order. */
  readonly ops: string[] = [];
  failPatches = 0;

  async patchStatus(pod: V1Pod, status: V1PodStatus): Promise<void> {
    if (this.failPatches > 0) {
      this.failPatches--;
      throw new Error('apiserver unavailable');
    }
    this.patches.push({ key: `${pod.metadata!.namespace}/${pod.metadata!.name}`, status: JSON.parse(JSON.stringify(status)) });
    this.ops.push(`patch ${status.phase}`);
  }

  async deletePod(pod: V1Pod): Promise<void> {
    this.deleted.push(`${pod.metadata!.namespace}/${pod.metadata!.name}`);
    this.ops.push('delete');
  }

  /** Statuses posted for `key`, oldest first. */
  of(key: string): V1PodStatus[] {
    return this.patches.filter((p) => p.key === key).map((p) => p.status);
  }

  /** The latest status of `key`. */
  last(key: string): V1PodStatus | undefined {
    return this.of(key).at(-1);
  }
}

/** Events kept in memory. */
export class FakeEvents implements Events {
  readonly list: { regarding: Regarding; type: string; reason: string; note: string }[] = [];
  emit(regarding: Regarding, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.list.push({ regarding, type, reason, note });
  }
  /** `reason: note` lines. */
  lines(): string[] {
    return this.list.map((e) => `${e.reason}: ${e.note}`);
  }
}
