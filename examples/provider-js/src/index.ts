/**
 * @nodelet/provider-js: runs JavaScript ES modules as containers, one worker
 * thread per container. The host loads this entry and calls the default export.
 */
import type { Provider } from '@nodelet/plugin-api/v1';
import { JsProvider, type JsProviderOptions } from './js-provider.ts';

export { JsProvider, JS_LAYER_TYPES, type JsProviderOptions } from './js-provider.ts';
export { KILLED_EXIT_CODE, TERMINATED_EXIT_CODE } from './js-container.ts';

/** Creates the `js` provider. */
export function createProvider(opts: JsProviderOptions = {}): Provider {
  return new JsProvider(opts);
}

export default createProvider;
