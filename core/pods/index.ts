/**
 * The face of `core/pods/`: what other core folders may use. (The pod path's
 * inner files — the worker, its drivers, status reports — stay private.)
 */
export type { ProviderRouter } from './pod-controller.ts';
