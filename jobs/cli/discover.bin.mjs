#!/usr/bin/env node
// The `proofline` command (package.json "bin"): registers tsx from this package's own node_modules, so it runs
// from any working directory, then hands over to the TypeScript CLI (jobs/cli/discover.cli.ts).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./discover.cli.ts');
process.exitCode = await main(process.argv.slice(2));
