import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `e2e` shares one real control
// plane (and registry) started by its global setup and torn down afterwards.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'plugin-api/**/*.test.ts', 'providers/*/test/**/*.test.ts', 'sockets/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
          exclude: ['**/node_modules/**'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
