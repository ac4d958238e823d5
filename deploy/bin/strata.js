#!/usr/bin/env node
// The `strata` command. Runs the compiled CLI of the deploy workspace (`npm run build` first;
// `npm start` does that).
import { main } from '../dist/src/cli.js';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`strata: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
