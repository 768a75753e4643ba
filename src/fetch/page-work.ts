/**
 * PageAnalyzer: where a fetched body's CPU work runs. Small bodies are analyzed inline;
 * larger ones on a worker thread (piscina), so no single page — a hostile one included —
 * holds the event loop that paces every other host's fetches.
 *
 * Why a size threshold rather than always a thread: posting a body and its result across
 * threads costs the event loop a copy and two structured clones, and the crawl more CPU in
 * all. bench/suites/page-work.bench.mjs, event-loop busy time per page, inline vs thread
 * (this 2-core box, shared): 4 KiB 0.13 vs 0.09 ms, 16 KiB 0.34 vs 0.09, 64 KiB 1.3 vs
 * 0.29, 1 MiB 27 vs 5.6, 5 MB of nested divs 91 vs 3.9 — while inline pages/s stayed
 * 1.2–1.8× the threaded rate up to 1 MiB. Below a few KiB the thread saves the loop
 * almost nothing and costs CPU; from tens of KiB the inline stall passes a millisecond. So
 * HttpFetcher's default threshold is 32 KiB: an inline page holds the loop under ~1 ms.
 *
 * Owns: the thread pool, created on the first large page and closed by `close()`; idle
 * threads exit on their own and never keep the process alive (piscina unrefs them).
 * Never: changes what the analysis returns — inline and threaded results are the same
 * function's (`analyzePage`). A thread that cannot start (a missing worker file, a runtime
 * without worker threads) makes the analyzer fall back to inline for good, counted in
 * `stats.fallbacks`, rather than failing fetches.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { type PageAnalysis, type PageInput, analyzePage } from './analyze.js';

/** Options of `PageAnalyzer`. */
export interface PageAnalyzerOptions {
  /** Worker threads; 0 analyzes every page inline. */
  readonly threads: number;
  /** Bodies shorter than this are analyzed inline. */
  readonly inlineBelowBytes: number;
}

/** Counts of where pages were analyzed. */
export interface PageAnalyzerStats {
  readonly inline: number;
  readonly threaded: number;
  /** Threaded analyses that failed to run on a thread and ran inline instead. */
  readonly fallbacks: number;
}

/** Default thread count: one less than the cores (the event loop keeps one), at least 1, at most 4. */
export function defaultAnalyzeThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/**
 * The worker file next to this one: `.js` once compiled; under a TypeScript runner (tests,
 * tsx) the source itself, loaded through tsx in the thread.
 */
function workerFile(): { filename: string; execArgv: string[] | undefined } {
  const fromSource = import.meta.url.endsWith('.ts');
  const url = new URL(fromSource ? './page-worker.ts' : './page-worker.js', import.meta.url);
  return { filename: url.href, execArgv: fromSource ? ['--import', 'tsx'] : undefined };
}

/** Runs `analyzePage` inline or on a worker thread by body size (see the module comment). */
export class PageAnalyzer {
  readonly #threads: number;
  readonly #inlineBelow: number;
  #pool: Piscina | undefined;
  #broken = false;
  #closed = false;
  #inline = 0;
  #threaded = 0;
  #fallbacks = 0;

  constructor(options: PageAnalyzerOptions) {
    this.#threads = options.threads;
    this.#inlineBelow = options.inlineBelowBytes;
  }

  /** Where pages went so far. */
  get stats(): PageAnalyzerStats {
    return { inline: this.#inline, threaded: this.#threaded, fallbacks: this.#fallbacks };
  }

  /**
   * Analyzes one body. Rejects only when `signal` aborts a threaded analysis (the thread is
   * stopped) or when the analysis itself throws.
   */
  async analyze(input: PageInput, signal?: AbortSignal): Promise<PageAnalysis> {
    if (this.#threads === 0 || this.#broken || this.#closed || input.bytes.length < this.#inlineBelow) {
      this.#inline++;
      return analyzePage(input);
    }
    const pool = this.#ensurePool();
    // A copy the thread owns (moved, not cloned again): the caller may keep the body. Not
    // `.slice()`: on a Buffer that is a view, and moving its buffer would empty the caller's.
    const bytes = new Uint8Array(input.bytes);
    try {
      const out = (await pool.run({ ...input, bytes }, { transferList: [bytes.buffer], ...(signal ? { signal } : {}) })) as PageAnalysis;
      this.#threaded++;
      return out;
    } catch (err) {
      if (signal?.aborted || this.#closed) throw err;
      // The thread could not run the task (it failed to start or died): analyze here, and
      // stop trying threads if none ever started.
      this.#fallbacks++;
      if (this.#threaded === 0) this.#broken = true;
      this.#inline++;
      return analyzePage(input);
    }
  }

  /** Stops the threads (waiting for none: a page being analyzed is abandoned). */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool) await pool.destroy();
  }

  #ensurePool(): Piscina {
    if (this.#pool) return this.#pool;
    const { filename, execArgv } = workerFile();
    this.#pool = new Piscina({
      filename,
      minThreads: 0,
      maxThreads: this.#threads,
      // Threads beyond need exit after a while idle; a crawl keeps them busy anyway.
      idleTimeout: 30_000,
      ...(execArgv ? { execArgv } : {}),
    });
    return this.#pool;
  }
}
