/**
 * nodelet provider API, version 1: the contract between core and a provider
 * (what a provider implements and what core hands it). A provider package
 * imports from here, and optionally helpers from `@nodelet/plugin-api/v1/toolkit`:
 *
 *   import { API_VERSION, type Provider } from '@nodelet/plugin-api/v1';
 */
export * from './provider.ts';
export * from './containers.ts';
export * from './images.ts';
export * from './node.ts';
export * from './logger.ts';
export * from './errors.ts';
export * from './capabilities.ts';
export * from './pod-lifecycle.ts';
export * from './services.ts';
