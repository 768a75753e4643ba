/**
 * The one-call forms over `Engine`: `crawl(options, handler)` (a run to its end, with the
 * handler's failures retried and recorded) and `readHostStates` (what `meguri hosts --why`
 * shows for a crawl that is not running).
 */
import { join } from 'node:path';
import { readPartition } from '../format/file.js';
import { CHECKPOINT_FILE } from './datadir.js';
import { Engine } from './engine.js';
import type { EngineOptions } from './options.js';
import type { Page } from './page.js';
import type { CrawlSummary } from './run-types.js';
import { type HostStatus, hostStatesFromPartition } from './status.js';

/**
 * Host statuses of a crawl from its checkpoint (`dataDir` or the `.meguri` file), as a live
 * engine's `hostStates()` would give them at `nowMs` — what `meguri hosts --why` shows for a
 * crawl that is not running.
 */
export function readHostStates(path: string, nowMs: number = Date.now()): HostStatus[] {
  const file = path.endsWith('.meguri') ? path : join(path, CHECKPOINT_FILE);
  return hostStatesFromPartition(readPartition(file), nowMs);
}

/**
 * Runs a crawl to its end: `onPage` sees every page (awaited before the next is taken), and
 * the engine is closed afterwards. Resolves with why it ended and the final stats.
 *
 * A handler that throws (or rejects) is given the same page again, up to `handlerRetries`
 * more times (default 2); then the page is recorded as failed with the error's message
 * (`summary.counts.handlerFailed`, `summary.handlerFailures`) and the crawl goes on — unless
 * `onHandlerError` is given and throws, which ends the crawl with its error.
 */
export async function crawl(
  options: Partial<EngineOptions> & Pick<EngineOptions, 'agent'>,
  onPage?: (page: Page) => void | Promise<void>,
): Promise<CrawlSummary> {
  const engine = new Engine(options);
  const { handlerRetries, onHandlerError } = engine.options;
  try {
    for await (const page of engine.run()) {
      if (onPage === undefined) continue;
      for (let attempt = 0; ; attempt++) {
        try {
          await onPage(page);
          break;
        } catch (err) {
          if (attempt < handlerRetries) continue;
          engine.recordHandlerFailure(page, err);
          await onHandlerError?.(err, page);
          break;
        }
      }
    }
  } finally {
    await engine.close();
  }
  return engine.summary();
}
