/**
 * Folder-level import cycles between `core/<area>/` folders. Builds the graph
 * of `core/<area>` -> `core/<area>` edges from the sources (every relative
 * import, export-from, dynamic `import()` and `import('...')` type counts,
 * type-only ones too) and finds its cycles. Used by
 * `test/unit/architecture/folder-cycles.test.ts`.
 *
 * Hand-written: madge and dependency-cruiser report file-level cycles, not
 * folder-level ones, and bring a resolver stack for what is a 60-line scan.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** @typedef {Map<string, Map<string, string>>} FolderGraph area -> imported area -> one example edge */

const SPEC = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * Files under `dir` ending in .ts/.mts/.js/.mjs, tests and .d.ts excluded.
 * @param {string} dir
 * @returns {string[]}
 */
function sources(dir) {
  /** @type {string[]} */
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.(m?ts|m?js)$/.test(e.name) && !/\.d\.ts$|\.test\./.test(e.name)) out.push(p);
  }
  return out;
}

/**
 * Strips comments so that an example import in a doc comment is no edge.
 * @param {string} text
 */
function code(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/**
 * The folder graph of `<root>/core`: a Map from `area` to a Map from the
 * imported area to one example edge (`file -> specifier`).
 * @param {string} root
 * @returns {FolderGraph}
 */
export function folderGraph(root) {
  const core = path.join(root, 'core');
  /** @type {FolderGraph} */
  const graph = new Map();
  for (const file of sources(core)) {
    const from = path.relative(core, file).split(path.sep)[0];
    if (!graph.has(from)) graph.set(from, new Map());
    for (const m of code(readFileSync(file, 'utf8')).matchAll(SPEC)) {
      const rel = path.relative(core, path.resolve(path.dirname(file), m[1]));
      if (rel.startsWith('..')) continue;
      const to = rel.split(path.sep)[0];
      if (to === from || !to) continue;
      const edges = /** @type {Map<string, string>} */ (graph.get(from)); // set above
      if (!edges.has(to)) edges.set(to, `${path.relative(root, file).split(path.sep).join('/')} -> ${m[1]}`);
    }
  }
  return graph;
}

/**
 * The cycles of `graph` (from `folderGraph`), one per strongly connected
 * component of more than one area, each as a list of `area -> area (file -> spec)` lines.
 * @param {FolderGraph} graph
 * @returns {string[][]}
 */
export function folderCycles(graph) {
  // Tarjan's strongly connected components.
  let index = 0;
  /** @type {Map<string, number>} */
  const idx = new Map();
  /** @type {Map<string, number>} */
  const low = new Map();
  /** @type {string[]} */
  const stack = [];
  const on = new Set();
  /** @type {string[][]} */
  const comps = [];
  const at = (/** @type {Map<string, number>} */ m, /** @type {string} */ v) => /** @type {number} */ (m.get(v)); // every visited area has both
  /** @param {string} v */
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of (graph.get(v) ?? new Map()).keys()) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(at(low, v), at(low, w)));
      } else if (on.has(w)) low.set(v, Math.min(at(low, v), at(idx, w)));
    }
    if (low.get(v) === idx.get(v)) {
      /** @type {string[]} */
      const comp = [];
      /** @type {string} */
      let w;
      do {
        w = /** @type {string} */ (stack.pop()); // v is on the stack
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) comps.push(comp.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return comps.map((comp) => {
    const inComp = new Set(comp);
    /** @type {string[]} */
    const lines = [];
    for (const a of comp) for (const [b, why] of graph.get(a) ?? []) if (inComp.has(b)) lines.push(`${a} -> ${b} (${why})`);
    return lines;
  });
}
