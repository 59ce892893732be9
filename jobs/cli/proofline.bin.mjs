#!/usr/bin/env node
// The `proofline` command (package.json "bin"): registers tsx (a runtime dependency) from this package's own
// node_modules, so it runs from any working directory, then hands over to jobs/cli/proofline.cli.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./proofline.cli.ts');
process.exit(await main(process.argv.slice(2)));
