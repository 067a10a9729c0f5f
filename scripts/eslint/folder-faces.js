/**
 * ESLint rule `nodelet/folder-faces`: each `core/<area>/` shows others only its
 * face, `core/<area>/index.ts`. An import from outside `core/<area>/` into any
 * other file of it (sub-folders such as `core/volumes/csi/` are inner parts of
 * their area) is an error; so is any import of `core/` from a provider
 * (`providers/`, `examples/provider-<name>/`): providers use `@nodelet/plugin-api`
 * only, by its package entry points (`/v1`, the contract, and `/v1/toolkit`),
 * so a relative import of a `plugin-api/` file from a provider is an error too
 * (it would bypass the entries' exports and reach files that are not part of
 * either). Tests may import inner files
 * (unit tests test units), so `test/`, `bench/` and `*.test.ts` are exempt.
 * Inside an area files import their siblings directly: a value import of the
 * area's own index.ts from an inner file is an error (a load-time cycle).
 *
 * Hand-written (about 80 lines) because the stock options do not fit:
 * `no-restricted-imports` matches the import string, and the same inner file
 * is `../volumes/mounts.ts` from one folder and `./mounts.ts` from its own, so
 * "outside the area" cannot be written as a pattern; eslint-plugin-boundaries
 * and eslint-plugin-import-x `no-restricted-paths` need an import resolver
 * plugin for `.ts` specifiers plus one zone per area (19 today, and every new
 * area would need a config edit), while this rule derives the areas from paths.
 */
import path from 'node:path';

/**
 * The `core/<area>` folder (posix, relative to `root`) that `file` belongs to, or undefined.
 * @param {string} root
 * @param {string} file
 */
export function areaOf(root, file) {
  const rel = path.relative(root, file).split(path.sep).join('/');
  const m = /^core\/([^/]+)\//.exec(rel);
  return m ? `core/${m[1]}` : undefined;
}

/**
 * True when `rel` (posix, relative to the repo root) may import any inner file.
 * @param {string} rel
 */
function exempt(rel) {
  return rel.startsWith('test/') || rel.startsWith('bench/') || /\.test\.[cm]?[jt]s$/.test(rel) || rel.includes('/test/');
}

/**
 * True when `rel` (posix, relative to the root) is the face of `area`.
 * @param {string} rel
 * @param {string} area
 */
function isFace(rel, area) {
  return rel === `${area}/index.ts` || rel === `${area}/index.js` || rel === area;
}

/**
 * An import or export node as typescript-eslint's parser gives it (with `importKind`/`exportKind`).
 * @typedef {{ importKind?: string, exportKind?: string, specifiers?: Array<{ importKind?: string, exportKind?: string }> }} ModuleNode
 */

/**
 * True for `import type`, `export type`, and an import whose every name is `type`.
 * @param {ModuleNode} node
 */
function typeOnly(node) {
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const names = node.specifiers ?? [];
  return names.length > 0 && names.every((n) => n.importKind === 'type' || n.exportKind === 'type');
}

/**
 * The rule. Option: `{ root }`, the repo root (defaults to the ESLint cwd).
 * @type {import('eslint').Rule.RuleModule}
 */
export const folderFaces = {
  meta: {
    type: 'problem',
    docs: { description: 'imports into core/<area>/ go through its index.ts; providers import no core/ file and plugin-api by its entry points' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: {
      deep: "'{{spec}}' reaches into {{area}}/'s inner file {{target}}: import from {{area}}/index.ts (add the name to it)",
      own: "'{{spec}}' is {{area}}/'s own face: inner files import their siblings directly (a value import of the face is a cycle)",
      provider: "'{{spec}}': providers use @nodelet/plugin-api/v1 and @nodelet/plugin-api/v1/toolkit only, not core/ ({{target}})",
      providerApi: "'{{spec}}': import {{target}} through its package entry point, @nodelet/plugin-api/v1 or @nodelet/plugin-api/v1/toolkit",
    },
  },
  create(context) {
    const root = context.options[0]?.root ?? context.cwd;
    const file = context.filename;
    const rel = path.relative(root, file).split(path.sep).join('/');
    if (rel.startsWith('..') || exempt(rel)) return {};
    const from = areaOf(root, file);
    const fromProvider = rel.startsWith('providers/') || /^examples\/provider-[^/]+\//.test(rel);
    /**
     * @param {import('eslint').Rule.Node | ModuleNode} node the import or export
     * @param {import('estree').Literal | null | undefined} source its specifier
     */
    function check(node, source) {
      const spec = source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const abs = path.resolve(path.dirname(file), spec);
      const target = path.relative(root, abs).split(path.sep).join('/');
      if (fromProvider && target.startsWith('plugin-api/')) {
        context.report({ node: /** @type {import('estree').Node} */ (source), messageId: 'providerApi', data: { spec, target } });
        return;
      }
      if (!target.startsWith('core/')) return;
      if (fromProvider) {
        context.report({ node: /** @type {import('estree').Node} */ (source), messageId: 'provider', data: { spec, target } });
        return;
      }
      const area = areaOf(root, abs);
      if (!area) return;
      if (area === from) {
        // An inner file loading its own face at run time is a cycle (the face loads the inner files).
        if (isFace(target, area) && !isFace(rel, area) && !typeOnly(/** @type {ModuleNode} */ (node))) {
          context.report({ node: /** @type {import('estree').Node} */ (source), messageId: 'own', data: { spec, area } });
        }
        return;
      }
      if (isFace(target, area)) return;
      context.report({ node: /** @type {import('estree').Node} */ (source), messageId: 'deep', data: { spec, area, target } });
    }
    return {
      ImportDeclaration: (n) => check(n, n.source),
      ExportNamedDeclaration: (n) => n.source && check(n, n.source),
      ExportAllDeclaration: (n) => check(n, n.source),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n, n.source),
      /**
       * A TypeScript `import('...')` type (not an ESTree node): its specifier in `source`, or in
       * `argument` (a TSLiteralType's `literal`, or the Literal itself).
       * @param {ModuleNode & { source?: import('estree').Literal, argument?: { type: string, literal?: import('estree').Literal } }} n
       */
      TSImportType: (n) => {
        // typescript-eslint 8 has `source`; older versions only `argument` (a TSLiteralType).
        const lit = 'source' in n ? n.source : n.argument?.type === 'TSLiteralType' ? n.argument.literal : n.argument;
        if (lit?.type === 'Literal') check(n, /** @type {import('estree').Literal} */ (lit));
      },
    };
  },
};

/** The local plugin that carries the rule. */
export default { meta: { name: 'nodelet' }, rules: { 'folder-faces': folderFaces } };
