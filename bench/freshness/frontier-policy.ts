/**
 * `meguri-frontier`: the simulated web crawled through the real `Frontier` with
 * `withFreshness` — the policy a user of the library gets, not a re-implementation of it.
 *
 * Each of the N pages is seeded as one URL of its host (`https://h<k>.sim.example/p/<i>`: the
 * page is read back from the URL, since a recovery renumbers rows), with its importance weight
 * as priority. By default a host the world caps at C crawls/hour gets a crawl delay of 1/C:
 * the frontier's spacing is the cap (`spacing` = `politenessShare` = 1). With
 * `capWindowSlots` K (or `capWindowHours` W: K = round(C·W)) it gets a rate cap over a window
 * instead (`Frontier.setHostCap`: K starts in any K / C hours, so the cap is exactly C) and a
 * crawl delay of `spacing` / C (½ by default) as its hard minimum spacing: the frontier holds
 * the cap in every window, and a host whose queue was empty may make up the missed slots at
 * up to 1 / `spacing` times its cap. Without a window and with `politenessShare` below 1 (the
 * crawl delay then `politenessShare` / C) the cap holds on average only — the experiment of
 * DESIGN §20. The default stays the crawl delay: the window caps measured level with it
 * (DESIGN §20, "Host rate caps over a window").
 * First fetches are spread over the time one pass of the budget takes (N / B hours), as the
 * estimator policy does, by seeding each URL's next-due hour into the schedule index.
 *
 * Over the engine's hours the policy runs a logical dispatch clock in milliseconds: dispatch
 * whatever the frontier offers now, fetch it through the engine (`crawl(page, clock)` answers
 * with the simulated change history: 304 on a conditional host when nothing changed, else 200
 * with a fingerprint and simhash, Last-Modified as the host serves it), report the outcome at
 * the same clock, and when nothing may go, move the clock to `nextEligible()` — until the
 * clock reaches the end of the hour. The freshness background pass runs inside the frontier at
 * its cadence (every 6 simulated hours).
 *
 * `checkpoint()` and `restore(bytes)` let a test cut the run anywhere and continue from a
 * recovered frontier.
 */
// The Node entry of the core loader: lets the frontier's wasm structures load synchronously.
import '../../src/core/node.js';
import { withFreshness, type FreshnessParams, type WithFreshnessOptions } from '../../src/freshness/index.js';
import { Frontier, type FrontierOptions, type SeedSpec } from '../../src/frontier/index.js';
import type { Outcome } from '../../src/model/index.js';
import type { Policy } from './engine.js';
import type { World } from './world.js';

const HOUR_MS = 3_600_000;
const TWO_POW_32 = 4294967296;

/** Options of the frontier-driven policy. */
export interface FrontierPolicyOptions {
  readonly params?: Partial<FreshnessParams>;
  readonly freshness?: Partial<WithFreshnessOptions>;
  readonly name?: string;
  /**
   * Test instrumentation: after each of these dispatch counts, checkpoint the frontier,
   * recover a new one from the bytes (with a new freshness hook) and carry on with it.
   */
  readonly recoverAfter?: readonly number[];
  /** Window (hours, about: see `capWindowOf`) of a capped host's rate cap; 0 (default) = none. */
  readonly capWindowHours?: number;
  /** When > 0, every capped host's window holds this many starts (K), whatever its cap: W = K / C (over `capWindowHours`). */
  readonly capWindowSlots?: number;
  /** A capped host's crawl delay as a fraction of its cap interval 1/C (default: ½ with a window cap, else `politenessShare`). */
  readonly spacing?: number;
}

/** The crawl delay of a window-capped host by default, as a fraction of its cap interval. */
export const CAP_SPACING = 0.5;
/** The window the bench measures a host's most starts over when its policy has none (hours, about). */
export const PEAK_WINDOW_HOURS = 120;

/**
 * The rate cap a host capped at `capPerHour` gets over a window of about `windowHours`: K =
 * round(C·W) ≥ 1 starts in exactly K / C hours, so the cap is exactly C.
 */
export function capWindowOf(capPerHour: number, windowHours: number, slots = 0): { crawls: number; windowHours: number } {
  const crawls = slots > 0 ? slots : Math.max(1, Math.round(capPerHour * windowHours));
  return { crawls, windowHours: crawls / capPerHour };
}

/** Drives a real Frontier with `withFreshness` over the simulated web (see the module comment). */
export class MeguriFrontierPolicy implements Policy {
  readonly name: string;
  readonly observes = true;
  readonly #options: FrontierPolicyOptions;
  #frontier: Frontier | undefined;
  #frontierOptions: Partial<FrontierOptions> = {};
  #budget = 0;
  #clockMs = 0;
  /** Dispatches made (all of them, warm-up included). */
  dispatches = 0;
  /** Optional log of every dispatch as `page@ms`, for determinism and recovery tests. */
  log: string[] | undefined;
  /** Recoveries made (`recoverAfter`), and whether each recovered frontier re-encoded to the bytes it came from. */
  readonly recoveries: boolean[] = [];
  #world: World | undefined;

  constructor(options: FrontierPolicyOptions = {}) {
    this.#options = options;
    this.name = options.name ?? 'meguri-frontier';
  }

  /** The frontier being driven (after `start`). */
  get frontier(): Frontier {
    if (!this.#frontier) throw new Error('MeguriFrontierPolicy: start() first');
    return this.#frontier;
  }

  /** Share of a capped host's crawl-delay capacity the schedule books (see the module comment). */
  get politenessShare(): number {
    return this.#options.freshness?.politenessShare ?? 1;
  }

  /** Whether capped hosts get a rate cap over a window (`capWindowSlots` or `capWindowHours` > 0). */
  get windowed(): boolean {
    return (this.#options.capWindowSlots ?? 0) > 0 || (this.#options.capWindowHours ?? 0) > 0;
  }

  /** A capped host's crawl delay as a fraction of its cap interval. */
  get spacing(): number {
    return this.#options.spacing ?? (this.windowed ? CAP_SPACING : this.politenessShare);
  }

  #makeOptions(world: World): Partial<FrontierOptions> {
    const share = this.politenessShare;
    const spacing = this.spacing;
    let maxDelay = 0;
    for (let h = 0; h < world.hostCount; h++) {
      const cap = world.hostCap[h]!;
      if (cap < Number.POSITIVE_INFINITY) maxDelay = Math.max(maxDelay, (spacing * HOUR_MS) / cap);
    }
    return {
      freshness: withFreshness(this.#options.params, world.budgetPerHour, { ...this.#options.freshness, politenessShare: share }),
      scheduleIndex: true,
      stateMachine: true,
      // A capped host's crawl delay is its cap, often hours: keep the AIMD ceiling above it so a
      // healthy slow host is not taken for one pinned at the ceiling.
      politeness: { ceilingMs: Math.max(300_000, 2 * maxDelay) },
    };
  }

  start(world: World): void {
    this.#world = world;
    this.#frontierOptions = this.#makeOptions(world);
    this.#budget = world.budgetPerHour;
    const f = new Frontier(1, world.t0, this.#frontierOptions);
    const firstPass = world.n / world.budgetPerHour;
    const spacing = this.spacing;
    const specs: SeedSpec[] = [];
    for (let i = 0; i < world.n; i++) {
      const h = world.host[i]!;
      const cap = world.hostCap[h]!;
      specs.push({
        url: `https://${world.hostName[h]!}/p/${i}`,
        host: world.hostName[h]!,
        priority: world.weight[i]!,
        firstSeen: world.t0,
        nextDue: world.t0 + Math.floor((world.spreadKey[i]! / TWO_POW_32) * firstPass),
        crawlDelay: cap < Number.POSITIVE_INFINITY ? (spacing * HOUR_MS) / cap : 0,
      });
    }
    if (f.seedBatch(specs) !== world.n) throw new Error('meguri-frontier: seeding lost pages');
    if (this.windowed) {
      for (let h = 0; h < world.hostCount; h++) {
        const cap = world.hostCap[h]!;
        if (!(cap < Number.POSITIVE_INFINITY) || world.hostSize[h] === 0) continue;
        const w = capWindowOf(cap, this.#options.capWindowHours ?? 0, this.#options.capWindowSlots ?? 0);
        if (!f.setHostCap(world.hostName[h]!, { crawls: w.crawls, windowMs: w.windowHours * HOUR_MS })) throw new Error(`meguri-frontier: host ${h} unknown`);
      }
    }
    this.#frontier?.free();
    this.#frontier = f;
    this.#clockMs = world.t0 * HOUR_MS;
  }

  advance(from: number, to: number, crawl: (page: number, at: number) => Outcome | null): void {
    let f = this.frontier;
    const end = to * HOUR_MS;
    let now = Math.max(from * HOUR_MS, this.#clockMs);
    let stalls = 0;
    while (now < end) {
      const req = f.dispatch(now);
      if (req !== undefined) {
        stalls = 0;
        this.dispatches++;
        // Rows are renumbered in key order by a recovery: the page is in the URL.
        const page = Number(req.url.slice(req.url.lastIndexOf('/') + 1));
        this.log?.push(`${page}@${now}`);
        const o = crawl(page, now / HOUR_MS)!;
        f.report({ ...o, row: req.row, url: req.url }, now);
        if (this.#options.recoverAfter?.includes(this.dispatches)) {
          this.#clockMs = now;
          const saved = this.checkpoint();
          this.restore(this.#world!, saved);
          f = this.frontier;
          this.recoveries.push(bytesEqual(f.checkpointBytes(), saved.bytes));
        }
        continue;
      }
      const next = f.nextEligible();
      if (next === undefined || next >= end) break;
      if (next > now) {
        now = next;
        stalls = 0;
      } else if (++stalls > 4) {
        throw new Error(`meguri-frontier: dispatch stalled at ${now} ms`);
      }
    }
    this.#clockMs = now;
  }

  /** The frontier's checkpoint bytes plus the policy's own clock. */
  checkpoint(): { bytes: Uint8Array; clockMs: number } {
    return { bytes: this.frontier.checkpointBytes(), clockMs: this.#clockMs };
  }

  /** Replaces the frontier with one recovered from `checkpoint()` (with a new freshness hook). */
  restore(world: World, saved: { bytes: Uint8Array; clockMs: number }): void {
    const options = this.#makeOptions(world);
    const f = Frontier.recover(saved.bytes, options);
    this.#frontier?.free();
    this.#frontier = f;
    this.#frontierOptions = options;
    this.#clockMs = saved.clockMs;
  }

  /** The crawl budget the freshness hook tracks (crawls/hour). */
  get budgetPerHour(): number {
    return this.#budget;
  }
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
