/**
 * @nodelet/provider-js: runs JavaScript ES modules as containers, one worker
 * thread per container. The host loads this entry and calls the default export.
 *
 * Plain JavaScript (types in JSDoc): a drop-in provider needs no TypeScript
 * loader or build step.
 */
import { JsProvider } from './js-provider.js';

export { JsProvider, JS_LAYER_TYPES } from './js-provider.js';
export { KILLED_EXIT_CODE, TERMINATED_EXIT_CODE } from './js-container.js';

/**
 * Creates the `js` provider.
 * @param {import('./js-provider.js').JsProviderOptions} [opts]
 * @returns {import('@nodelet/plugin-api/v1').Provider}
 */
export function createProvider(opts = {}) {
  return new JsProvider(opts);
}

export default createProvider;
