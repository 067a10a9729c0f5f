/** The face of core/agent: what other folders may use; everything else in the folder is private to it. */
export { startNodelet } from './nodelet.ts';
