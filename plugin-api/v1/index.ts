/**
 * nodelet provider API, version 1. A provider package imports only from here:
 *
 *   import { API_VERSION, type Provider } from '@nodelet/plugin-api/v1';
 */
export * from './provider.ts';
export * from './containers.ts';
export * from './images.ts';
export * from './node.ts';
export * from './logger.ts';
export * from './errors.ts';
export * from './cri-log.ts';
export * from './capabilities.ts';
export * from './pod-lifecycle.ts';
export * from './state-machine.ts';
export * from './pod-states.ts';
export * from './machine-pods.ts';
