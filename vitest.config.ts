import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `e2e` shares one real control
// plane (and registry) started by its global setup and torn down afterwards.
// `nodelet-source`: workspace packages (`@nodelet/plugin-api`, providers) resolve to
// their TypeScript sources in tests, and to their built dist/ everywhere else.
// Both projects build dist/ first when stale: tests spawn the built `nodelet` command.
export default defineConfig({
  resolve: { conditions: ['nodelet-source', 'module', 'node', 'development|production'] },
  ssr: { resolve: { conditions: ['nodelet-source', 'module', 'node', 'development|production'] } },
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'test/unit/**/*.test.ts',
            'plugin-api/**/*.test.ts',
            'providers/*/test/**/*.test.ts',
            'sockets/**/*.test.ts',
            'examples/*/test/**/*.test.ts',
            'examples/*/test/**/*.test.js',
          ],
          exclude: ['**/node_modules/**', '**/dist/**'],
          globalSetup: ['test/harness/build-dist.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/harness/build-dist.ts', 'test/e2e/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
