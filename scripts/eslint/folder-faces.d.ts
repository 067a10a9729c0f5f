/** Types of folder-faces.js (the local ESLint plugin), for the tests that load it. */
import type { ESLint, Rule } from 'eslint';

/** The `core/<area>` folder that `file` belongs to, or undefined. */
export function areaOf(root: string, file: string): string | undefined;
/** The rule `nodelet/folder-faces`. */
export const folderFaces: Rule.RuleModule;
/** The local plugin carrying the rule. */
declare const plugin: ESLint.Plugin;
export default plugin;
