// A simulated web served from its own process for the engine benchmark (arrivals stamped by
// an event loop the crawler does not share). Options as JSON in argv[2]; IPC: 'report' → the
// politeness report and a compact request log; 'close'.
import { createSimWeb } from '../../dist/index.js';

const sim = createSimWeb({ ...JSON.parse(process.argv[2] ?? '{}'), now: () => performance.timeOrigin + performance.now() });
await sim.start();
process.send({ type: 'ready', port: sim.port });
process.on('message', (m) => {
  if (m.type === 'report') {
    const log = sim.log.map((e) => [e.host, e.ip, e.arrivedAtMs, e.kind, e.status]);
    process.send({ type: 'report', report: sim.politenessReport(m.options), log, cpu: process.cpuUsage() });
  }
  if (m.type === 'close') void sim.close().then(() => process.exit(0));
});
