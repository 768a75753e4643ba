// Where a page's CPU work (fingerprint, simhash, link extraction) should run: inline on the
// event loop or on a worker thread (PageAnalyzer), per body size, same pages, same run.
// The figure that matters is the event loop's busy time per page (performance
// .eventLoopUtilization's `active`): that is what delays every other host's next fetch. A
// thread costs the loop a copy and two structured clones per page; inline costs the whole
// parse. The row where they cross is HttpFetcher's `analyzeInlineBelowBytes` default.
import { performance } from 'node:perf_hooks';
import { loadCore } from '../../dist/index.js';
import { PageAnalyzer } from '../../dist/fetch/page-work.js';
import { printTable } from '../lib/harness.mjs';

function page(bytes) {
  const parts = ['<!doctype html><html><head><title>bench</title><link rel="canonical" href="/canon"></head><body>'];
  let size = parts[0].length;
  for (let i = 0; size < bytes; i++) {
    const p = `<p>Paragraph ${i} with some words to carry, and <b>markup</b> in it.</p><a href="/article/${i}?ref=${i % 7}">link ${i}</a>\n`;
    parts.push(p);
    size += p.length;
  }
  parts.push('</body></html>');
  return new TextEncoder().encode(parts.join(''));
}

const input = (bytes) => ({ url: 'https://bench.test/page', bytes, contentType: 'text/html; charset=utf-8', token: 'meguribench', maxLinks: 10_000, canonPolicy: undefined, parseLinks: true });

/** Event-loop busy ms per page and pages/s for `n` pages, `concurrency` at a time. */
async function measure(analyzer, bytes, n, concurrency) {
  // Warm-up (and, threaded, the thread start) outside the measurement.
  await Promise.all(Array.from({ length: concurrency }, () => analyzer.analyze(input(bytes))));
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        await analyzer.analyze(input(bytes));
      }
    }),
  );
  const wall = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  return { loopMs: elu.active / n, rate: (n * 1000) / wall };
}

export async function run() {
  await loadCore();
  const inline = new PageAnalyzer({ threads: 0, inlineBelowBytes: 0 });
  const threaded = new PageAnalyzer({ threads: 1, inlineBelowBytes: 0 });
  const rows = [];
  const sizes = [1, 4, 16, 64, 256, 1024].map((k) => k * 1024);
  for (const size of sizes) {
    const bytes = page(size);
    const n = Math.max(8, Math.min(1000, Math.round((4 * 1024 * 1024) / size)));
    const a = await measure(inline, bytes, n, 1);
    const b = await measure(threaded, bytes, n, 2);
    rows.push({ body: `${size / 1024} KiB HTML`, pages: n, 'inline loop ms/page': a.loopMs, 'thread loop ms/page': b.loopMs, 'loop ratio (thread/inline)': b.loopMs / a.loopMs, 'inline pages/s': a.rate, 'thread pages/s': b.rate });
  }
  const nested = new TextEncoder().encode('<div>'.repeat(1_000_000));
  const a = await measure(inline, nested, 3, 1);
  const b = await measure(threaded, nested, 3, 1);
  rows.push({ body: '5 MB of nested <div>', pages: 3, 'inline loop ms/page': a.loopMs, 'thread loop ms/page': b.loopMs, 'loop ratio (thread/inline)': b.loopMs / a.loopMs, 'inline pages/s': a.rate, 'thread pages/s': b.rate });
  await Promise.all([inline.close(), threaded.close()]);
  printTable(rows);
  console.log('loop ms/page: event-loop busy time per page (what delays other hosts); a thread trades it for a copy and two clones');
  return rows;
}
