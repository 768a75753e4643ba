#!/usr/bin/env node
// The `meguri` command. The implementation is compiled TypeScript in dist/ (built by
// `npm install` through the prepare script, and shipped prebuilt in the npm tarball).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`meguri: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
