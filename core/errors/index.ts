/** The face of core/errors: what other folders may use; everything else in the folder is private to it. */
export { CATALOGUE, type ErrorCode, errorDetail, isNodeletError, nodeletError, type NodeletError } from './catalogue.ts';
