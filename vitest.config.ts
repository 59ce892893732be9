import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Bounds for a hang, not for speed: a whole ingest inside one test took 35 s on a slowed CI host, and the host's
    // speed varies threefold (tests assert behaviour; speed is measured by `npm run bench`).
    testTimeout: 180_000,
    hookTimeout: 240_000,
    // DuckDB and child processes: keep parallelism modest on a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
