/**
 * A crawl with a recrawl, for the WARC tests: `runCrawl` in continuous mode on a clock that
 * jumps two hours once the first pass is taken (every page comes due an hour after its fetch),
 * stopped after the second pass.
 */
import { join } from 'node:path';
import { type CrawlResult, type CrawlSetup, runCrawl } from '../../src/cli/crawl.js';
import { SignalHub } from '../../src/cli/io.js';
import { AGENT, bufferIo } from './helpers.js';

const HOUR = 3_600_000;

/** Crawls `seeds` into `dir` (data/, warc/): `firstPass` pages, two hours, then up to `total`. */
export async function crawlTwice(
  dir: string,
  seeds: string[],
  firstPass: number,
  total: number,
  engine: Partial<CrawlSetup['engine']> = {},
  between: () => void = () => undefined,
): Promise<{ result: CrawlResult; pages: number; stderr: string }> {
  let skew = 0;
  const clock = (): number => performance.timeOrigin + performance.now() + skew;
  const stop = new AbortController();
  let pages = 0;
  const io = bufferIo();
  const hub = SignalHub.open(io, () => undefined);
  try {
    const result = await runCrawl(
      {
        engine: {
          agent: AGENT,
          dataDir: join(dir, 'data'),
          seeds,
          allowPrivate: true,
          politeness: { minDelayMs: 5, startDelayMs: 5 },
          recrawl: true,
          freshness: (_record, nowHours) => nowHours + 1,
          clock,
          signal: stop.signal,
          ...engine,
        },
        warcDir: join(dir, 'warc'),
        warcMaxBytes: undefined,
        json: true,
        title: 'test',
        progressIntervalMs: undefined,
        onPage: () => {
          pages++;
          // Once the last first-pass page is taken and its outcome recorded (it is due an hour
          // after that), two hours pass.
          if (pages === firstPass) {
            setTimeout(() => {
              between();
              skew = 2 * HOUR;
            }, 20);
          }
          if (pages === total) setTimeout(() => stop.abort(), 0);
        },
      },
      io,
      hub,
    );
    return { result, pages, stderr: io.err() };
  } finally {
    hub.close();
  }
}
