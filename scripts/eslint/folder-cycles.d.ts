/** Types of folder-cycles.js, for the test that runs it. */

/** `area` -> (imported area -> one example edge, `file -> specifier`). */
export type FolderGraph = Map<string, Map<string, string>>;
/** The folder graph of `<root>/core`. */
export function folderGraph(root: string): FolderGraph;
/** Each cycle of `graph` as `area -> area (file -> spec)` lines. */
export function folderCycles(graph: FolderGraph): string[][];
