/**
 * A simulated web in its own process, so the server's event loop (which timestamps arrivals)
 * is not the crawler's: run with `--import tsx`, options as JSON in argv[2]. Answers IPC
 * messages `report` (politeness report + request log) and `close`.
 */
import { createSimWeb, type PolitenessReportOptions } from '../../src/index.js';

// Arrivals on the epoch-aligned monotonic clock the engine uses, so both sides compare.
const sim = createSimWeb({ ...JSON.parse(process.argv[2] ?? '{}'), now: () => performance.timeOrigin + performance.now() });
await sim.start();
process.send?.({ type: 'ready', port: sim.port });
process.on('message', (m: { type: string; options?: Partial<PolitenessReportOptions> | undefined }) => {
  if (m.type === 'report') process.send?.({ type: 'report', report: sim.politenessReport(m.options), log: sim.log });
  if (m.type === 'close') void sim.close().then(() => process.exit(0));
});
