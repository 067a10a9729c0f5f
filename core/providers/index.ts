/** Provider loading, RuntimeClass routing and node contribution merging. */
export * from './manifest.ts';
export * from './api-adapters.ts';
export * from './entry-path.ts';
export * from './provider-shape.ts';
export * from './provider-loader.ts';
export * from './contributions.ts';
export * from './runtime-classes.ts';
export * from './runtime-class-router.ts';
export * from './host-providers.ts';
