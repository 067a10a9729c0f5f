/** The face of core/paths: what other folders may use; everything else in the folder is private to it. */
export { openRegularFile, readRegularFile } from './regular-file.ts';
export { isWithin, resolveInRoot, validateName, validateRelativePath } from './safe-join.ts';
export { replaceFile, replaceFileSync } from './replace-file.ts';
export { pruneEmptyParents, removeFileNoFollow, removeTreeNoFollow } from './safe-remove.ts';
