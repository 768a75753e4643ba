// Runs the benchmark suites named on the command line (default: all) and prints their tables.
// Each suite compares meguri side by side with a baseline or peer in the same process, so the
// ratios hold even on a noisy shared machine; absolute numbers are only indicative.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeResults } from './lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const suites = readdirSync(join(here, 'suites'))
  .filter((f) => f.endsWith('.bench.mjs'))
  .map((f) => f.replace(/\.bench\.mjs$/, ''))
  .filter((name) => wanted.length === 0 || wanted.includes(name));

if (suites.length === 0) {
  console.error(`bench: no suite matches ${wanted.join(', ')}`);
  process.exit(2);
}
const results = {};
for (const name of suites) {
  console.log(`\n## ${name}`);
  const mod = await import(join(here, 'suites', `${name}.bench.mjs`));
  results[name] = await mod.run();
}
writeResults(results);
