/** The face of core/pluginmanager: what other folders may use; everything else in the folder is private to it. */
export { GenericVersion, validateCsiPlugin, validateCsiVersions } from './csi-versions.ts';
export type { PluginHandler } from './plugin-handler.ts';
export { PluginManager } from './plugin-manager.ts';
