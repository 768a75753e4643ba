/**
 * The `meguri` command from source, for tests that run it as a child process (the same thing
 * bin/meguri.js does with the built dist): `node --import tsx test/cli/run.ts <args…>`.
 */
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
