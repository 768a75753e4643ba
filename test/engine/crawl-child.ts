/**
 * A crawler process for the crash tests (run with `--import tsx`; config as JSON in argv[2]).
 * It rebuilds the simulated web's mirror from the same options (seeds, DNS), crawls into
 * `dataDir`, appends every page it is handed to `pagesFile` (one JSON line each, before
 * asking for the next), and prints its recovery info, a line per page and its end as JSON
 * lines on stdout.
 */
import { appendFileSync } from 'node:fs';
import { createSimWeb, Engine, type SimWebInit } from '../../src/index.js';
import { simEngineOptions } from './helpers.js';

interface ChildConfig {
  readonly sim: SimWebInit;
  readonly intervalMs: number;
  readonly dataDir: string;
  readonly pagesFile: string;
  readonly concurrency: number;
  readonly maxUrlsPerHost: number;
  readonly checkpointIntervalMs: number;
  readonly handleSignals?: boolean;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
const sim = createSimWeb(config.sim);
const engine = new Engine({
  ...simEngineOptions(sim, config.intervalMs),
  dataDir: config.dataDir,
  concurrency: config.concurrency,
  maxUrlsPerHost: config.maxUrlsPerHost,
  checkpointIntervalMs: config.checkpointIntervalMs,
  handleSignals: config.handleSignals ?? false,
});
engine.on('open', (recovery) => process.stdout.write(`${JSON.stringify({ type: 'recovery', recovery })}\n`));
for await (const page of engine.run()) {
  appendFileSync(config.pagesFile, `${JSON.stringify({ url: page.url, status: page.status, pid: process.pid })}\n`);
  // Tells the test a page was handed over (it kills after a count of pages, not after a sleep).
  process.stdout.write('{"type":"page"}\n');
}
await engine.close();
process.stdout.write(`${JSON.stringify({ type: 'end', reason: engine.stopReason, fetched: engine.progress().fetched })}\n`);
