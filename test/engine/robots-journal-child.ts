/**
 * A crawler process for the robots.txt journal tests (run with `--import tsx`; config as JSON
 * in argv[2]): crawls the test's loopback server into `dataDir` and prints its recovery info,
 * a line per page and its end as JSON lines on stdout. It kills itself with SIGKILL at a
 * chosen point, so the kill lands exactly where the test needs it:
 *
 * - `killAfterRobots: n` — once the n-th robots.txt answer is in the journal. The engine's
 *   `robots` event fires as the answer arrives; the RobotsCache then records it (journal
 *   first) in the same chain of promise continuations, with no I/O between, so a
 *   `setImmediate` from the event runs after the journal write and before anything else.
 * - `killAfterPages: n` — when the (n+1)-th page is handed over: n outcomes are journaled.
 */
import { Engine } from '../../src/index.js';
import { AGENT } from './helpers.js';

interface ChildConfig {
  readonly seeds: readonly string[];
  readonly dataDir: string;
  readonly killAfterRobots?: number;
  readonly killAfterPages?: number;
  /** robots.txt TTL (default: the engine's, 24 h). */
  readonly robotsTtlMs?: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
const kill = (): void => void process.kill(process.pid, 'SIGKILL');
const engine = new Engine({
  seeds: [...config.seeds],
  agent: AGENT,
  allowPrivate: true,
  grouping: 'host',
  resolve: async () => ['127.0.0.1'],
  politeness: { minDelayMs: 20, startDelayMs: 20, ipMinDelayMs: 5 },
  // A retry after an unreachable robots.txt waits for its Retry-After, not for this backoff.
  robotsRetryMs: 100,
  ...(config.robotsTtlMs === undefined ? {} : { robotsTtlMs: config.robotsTtlMs }),
  dataDir: config.dataDir,
  // No checkpoint after the opening one: what the kill leaves is in the journal alone.
  checkpointIntervalMs: 600_000,
});
engine.on('open', (recovery) => process.stdout.write(`${JSON.stringify({ type: 'recovery', recovery })}\n`));
let answers = 0;
engine.on('robots', () => {
  if (++answers === config.killAfterRobots) setImmediate(kill);
});
let pages = 0;
for await (const page of engine.run()) {
  if (pages++ === config.killAfterPages) kill();
  process.stdout.write(`${JSON.stringify({ type: 'page', url: page.url, status: page.status })}\n`);
}
await engine.close();
process.stdout.write(`${JSON.stringify({ type: 'end', reason: engine.stopReason })}\n`);
