import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import {
  API_VERSION, providerError, type ContainerSpec, type ImagePullOptions, type PodContext, type Provider,
  type ProviderContext, type PulledImage, type RunningContainer,
} from '@nodelet/plugin-api/v1';
import { startJsContainer } from './js-container.ts';

/** Layer media types of a JavaScript module artifact, in preference order (RFC 9239 first). */
export const JS_LAYER_TYPES = ['text/javascript', 'application/javascript'] as const;

/** Options of {@link JsProvider}. */
export interface JsProviderOptions {
  /** V8 old-generation limit of each worker when the container sets no memory limit (MiB). */
  readonly heapLimitMb?: number;
}

/**
 * The `js` provider: an image is an OCI artifact whose layer is one ES module
 * (`text/javascript`); each container runs it in its own worker thread with
 * the container's env and argv (`process.argv = [node, ...argv]`), and a
 * `nodelet` global mapping volume mount paths to host paths.
 *
 * Isolation is a thread, not a sandbox: a module can use every Node.js API
 * the host process can. Run only code you trust (see README.md).
 */
export class JsProvider implements Provider {
  readonly name = 'js';
  readonly apiVersion = API_VERSION;
  readonly handlers = ['js'];
  readonly architecture = 'javascript';
  readonly os = 'node';
  readonly runtimeVersion = `nodelet-js://${process.versions.node}`;

  readonly #running = new Map<string, RunningContainer>();
  #ctx?: ProviderContext;
  #modules = '';

  constructor(private readonly opts: JsProviderOptions = {}) {}

  async init(ctx: ProviderContext): Promise<void> {
    this.#ctx = ctx;
    this.#modules = join(ctx.rootDir, 'modules');
    mkdirSync(this.#modules, { recursive: true, mode: 0o750 });
  }

  /** Asks core's image service for the image's JavaScript layer. */
  pullImage(image: string, opts: ImagePullOptions, ctx: PodContext): Promise<PulledImage> {
    if (!this.#ctx) return Promise.reject(providerError('Unavailable', 'the js provider was not initialised'));
    return this.#ctx.images.pull(image, { ...opts, acceptLayerTypes: JS_LAYER_TYPES, signal: ctx.signal });
  }

  async startContainer(spec: ContainerSpec, ctx: PodContext): Promise<RunningContainer> {
    if (!this.#ctx) throw providerError('Unavailable', 'the js provider was not initialised');
    if (this.#running.has(spec.id)) throw providerError('InvalidArgument', `container id ${spec.id} is already running`);
    if (spec.workingDir !== undefined) ctx.log.debug({ container: spec.name }, 'workingDir is ignored: worker threads share the host working directory');
    const running = startJsContainer(spec, this.modulePath(spec.image), ctx.log, this.opts.heapLimitMb);
    this.#running.set(spec.id, running);
    void running.exit.then(() => this.#running.delete(spec.id));
    return running;
  }

  /** Stops every running container at once. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.#running.values()].map((r) => r.stop(0)));
  }

  /** Containers currently running. */
  get runningCount(): number {
    return this.#running.size;
  }

  /** The module as a `.mjs` file named by its digest (ESM needs the extension), copied once. */
  private modulePath(image: PulledImage): string {
    const hex = /^sha256:([0-9a-f]{64})$/.exec(image.digest)?.[1];
    if (!hex) throw providerError('InvalidImage', `image ${image.image} has no sha256 digest`);
    const path = join(this.#modules, `${hex}.mjs`);
    if (!existsSync(path)) {
      const tmp = `${path}.${process.pid}.tmp`;
      copyFileSync(image.path, tmp);
      renameSync(tmp, path);
    }
    return path;
  }
}
