/**
 * No import cycles between core/ folders. The checker
 * (scripts/eslint/folder-cycles.js) is first shown to find a cycle made of a
 * type-only import and an `import('...')` type in a fake tree, then run on
 * the repository.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { folderCycles, folderGraph } from '../../../scripts/eslint/folder-cycles.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../fixtures/folder-cycles/', import.meta.url));

describe('folder cycles', () => {
  it('finds a cycle made of a type-only import and an import type, naming its edges', () => {
    expect(folderCycles(folderGraph(`${FIXTURES}cyclic`))).toEqual([
      ['a -> b (core/a/index.ts -> ../b/index.ts)', 'b -> a (core/b/index.ts -> ../a/index.ts)'],
    ]);
  });

  it('finds none in an acyclic tree (an import in a comment is no edge)', () => {
    const graph = folderGraph(`${FIXTURES}acyclic`);
    expect([...graph.get('b')!.keys()]).toEqual(['c']);
    expect(folderCycles(graph)).toEqual([]);
  });

  it('core/ has no folder cycle', () => {
    const cycles = folderCycles(folderGraph(REPO));
    expect(cycles, cycles.map((c) => c.join('\n')).join('\n\n')).toEqual([]);
  });
});
