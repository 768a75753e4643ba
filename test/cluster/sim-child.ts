/**
 * The simulated web in its own process (the referee's clock is not a node's): options as JSON
 * in argv[2]. Sends `ready` with the port, DNS table, seeds and page URLs; answers `report`
 * (politeness report and request log) and `close`.
 */
import { createSimWeb, type PolitenessReportOptions } from '../../src/index.js';

const sim = createSimWeb({ ...JSON.parse(process.argv[2] ?? '{}'), now: () => performance.timeOrigin + performance.now() });
await sim.start();
process.send?.({ type: 'ready', port: sim.port, dns: sim.dnsTable(), seeds: sim.seeds(), pages: sim.pageUrls() });
process.on('message', (m: { type: string; options?: Partial<PolitenessReportOptions> | undefined }) => {
  if (m.type === 'report') process.send?.({ type: 'report', report: sim.politenessReport(m.options), log: sim.log });
  if (m.type === 'close') void sim.close().then(() => process.exit(0));
});
