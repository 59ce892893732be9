/**
 * The layering rules of Proofline, checked in CI (`npm run lint:layers`):
 *
 * - ingest/ is pure: it imports lib/ only (and other ingest/ modules).
 * - lib/ imports nothing above it.
 * - service/ never imports jobs/; only jobs/cli/ (the entry points) may import service/.
 * - BullMQ is imported by jobs/ only, with one named exception: the queue
 *   dashboard adapter (service/admin/queue-dashboard.ts) reads the queues.
 * - An endpoint family (service/<family>/) imports service/platform/, lib/,
 *   ingest/ and other families' transport-free queries (*.queries.ts) only;
 *   service/platform/ imports no family.
 * - No cycles, between modules or between folders.
 *
 * Type-only imports are not runtime dependencies and are not checked (the swc
 * parser: TypeScript 7 has no JavaScript compiler API).
 */
module.exports = {
  forbidden: [
    { name: 'no-module-cycles', severity: 'error', from: {}, to: { circular: true } },
    { name: 'no-folder-cycles', severity: 'error', scope: 'folder', from: {}, to: { circular: true } },
    {
      name: 'ingest-is-pure',
      comment: 'ingest/ turns bytes into rows: lib/ only',
      severity: 'error',
      from: { path: '^ingest/' },
      to: { path: '^(service|jobs|bench|test)/' },
    },
    {
      name: 'lib-is-the-floor',
      comment: 'lib/ imports nothing above it',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(ingest|service|jobs|bench|test)/' },
    },
    {
      name: 'no-service-to-jobs',
      comment: 'the service never imports pipelines, runners or CLIs',
      severity: 'error',
      from: { path: '^service/' },
      to: { path: '^jobs/' },
    },
    {
      name: 'only-cli-imports-service',
      comment: 'jobs/ reaches the service only from its entry points',
      severity: 'error',
      from: { path: '^jobs/', pathNot: '^jobs/cli/' },
      to: { path: '^service/' },
    },
    {
      name: 'bullmq-only-in-jobs',
      comment: 'BullMQ lives in jobs/; the queue dashboard adapter is the one exception',
      severity: 'error',
      from: { pathNot: ['^jobs/', '^service/admin/queue-dashboard\\.ts$', '^test/', '^bench/'] },
      to: { path: 'node_modules/(bullmq|@bull-board)/' },
    },
    {
      name: 'platform-imports-no-family',
      severity: 'error',
      from: { path: '^service/platform/' },
      to: { path: '^service/', pathNot: '^service/platform/' },
    },
    {
      name: 'families-meet-through-queries',
      comment: "a family imports another family's *.queries.ts only",
      severity: 'error',
      from: { path: '^service/([^/]+)/', pathNot: '^service/platform/' },
      to: { path: '^service/[^/]+/', pathNot: ['^service/$1/', '^service/platform/', '\\.queries\\.ts$'] },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: false,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|data|test-results)' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
