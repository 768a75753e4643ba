/**
 * The demo's simulated web, in a child process of `meguri demo` (forked with the options as
 * JSON in argv[2]). Its own event loop timestamps the requests, so the politeness verdict is
 * taken where a real server would take it, not on the crawler's clock. IPC messages:
 * `ready` {port} once listening; on `verdict` it answers with the politeness report, the
 * traffic counts and how much of the ground truth was fetched; `close` ends it. It also ends
 * when the parent goes away.
 */
import { createSimWeb, type PolitenessReportOptions } from '../sim/index.js';

const sim = createSimWeb({ ...(JSON.parse(process.argv[2] ?? '{}') as object), now: () => performance.timeOrigin + performance.now() });
await sim.start();
process.send?.({ type: 'ready', port: sim.port });

// Ctrl-C in a terminal reaches the whole process group: the crawl stops gracefully and still
// wants the verdict, so the parent alone decides when this process ends.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

process.on('disconnect', () => {
  void sim.close().finally(() => process.exit(0));
});

process.on('message', (m: { type?: string; options?: Partial<PolitenessReportOptions> }) => {
  if (m.type === 'verdict') {
    const report = sim.politenessReport(m.options);
    const answered = new Set<string>();
    for (const e of sim.log) if (e.kind !== 'robots' && e.status >= 200 && e.status < 400) answered.add(`${e.host} ${e.key}`);
    let expected = 0;
    let fetched = 0;
    for (const h of sim.truth.hosts) {
      for (const p of h.pages) {
        expected++;
        if (answered.has(`${h.name} ${p}`)) fetched++;
      }
    }
    const robots = sim.log.filter((e) => e.kind === 'robots').length;
    process.send?.({ type: 'verdict', report, stats: sim.stats(), coverage: { expected, fetched }, robots });
  }
  if (m.type === 'close') void sim.close().finally(() => process.exit(0));
});
