import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    // The JSON report feeds the closing "N passed, N failed" line of .ci/run.
    reporters: ['default', ['json', { outputFile: 'out/test-results.json' }]],
    testTimeout: 30_000,
  },
});
