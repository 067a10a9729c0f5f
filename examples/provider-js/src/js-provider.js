import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSION, providerError } from '@nodelet/plugin-api/v1';
import { startJsContainer } from './js-container.js';

/**
 * @typedef {import('@nodelet/plugin-api/v1').Provider} Provider
 * @typedef {import('@nodelet/plugin-api/v1').ContainerSpec} ContainerSpec
 * @typedef {import('@nodelet/plugin-api/v1').ImagePullOptions} ImagePullOptions
 * @typedef {import('@nodelet/plugin-api/v1').PodContext} PodContext
 * @typedef {import('@nodelet/plugin-api/v1').ProviderContext} ProviderContext
 * @typedef {import('@nodelet/plugin-api/v1').PulledImage} PulledImage
 * @typedef {import('@nodelet/plugin-api/v1').RunningContainer} RunningContainer
 */

/** Layer media types of a JavaScript module artifact, in preference order (RFC 9239 first). */
export const JS_LAYER_TYPES = /** @type {const} */ (['text/javascript', 'application/javascript']);

/**
 * Options of {@link JsProvider}.
 * @typedef {object} JsProviderOptions
 * @property {number} [heapLimitMb] V8 old-generation limit of each worker when the container sets no memory limit (MiB).
 */

/**
 * The `js` provider: an image is an OCI artifact whose layer is one ES module
 * (`text/javascript`); each container runs it in its own worker thread with
 * the container's env and argv (`process.argv = [node, ...argv]`), and a
 * `nodelet` global mapping volume mount paths to host paths.
 *
 * Isolation is a thread, not a sandbox: a module can use every Node.js API
 * the host process can. Run only code you trust (see README.md).
 * @implements {Provider}
 */
export class JsProvider {
  name = 'js';
  apiVersion = API_VERSION;
  // Its RuntimeClass handler (`js`) is declared once, in package.json (nodelet.handlers).
  architecture = 'javascript';
  os = 'node';
  runtimeVersion = `nodelet-js://${process.versions.node}`;

  /** @type {Map<string, RunningContainer>} */
  #running = new Map();
  /** @type {ProviderContext | undefined} */
  #ctx;
  #modules = '';
  /** @type {JsProviderOptions} */
  #opts;

  /** @param {JsProviderOptions} [opts] */
  constructor(opts = {}) {
    this.#opts = opts;
  }

  /** @param {ProviderContext} ctx */
  async init(ctx) {
    this.#ctx = ctx;
    this.#modules = join(ctx.rootDir, 'modules');
    mkdirSync(this.#modules, { recursive: true, mode: 0o750 });
  }

  /**
   * Asks core's image service for the image's JavaScript layer.
   * @param {string} image @param {ImagePullOptions} opts @param {PodContext} ctx
   * @returns {Promise<PulledImage>}
   */
  pullImage(image, opts, ctx) {
    if (!this.#ctx) return Promise.reject(providerError('Unavailable', 'the js provider was not initialised'));
    return this.#ctx.images.pull(image, { ...opts, acceptLayerTypes: JS_LAYER_TYPES, signal: ctx.signal });
  }

  /** @param {ContainerSpec} spec @param {PodContext} ctx @returns {Promise<RunningContainer>} */
  async startContainer(spec, ctx) {
    if (!this.#ctx) throw providerError('Unavailable', 'the js provider was not initialised');
    if (this.#running.has(spec.id)) throw providerError('InvalidArgument', `container id ${spec.id} is already running`);
    if (spec.workingDir !== undefined) ctx.log.debug({ container: spec.name }, 'workingDir is ignored: worker threads share the host working directory');
    const running = startJsContainer(spec, this.#modulePath(spec.image), ctx.log, this.#opts.heapLimitMb);
    this.#running.set(spec.id, running);
    void running.exit.then(() => this.#running.delete(spec.id));
    return running;
  }

  /** Stops every running container at once. */
  async shutdown() {
    await Promise.all([...this.#running.values()].map((r) => r.stop(0)));
  }

  /** Containers currently running. */
  get runningCount() {
    return this.#running.size;
  }

  /**
   * The module as a `.mjs` file named by its digest (ESM needs the extension), copied once.
   * @param {PulledImage} image
   */
  #modulePath(image) {
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
