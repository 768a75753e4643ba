/**
 * `Engine`: the live crawl loop around one frontier partition.
 *
 * ```
 *  driver (timers, completions)                        consumer (for await … of run())
 *  ───────────────────────────                        ────────────────────────────────
 *  fill: while slots free ─ frontier.dispatch(now) ─┐
 *        journal 'd'   → fetcher.fetch(req) ────────┤   (robots.txt / DNS: frontier's seams)
 *  sleep until nextEligible / a completion / stop   │
 *                                                   ▼
 *                          outcome → soft-404, origins, change → outputs ─► yield page
 *                                                                             │ next()
 *                          journal 'o' → frontier.report (links, politeness) ◄┘ = ack
 *  every checkpointIntervalMs: .meguri checkpoint (generation g+1), fresh journal g+1
 * ```
 *
 * A fetch holds its slot from dispatch until the consumer has taken its page (the `ack`),
 * and only then is its outcome journaled and reported. So the frontier's state — and every
 * checkpoint of it — contains exactly the outcomes the consumer has seen; a URL whose page
 * was not yet taken is in flight and is written back as schedulable. After a crash, the
 * checkpoint plus the journal's outcome records (replayed through `Frontier#replay`) rebuild
 * the state: every journaled fetch stays done, and only fetches in flight at the crash are
 * made again. The journal's dispatch records also keep the host and IP intervals across the
 * crash (`Frontier#recordStart`).
 *
 * Politeness is entirely the frontier's: the engine only asks `dispatch(now)` and sleeps until
 * `nextEligible()`; robots.txt and DNS go through the frontier's seams (src/engine/gate.ts),
 * so even a robots.txt request is paced as a fetch start.
 */
import diagnostics from 'node:diagnostics_channel';
import { EventEmitter, setMaxListeners } from 'node:events';
import { closeSync, existsSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isCoreLoaded } from '../core/instance.js';
import { keyFromHex, keyToHex } from '../core/keys.js';
import { loadCoreSync } from '../core/node.js';
import { SoftDetector, TrapDetector } from '../dedup/index.js';
import { CorruptPartitionError, InvalidArgumentError, InvalidStateError } from '../errors/index.js';
import { DnsCache, type Fetcher, HttpFetcher, RobotsCache, type RobotsFetch } from '../fetch/index.js';
import { productToken } from '../fetch/robots.js';
import { ensureDirectory, readPartition, writePartition } from '../format/file.js';
import type { PartitionImage } from '../format/index.js';
import { type FreshnessHook, type FrontierOptions, Frontier, type TrapSeam } from '../frontier/index.js';
import { withFreshness } from '../freshness/index.js';
import { Journal } from '../journal/index.js';
import { type FetchRequest, HostFlags, type HostGrouping, type Outcome } from '../model/index.js';
import type { PolitenessConfig } from '../politeness/index.js';
import { DEFAULT_POLICY, canonicalize } from '../url/index.js';
import { HostDirectory, RobotsGate, pickAddress } from './gate.js';
import { type EngineOptions, enginePolitenessConfig, resolveEngineOptions } from './options.js';
import { type Page, makePage } from './page.js';
import { type OutcomeRecord, type JournalRecord, decodeRecord, encodeRecord, outcomeRecord, recordOutcome } from './records.js';
import { type HostStatus, type Progress, type RobotsOutageRecord, countHosts, explainHost, hostStatesFromPartition } from './status.js';
import { SendGate } from './send-gate.js';
import { Waker } from './waker.js';

const HOUR_MS = 3_600_000;
/** The checkpoint file in `dataDir`. */
export const CHECKPOINT_FILE = 'frontier.meguri';
/** The journal file in `dataDir`. */
export const JOURNAL_FILE = 'journal.mgj';
const LOCK_FILE = 'lock';
/** Redirect-hop counts kept at most (see `#countHops`). */
const MAX_HOP_ENTRIES = 100_000;
const STATE_VERSION = 1;

/** Why a run ended. */
export type StopReason = 'drained' | 'maxPages' | 'stopped' | 'aborted';

/** What `open` found in `dataDir`. */
export interface RecoveryInfo {
  /** A checkpoint was found and resumed. */
  readonly resumed: boolean;
  /** Checkpoint generation resumed (0 for a new campaign). */
  readonly generation: number;
  /** Outcomes replayed from the journal. */
  readonly replayedOutcomes: number;
  /** Fetch starts replayed from the journal (intervals kept across the crash). */
  readonly replayedDispatches: number;
  /** Bytes of a torn journal tail that were dropped. */
  readonly tornBytes: number;
  /** URLs that were in flight when the previous run ended without a checkpoint: fetched again. */
  readonly refetch: readonly string[];
}

/** The end of a run. */
export interface CrawlSummary {
  readonly reason: StopReason;
  readonly progress: Progress;
  readonly recovery: RecoveryInfo;
}

/** Events of an `Engine` (`engine.on(name, listener)`). */
export interface EngineEvents {
  /** `dataDir` is open (resumed or new) and the crawl is about to start. */
  open: [RecoveryInfo];
  progress: [Progress];
  checkpoint: [{ readonly generation: number; readonly bytes: number; readonly urls: number }];
  end: [CrawlSummary];
}

/** The engine's own part of a checkpoint (in the partition's settings, key `engine`). */
interface EngineState {
  readonly v: number;
  readonly generation: number;
  readonly completed: number;
  readonly grouping: HostGrouping;
  readonly politeness: PolitenessConfig;
  readonly groups: [string, string[]][];
  /** URLs in flight at the checkpoint (written back as schedulable). */
  readonly inFlight: string[];
  /** Hosts waiting out a robots.txt outage (for `meguri hosts --why`; not read back on resume). */
  readonly robotsOutages?: RobotsOutageRecord[];
  readonly robotsMaxAttempts?: number;
}

interface Flight {
  readonly req: FetchRequest;
  readonly key: string;
  /** origin + path, as undici names the request; undefined when sends are not watched. */
  sendId: string | undefined;
  /** The outcome as the frontier will be told it (set on completion). */
  reported: Outcome | undefined;
  page: Page | undefined;
}

interface Counters {
  dispatched: number;
  completed: number;
  s2xx: number;
  s3xx: number;
  s4xx: number;
  s429: number;
  s5xx: number;
  errors: number;
  soft404: number;
  bytes: number;
  checkpoints: number;
}

/** The identity undici reports a request by: origin + path and query. */
function sendId(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.origin + u.pathname + u.search;
  } catch {
    return undefined;
  }
}

function isEngineState(v: unknown): v is EngineState {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  return s['v'] === STATE_VERSION && (s['grouping'] === 'host' || s['grouping'] === 'registrable' || s['grouping'] === 'origin') && typeof s['generation'] === 'number' && typeof s['completed'] === 'number' && Array.isArray(s['groups']) && Array.isArray(s['inFlight']);
}

/** Whether process `pid` is alive (signal 0 probes without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

/**
 * A crawl: `for await (const page of engine.run())` yields every fetched page; `close()`
 * releases everything. See the module comment for the loop and its crash safety.
 */
export class Engine extends EventEmitter<EngineEvents> {
  #options: Readonly<EngineOptions>;
  /** Whether the caller chose the grouping (otherwise a resumed crawl keeps its own). */
  readonly #groupingGiven: boolean;
  /** The freshness hook in force: the caller's, or meguri's scheduler in continuous mode. */
  readonly #freshness: FreshnessHook | undefined;
  /**
   * Unreachable robots.txt answers after which a campaign gives an origin up; undefined in
   * continuous mode, which never gives up (see `EngineOptions.robotsMaxAttempts`).
   */
  readonly #robotsGiveUp: number | undefined;
  /** The politeness policy in force. */
  readonly policy: Readonly<PolitenessConfig>;
  readonly #clock: () => number;
  readonly #dns: DnsCache;
  readonly #fetcher: Fetcher;
  readonly #ownsFetcher: boolean;
  readonly #robots: RobotsCache | undefined;
  readonly #directory: HostDirectory;
  readonly #gate: RobotsGate;
  readonly #soft: SoftDetector;
  readonly #traps: TrapDetector | undefined;
  readonly #stop = new AbortController();
  readonly #driverWaker = new Waker();
  readonly #outputWaker = new Waker();
  readonly #flights = new Map<number, Flight>();
  readonly #outputs: Flight[] = [];
  readonly #rejected: string[] = [];
  /** Redirect hops that led to each URL still to be fetched (only URLs a redirect led to). */
  readonly #hops = new Map<string, number>();
  readonly #c: Counters = { dispatched: 0, completed: 0, s2xx: 0, s3xx: 0, s4xx: 0, s429: 0, s5xx: 0, errors: 0, soft404: 0, bytes: 0, checkpoints: 0 };
  #frontier: Frontier | undefined;
  #journal: Journal | undefined;
  #generation = 0;
  #completed = 0;
  #phase: 'new' | 'running' | 'ended' | 'closed' = 'new';
  #stopping = false;
  #aborting = false;
  #reason: StopReason | undefined;
  #driverDone = false;
  #driver: Promise<void> = Promise.resolve();
  #driverError: unknown;
  #ended: Promise<void> | undefined;
  #endedResolve: (() => void) | undefined;
  #lockPath: string | undefined;
  /** `dataDir` was opened (and replayed) completely: only then may a checkpoint replace the file. */
  #opened = false;
  #detach: () => void = () => undefined;
  #recovery: RecoveryInfo = { resumed: false, generation: 0, replayedOutcomes: 0, replayedDispatches: 0, tornBytes: 0, refetch: [] };
  #runStartMs = 0;
  #lastProgress = { atMs: 0, completed: 0 };
  /** Per-IP send order of requests handed to undici (see send-gate.ts). */
  readonly #sends: SendGate;
  #stalls = 0;

  /**
   * Validates `options` (see `EngineOptions`; `agent` is required) and builds the fetcher,
   * DNS cache and robots cache. Nothing touches the disk or the network until `run()`.
   * @throws InvalidArgumentError naming the offending option.
   */
  constructor(options: Partial<EngineOptions> & Pick<EngineOptions, 'agent'>) {
    super();
    // Every fetch and robots.txt load listens on the stop signal while it runs.
    setMaxListeners(0, this.#stop.signal);
    const o = resolveEngineOptions(options);
    this.#options = o;
    this.#groupingGiven = options.grouping !== undefined;
    this.#freshness = o.freshness ?? (o.recrawl ? withFreshness(undefined, o.recrawlBudget) : undefined);
    this.#robotsGiveUp = o.recrawl || o.freshness !== undefined ? undefined : o.robotsMaxAttempts;
    this.policy = enginePolitenessConfig(o.politeness);
    this.#clock = o.clock;
    if (!isCoreLoaded()) loadCoreSync();
    this.#dns = new DnsCache({ now: o.clock, ...(o.resolve ? { resolver: o.resolve } : {}) });
    if (o.fetcher) {
      this.#fetcher = o.fetcher;
      this.#ownsFetcher = false;
    } else {
      this.#fetcher = new HttpFetcher({
        ...o.http,
        agent: o.agent,
        allowPrivate: o.allowPrivate,
        dns: this.#dns,
        canonPolicy: o.http?.canonPolicy ?? o.canonPolicy,
        now: o.clock,
      });
      this.#ownsFetcher = true;
    }
    this.#directory = new HostDirectory(o.grouping);
    let robotsFetch: RobotsFetch = () => Promise.resolve({ status: 0, error: 'not ready' });
    this.#robots = o.robots
      ? new RobotsCache({
          fetch: (url, signal) => robotsFetch(url, signal),
          agent: o.agent,
          now: o.clock,
          ttlMs: o.robotsTtlMs,
          retryBaseMs: o.robotsRetryMs,
          retryMaxMs: Math.max(o.robotsRetryMs, HOUR_MS),
        })
      : undefined;
    this.#gate = new RobotsGate({
      directory: this.#directory,
      dns: this.#dns,
      robots: this.#robots,
      allowPrivate: o.allowPrivate,
      maxAttempts: this.#robotsGiveUp ?? Infinity,
      maxCrawlDelayMs: o.maxCrawlDelayMs,
      agentToken: productToken(o.agent),
      clock: o.clock,
      onStart: (group, url) => this.#robotsStarted(group, url),
      send: (group, url, start) => this.#enterSend(url, group, this.#addressOf(url), start),
      sendDone: (url) => this.#sendDone(url),
      onSettled: (group) => {
        if (this.#frontier?.wake(group) === true) this.#driverWaker.notify();
      },
      signal: this.#stop.signal,
    });
    robotsFetch = this.#gate.wrapFetch(this.#baseRobotsFetch());
    this.#sends = new SendGate(
      o.clock,
      (group) => Math.max(this.policy.ipFloorMs, this.#frontier?.hostSnapshots(group)[0]?.intervalMs ?? this.policy.floorMs),
      (group, ip, atMs) => void this.#frontier?.recordStart(group, ip, atMs),
    );
    this.#soft = new SoftDetector({ threshold: o.soft404Threshold });
    this.#traps = o.trapDetection ? new TrapDetector() : undefined;
  }

  // ───────────────────────────── public surface ─────────────────────────────

  /**
   * Runs the crawl and yields each fetched page (every status, errors included: check
   * `page.ok`). Opens (or resumes) `dataDir` first. The next page is requested from the
   * generator only after the loop body returns, and only then is the page's outcome recorded:
   * a page the body has not finished with is fetched again after a crash, never lost. Breaking
   * out of the loop stops the crawl (in-flight fetches are cut and fetched again next run).
   * Can be called once per engine.
   * @throws InvalidStateError when called twice or after `close()`.
   */
  async *run(): AsyncGenerator<Page, void, undefined> {
    if (this.#phase !== 'new') throw new InvalidStateError(`Engine.run: the engine is ${this.#phase}; run() can be called once`);
    this.#phase = 'running';
    this.#ended = new Promise((resolve) => (this.#endedResolve = resolve));
    let completedNormally = false;
    this.#detach = this.#attachSignals();
    try {
      this.#open();
      this.#opened = true;
      this.emit('open', this.#recovery);
      this.#watchSends(true);
      this.#runStartMs = this.#clock();
      this.#lastProgress = { atMs: this.#runStartMs, completed: 0 };
      const driver = this.#drive().catch((err: unknown) => {
        this.#driverError = err;
        this.#driverDone = true;
        this.#outputWaker.notify();
      });
      this.#driver = driver;
      try {
        for (;;) {
          const next = this.#outputs.shift();
          if (next !== undefined) {
            yield next.page!;
            this.#ack(next);
            continue;
          }
          if (this.#driverError !== undefined) throw this.#driverError;
          if (this.#driverDone) break;
          await this.#outputWaker.wait();
        }
        completedNormally = true;
      } finally {
        if (!completedNormally) this.#abortNow(this.#reason ?? 'stopped');
        this.#driverWaker.notify();
        await driver;
      }
      if (this.#driverError !== undefined) throw this.#driverError;
    } finally {
      this.#detach();
      this.#finish();
    }
  }


  /**
   * Stops dispatching; the fetches in flight complete and their pages are still yielded, a
   * checkpoint is written and `run()` ends. Resolves when the run has ended — so call it
   * without awaiting from inside the `for await` body (the run waits for that body).
   */
  stop(): Promise<void> {
    if (this.#phase !== 'running') return Promise.resolve();
    if (!this.#stopping) {
      this.#stopping = true;
      this.#reason ??= 'stopped';
      this.#driverWaker.notify();
    }
    return this.#ended ?? Promise.resolve();
  }

  /** Cuts the fetches in flight (they are fetched again next run), checkpoints and ends `run()`. */
  abort(): Promise<void> {
    if (this.#phase !== 'running') return Promise.resolve();
    this.#abortNow('aborted');
    return this.#ended ?? Promise.resolve();
  }

  /**
   * Ends the run if one is going (aborting in-flight fetches), writes a last checkpoint, and
   * releases the journal, the fetcher's connections, the frontier's memory and the
   * `dataDir` lock. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#phase === 'closed') return;
    if (this.#phase === 'running') {
      this.#abortNow('aborted');
      // A consumer suspended at a yield never resumes the generator: wind down from here.
      await this.#driver;
      this.#detach();
      this.#finish();
    }
    this.#phase = 'closed';
    this.#stop.abort();
    this.#journal?.close();
    this.#journal = undefined;
    if (this.#ownsFetcher && this.#fetcher instanceof HttpFetcher) await this.#fetcher.close();
    this.#frontier?.free();
    this.#frontier = undefined;
    this.#releaseLock();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * The validated options. `grouping` is the one in force: when none was given and the
   * dataDir holds a crawl, the crawl's own (known once `run()` has opened it).
   */
  get options(): Readonly<EngineOptions> {
    return this.#options;
  }

  /** Why the run ended (undefined while running). */
  get stopReason(): StopReason | undefined {
    return this.#phase === 'running' ? undefined : this.#reason;
  }

  /** What resuming `dataDir` found (valid once `run()` started). */
  get recovery(): RecoveryInfo {
    return this.#recovery;
  }

  /** Seeds that were not crawlable URLs. */
  get rejectedSeeds(): readonly string[] {
    return this.#rejected;
  }

  /** The frontier (read-only use: stats, dueUrls, hostSnapshots); undefined before `run()`. */
  get frontier(): Frontier | undefined {
    return this.#frontier;
  }

  /** Times the dispatch loop woke, and how many of those were timers (not completions). */
  get wakeups(): { readonly total: number; readonly timers: number; readonly stalls: number } {
    return { total: this.#driverWaker.wakeups, timers: this.#driverWaker.timerWakeups, stalls: this.#stalls };
  }

  /** robots.txt requests made (each redirect hop counts). */
  get robotsRequests(): number {
    return this.#gate.requests;
  }

  /** Every host's situation now: why it is or is not being fetched (`meguri hosts --why`). */
  hostStates(): HostStatus[] {
    const f = this.#frontier;
    if (f === undefined) return [];
    const now = this.#clock();
    return f.hostSnapshots().map((s) => {
      const outage = (s.flags & HostFlags.RobotsUnreachable) !== 0 ? this.#gate.outage(s.name) : undefined;
      return explainHost(s, now, this.policy, {
        robotsPending: this.#gate.pending(s.name),
        robotsRetryAtMs: outage?.retryAtMs,
        robotsStatus: outage?.status,
        robotsFailures: outage?.failures,
        robotsMaxAttempts: outage === undefined ? undefined : this.#robotsGiveUp,
      });
    });
  }

  /** The progress stats now (what the `progress` event carries). */
  progress(): Progress {
    return this.#progress(this.#clock(), false);
  }

  // ───────────────────────────── opening and recovery ─────────────────────────────

  #frontierOptions(): Partial<FrontierOptions> {
    const o = this.options;
    let traps: TrapSeam | undefined;
    const detector = this.#traps;
    if (detector) {
      traps = {
        observe: (url, host, key, nowMs) => {
          const r = detector.observe(host, key, url, Math.floor(nowMs / HOUR_MS));
          return r.becameSuspect || detector.suspect(host);
        },
        passes: (url, host, nowMs) => detector.passes(host, url, Math.floor(nowMs / HOUR_MS)),
      };
    }
    return {
      politeness: this.policy,
      prioritizer: o.prioritize,
      stateMachine: true,
      retryLimit: o.retryLimit,
      robots: this.#gate,
      resolver: this.#gate.resolver(),
      grouping: o.grouping,
      urlBudget: o.maxUrlsPerHost,
      depthCap: o.maxDepth,
      scheduleIndex: o.recrawl || o.freshness !== undefined,
      freshness: this.#freshness,
      traps,
      canonPolicyVersion: (o.canonPolicy ?? DEFAULT_POLICY).version,
    };
  }

  #open(): void {
    const o = this.options;
    const now = this.#clock();
    const dir = o.dataDir;
    let image: PartitionImage | undefined;
    if (dir !== undefined) {
      ensureDirectory(dir);
      this.#lock(dir);
      const cp = join(dir, CHECKPOINT_FILE);
      if (existsSync(cp)) image = readPartition(cp);
    }
    if (image !== undefined) {
      const state = image.meta.settings['engine'];
      if (!isEngineState(state)) throw new CorruptPartitionError('meta', `${CHECKPOINT_FILE} carries no engine state (not written by an Engine?)`);
      if (state.grouping !== o.grouping && !this.#groupingGiven) {
        // No grouping asked for: a resumed crawl keeps the one its URL keys were made with.
        this.#options = Object.freeze({ ...o, grouping: state.grouping });
        this.#directory.regroup(state.grouping);
      } else if (state.grouping !== o.grouping) {
        throw new InvalidArgumentError(`EngineOptions.grouping: ${JSON.stringify(o.dataDir)} was crawled with grouping ${JSON.stringify(state.grouping)}, received ${JSON.stringify(o.grouping)}`);
      }
      this.#directory.import(state.groups);
      this.#frontier = Frontier.recover(image, this.#frontierOptions());
      this.#generation = state.generation;
      this.#completed = state.completed;
      this.#replay(dir!, state);
    } else {
      this.#frontier = new Frontier(0, Math.floor(now / HOUR_MS), this.#frontierOptions());
    }
    this.#seed(o.seeds);
    if (dir !== undefined) this.#checkpoint();
  }

  #replay(dir: string, state: EngineState): void {
    const f = this.#frontier!;
    const path = join(dir, JOURNAL_FILE);
    const pending = new Map<string, string>();
    for (const u of state.inFlight) pending.set(u, u);
    let outcomes = 0;
    let dispatches = 0;
    let torn = 0;
    if (existsSync(path)) {
      const { journal, replay } = Journal.open(path);
      journal.close();
      torn = replay.tornBytes;
      if (replay.generation === BigInt(state.generation)) {
        replay.records.forEach((bytes, seq) => {
          const r: JournalRecord = decodeRecord(bytes, seq);
          if (r.t === 'd') {
            if (f.recordStart(r.h, r.ip, r.at)) dispatches++;
            if (r.u !== undefined) pending.set(r.u, r.u);
            return;
          }
          this.#replayOutcome(r);
          pending.delete(r.u);
          outcomes++;
        });
      }
    }
    this.#recovery = { resumed: true, generation: state.generation, replayedOutcomes: outcomes, replayedDispatches: dispatches, tornBytes: torn, refetch: [...pending.keys()] };
  }

  #replayOutcome(r: OutcomeRecord): void {
    const o = recordOutcome(r);
    for (const l of o.links ?? []) this.#directory.register(l.url);
    if (o.location !== undefined) this.#directory.register(o.location);
    if (o.contentFp !== undefined && r.s >= 200 && r.s < 300) {
      // A template only ever observed again re-confirms itself; the count is per distinct URL.
      this.#soft.observe(r.h, o.contentFp, keyFromHex(r.k));
    }
    if (this.#frontier!.replay(r.k, o, r.at, r.now)) this.#completed++;
  }

  #seed(urls: readonly string[]): void {
    if (urls.length === 0) return;
    const hours = Math.floor(this.#clock() / HOUR_MS);
    const policy = this.options.canonPolicy;
    const specs = [];
    for (const raw of urls) {
      const url = canonicalize(raw, undefined, policy);
      const group = url === null ? undefined : this.#directory.register(url);
      if (url === null || group === undefined) {
        this.#rejected.push(raw);
        continue;
      }
      specs.push({ url, host: group, priority: 1, firstSeen: hours, nextDue: hours, crawlDelay: 0 });
    }
    this.#frontier!.seedBatch(specs);
  }

  #lock(dir: string): void {
    const path = join(dir, LOCK_FILE);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx');
        writeSync(fd, `${process.pid}\n`);
        closeSync(fd);
        this.#lockPath = path;
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== 'EEXIST') throw err;
        const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
          throw new InvalidStateError(`Engine: ${JSON.stringify(dir)} is in use by process ${pid} (remove ${path} if that is wrong)`);
        }
        unlinkSync(path); // stale: its process is gone
      }
    }
    throw new InvalidStateError(`Engine: could not lock ${JSON.stringify(dir)}`);
  }

  #releaseLock(): void {
    if (this.#lockPath === undefined) return;
    try {
      unlinkSync(this.#lockPath);
    } catch {
      // already gone
    }
    this.#lockPath = undefined;
  }

  // ───────────────────────────── the loop ─────────────────────────────

  #budgetLeft(): number {
    return this.options.maxPages - this.#completed - this.#flights.size;
  }

  async #drive(): Promise<void> {
    const o = this.options;
    const f = this.#frontier!;
    const reporting = (): boolean => o.onProgress !== undefined || this.listenerCount('progress') > 0;
    let nextCheckpoint = this.#clock() + o.checkpointIntervalMs;
    let nextProgress = this.#clock() + o.progressIntervalMs;
    for (;;) {
      let now = this.#clock();
      if (o.dataDir !== undefined && now >= nextCheckpoint) {
        this.#checkpoint();
        now = this.#clock();
        nextCheckpoint = now + o.checkpointIntervalMs;
      }
      if (now >= nextProgress) {
        if (reporting()) this.#emitProgress(now);
        nextProgress = now + o.progressIntervalMs;
      }
      if (this.#stopping) {
        if (this.#flights.size === 0) break;
        await this.#driverWaker.wait();
        continue;
      }
      const before = this.#flights.size;
      this.#fill();
      if (this.#flights.size === 0) {
        if (this.#budgetLeft() <= 0) {
          this.#reason = 'maxPages';
          break;
        }
        if (f.nextEligible() === undefined) {
          this.#reason = 'drained';
          break;
        }
      }
      let deadline = Infinity;
      if (this.#flights.size < o.concurrency && this.#budgetLeft() > 0) {
        const next = f.nextEligible();
        if (next !== undefined) {
          deadline = next;
          if (next <= now && this.#flights.size === before) {
            // The frontier said "now" but gave nothing: never spin on it.
            this.#stalls++;
            deadline = now + 1;
          }
        }
      }
      if (o.dataDir !== undefined) deadline = Math.min(deadline, nextCheckpoint);
      if (reporting()) deadline = Math.min(deadline, nextProgress);
      // The freshness pass runs at the first dispatch of each clock hour and may re-time a
      // waiting recrawl earlier than the frontier's current answer: wake at every hour.
      if (this.#freshness !== undefined) deadline = Math.min(deadline, (Math.floor(now / HOUR_MS) + 1) * HOUR_MS);
      await this.#driverWaker.wait(deadline === Infinity ? undefined : deadline - this.#clock());
    }
    this.#driverDone = true;
    this.#outputWaker.notify();
  }

  #fill(): void {
    const f = this.#frontier!;
    const max = this.options.concurrency;
    this.#flushStarts();
    while (this.#flights.size < max && this.#budgetLeft() > 0) {
      // A fresh clock per dispatch: the time recorded is the time the request leaves.
      const req = f.dispatch(this.#clock());
      this.#flushStarts();
      if (req === undefined) return;
      this.#launch(req);
    }
  }

  #launch(req: FetchRequest): void {
    const key = keyToHex(req.key, 0);
    const flight: Flight = { req, key, sendId: undefined, reported: undefined, page: undefined };
    this.#flights.set(req.row, flight);
    this.#append({ t: 'd', h: req.host, ip: req.ip, at: req.dispatchedAtMs, k: key, u: req.url });
    this.#c.dispatched++;
    let pinned = req;
    try {
      const u = new URL(req.url);
      const ip = this.#addressOfHost(u.hostname);
      if (ip !== undefined && ip !== req.ip) pinned = { ...req, ip };
      if (this.#watching) flight.sendId = u.origin + u.pathname + u.search;
    } catch {
      // not a URL: the fetcher answers with a clear outcome
    }
    const begin = (): void => {
      // The request leaves now: if that is later than its dispatch, the windows count from now.
      const at = this.#clock();
      if (at > req.dispatchedAtMs + 0.5) this.#frontier?.recordStart(req.host, pinned.ip, at);
      let pending: Promise<Outcome>;
      try {
        pending = this.#fetcher.fetch(pinned, this.#stop.signal);
      } catch (err) {
        pending = Promise.resolve({ row: req.row, url: req.url, status: 0, errorKind: 'network', error: err instanceof Error ? err.message : String(err) });
      }
      pending.then(
        (outcome) => this.#complete(flight, outcome),
        (err: unknown) => this.#complete(flight, { row: req.row, url: req.url, status: 0, errorKind: 'network', error: err instanceof Error ? err.message : String(err) }),
      );
    };
    if (flight.sendId === undefined) begin();
    else this.#sends.enter(pinned.ip, flight.sendId, req.host, begin);
  }

  /** The address a hostname resolves to (the one its connection is pinned to). */
  #addressOfHost(hostname: string): string | undefined {
    const name = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    return pickAddress(this.#dns.peek(name), this.options.allowPrivate);
  }

  /** The address `url`'s hostname resolves to. */
  #addressOf(url: string): string | undefined {
    try {
      return this.#addressOfHost(new URL(url).hostname);
    } catch {
      return undefined;
    }
  }

  /**
   * Starts a request through the per-IP send order. With the undici fetcher the engine sees
   * each request leave (the `sendHeaders` diagnostics channel): a request can leave well after
   * its dispatch — a new connection first needs a connect, and a busy event loop delays that —
   * so the host's and IP's windows are re-spent from the moment it really left
   * (`Frontier#recordStart`), and a later request on the same IP waits for it (send-gate.ts).
   */
  #enterSend(url: string, group: string, ip: string | undefined, start: () => void): void {
    const id = this.#watching ? sendId(url) : undefined;
    if (id === undefined) start();
    else this.#sends.enter(ip, id, group, start);
  }

  #sendDone(url: string): void {
    const id = this.#watching ? sendId(url) : undefined;
    if (id !== undefined) this.#sends.done(id);
  }

  readonly #onSendHeaders = (message: unknown): void => {
    const r = (message as { request?: { origin?: unknown; path?: unknown } } | null)?.request;
    if (r === undefined || typeof r.origin !== 'string' || typeof r.path !== 'string') return;
    this.#sends.sent(r.origin + r.path, this.#clock());
  };

  #watching = false;

  #watchSends(on: boolean): void {
    if (on === this.#watching || !(this.#fetcher instanceof HttpFetcher)) return;
    this.#watching = on;
    if (on) diagnostics.subscribe('undici:client:sendHeaders', this.#onSendHeaders);
    else {
      diagnostics.unsubscribe('undici:client:sendHeaders', this.#onSendHeaders);
      this.#sends.clear();
    }
  }

  #baseRobotsFetch(): RobotsFetch {
    const fetcher = this.#fetcher;
    if (fetcher instanceof HttpFetcher) return fetcher.robotsFetch();
    const maybe = (fetcher as { robotsFetch?: () => RobotsFetch }).robotsFetch;
    if (typeof maybe === 'function') return maybe.call(fetcher);
    return (url, signal) =>
      fetcher.fetch({ row: -1, key: new Uint32Array(4), url, host: '', ip: this.#addressOf(url), depth: 0, dispatchedAtMs: this.#clock() }, signal);
  }

  /**
   * A robots.txt hop left: journal the start, and have the frontier's windows count from now
   * rather than from the dispatch call that asked for it (that call may have gone on to other
   * hosts first). Applied right after the current `dispatch` returns (`#flushStarts`), never
   * from inside it.
   */
  #robotsStarted(group: string, url: string): void {
    const ip = this.#addressOf(url);
    const at = this.#clock();
    this.#append({ t: 'd', h: group, ip, at, r: 1 });
    this.#starts.push({ group, ip, at });
  }

  readonly #starts: { group: string; ip: string | undefined; at: number }[] = [];

  #flushStarts(): void {
    const f = this.#frontier;
    if (f === undefined) return;
    for (const s of this.#starts.splice(0)) f.recordStart(s.group, s.ip, s.at);
  }

  /** The status the frontier is told: soft-404s are gone; so are permanent transport failures. */
  #frontierStatus(req: FetchRequest, o: Outcome, soft404: boolean): number {
    if (soft404) return 404;
    if (o.status !== 0) return o.status;
    if (o.errorKind === 'refused' || o.errorKind === 'url') return 410;
    if (o.errorKind === 'dns') {
      try {
        const answer = this.#dns.peek(new URL(req.url).hostname);
        if (answer !== undefined && !answer.ok && answer.notFound) return 410;
      } catch {
        return 410;
      }
    }
    return 0;
  }

  #complete(flight: Flight, o: Outcome): void {
    const req = flight.req;
    if (this.#flights.get(req.row) !== flight) return; // dropped by an abort
    if (this.#aborting) {
      this.#flights.delete(req.row);
      this.#driverWaker.notify();
      return;
    }
    if (flight.sendId !== undefined) this.#sends.done(flight.sendId);
    const now = this.#clock();
    const c = this.#c;
    const s = o.status;
    if (s === 0) c.errors++;
    else if (s === 429) c.s429++;
    else if (s >= 500) c.s5xx++;
    else if (s >= 400) c.s4xx++;
    else if (s >= 300) c.s3xx++;
    else if (s >= 200) c.s2xx++;
    if (o.body !== undefined) c.bytes += o.body.length;
    for (const l of o.links ?? []) if (!l.nofollow) this.#directory.register(l.url);
    let location: string | undefined;
    let capped: string | undefined;
    if (o.location !== undefined) {
      location = canonicalize(o.location, undefined, this.options.canonPolicy) ?? undefined;
      const max = this.options.maxRedirects;
      if (location !== undefined && s >= 300 && s < 400 && (this.#hops.get(req.url) ?? 0) >= max) {
        capped = `redirect not followed: ${max === 1 ? 'one hop' : `${max} hops`} already led here (maxRedirects)`;
        location = undefined;
      }
      if (location !== undefined) this.#directory.register(location);
    }
    let soft404 = false;
    if (s >= 200 && s < 300 && o.contentFp !== undefined && o.truncated !== true) {
      soft404 = this.#soft.observe(req.host, o.contentFp, req.key);
      if (soft404) c.soft404++;
    }
    flight.reported = {
      ...o,
      row: req.row,
      url: req.url,
      status: this.#frontierStatus(req, o, soft404),
      location,
      links: soft404 ? undefined : o.links,
      body: undefined,
    };
    flight.page = makePage(req, capped === undefined || o.error !== undefined ? o : { ...o, error: capped }, soft404, now);
    this.#outputs.push(flight);
    this.#outputWaker.notify();
  }

  /** The consumer took the page: record the outcome, report it, free the slot. */
  #ack(flight: Flight): void {
    const req = flight.req;
    if (this.#flights.get(req.row) !== flight || flight.reported === undefined) return;
    const now = this.#clock();
    if (this.#journal !== undefined) this.#append(outcomeRecord(flight.key, req.host, req.dispatchedAtMs, now, flight.reported));
    this.#frontier!.report(flight.reported, now);
    this.#countHops(req.url, flight.reported);
    this.#completed++;
    this.#c.completed++;
    this.#flights.delete(req.row);
    this.#driverWaker.notify();
  }

  /**
   * Redirect hops: the target of a followed redirect is one hop further than its source. A
   * URL's count is kept while it may still be fetched (a retry keeps it) and dropped once it
   * has a final answer. Bounded: the oldest counts go first (a chain they belonged to may
   * then run a few hops longer, never unboundedly: each hop needs a URL the frontier admits).
   */
  #countHops(url: string, reported: Outcome): void {
    const s = reported.status;
    const hops = this.#hops.get(url) ?? 0;
    if (s === 0 || s === 429 || (s >= 500 && s < 600)) return;
    this.#hops.delete(url);
    if (reported.location === undefined || s < 300 || s >= 400) return;
    const next = hops + 1;
    const known = this.#hops.get(reported.location);
    if (known !== undefined && known <= next) return;
    this.#hops.set(reported.location, next);
    if (this.#hops.size > MAX_HOP_ENTRIES) {
      const oldest = this.#hops.keys().next();
      if (!oldest.done) this.#hops.delete(oldest.value);
    }
  }

  #append(r: JournalRecord): void {
    if (this.#journal !== undefined) this.#journal.append(encodeRecord(r));
  }

  #abortNow(reason: StopReason): void {
    this.#reason ??= reason;
    this.#stopping = true;
    this.#aborting = true;
    this.#stop.abort();
    this.#sends.clear();
    // Pages not yet taken are dropped: their rows stay in flight, so the checkpoint re-queues them.
    for (const f of this.#outputs) this.#flights.delete(f.req.row);
    this.#outputs.length = 0;
    // Fetches still running resolve as aborted and are dropped in #complete; stop waiting for them.
    this.#flights.clear();
    this.#driverWaker.notify();
    this.#outputWaker.notify();
  }

  #attachSignals(): () => void {
    const o = this.options;
    const offs: (() => void)[] = [];
    if (o.signal) {
      const onAbort = (): void => void this.abort();
      if (o.signal.aborted) queueMicrotask(onAbort);
      else o.signal.addEventListener('abort', onAbort, { once: true });
      offs.push(() => o.signal?.removeEventListener('abort', onAbort));
    }
    if (o.handleSignals) {
      let count = 0;
      const onSignal = (): void => {
        count++;
        if (count === 1) void this.stop();
        else void this.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      offs.push(() => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      });
    }
    return () => {
      for (const off of offs) off();
    };
  }

  #finish(): void {
    if (this.#phase !== 'running') return;
    this.#phase = 'ended';
    this.#watchSends(false);
    this.#reason ??= 'stopped';
    if (this.#opened && this.options.dataDir !== undefined && this.#frontier !== undefined) this.#checkpoint();
    this.#journal?.sync();
    const summary: CrawlSummary = { reason: this.#reason, progress: this.#progress(this.#clock(), false), recovery: this.#recovery };
    this.emit('end', summary);
    this.#endedResolve?.();
  }

  // ───────────────────────────── checkpoints and progress ─────────────────────────────

  #checkpoint(): void {
    const dir = this.options.dataDir;
    const f = this.#frontier;
    if (dir === undefined || f === undefined) return;
    const generation = this.#generation + 1;
    const image = f.checkpoint();
    const state: EngineState = {
      v: STATE_VERSION,
      generation,
      completed: this.#completed,
      grouping: this.options.grouping,
      politeness: { ...this.policy },
      groups: this.#directory.export(),
      inFlight: [...this.#flights.values()].map((x) => x.req.url),
      robotsOutages: this.#robotsOutages(f),
      robotsMaxAttempts: this.#robotsGiveUp,
    };
    const bytes = writePartition(join(dir, CHECKPOINT_FILE), {
      ...image,
      meta: { ...image.meta, settings: { ...image.meta.settings, engine: state } },
    });
    this.#journal?.close();
    this.#journal = Journal.create(join(dir, JOURNAL_FILE), generation, { syncEvery: this.options.journalSyncEvery });
    this.#generation = generation;
    this.#c.checkpoints++;
    this.emit('checkpoint', { generation, bytes, urls: image.rows });
  }

  /** The robots.txt outages of hosts held back by one, as a checkpoint records them. */
  #robotsOutages(f: Frontier): RobotsOutageRecord[] {
    const out: RobotsOutageRecord[] = [];
    for (const s of f.hostSnapshots()) {
      if ((s.flags & HostFlags.RobotsUnreachable) === 0) continue;
      const o = this.#gate.outage(s.name);
      if (o !== undefined) out.push([s.name, o.retryAtMs, o.status, o.failures]);
    }
    return out;
  }

  #progress(now: number, advance: boolean): Progress {
    const f = this.#frontier;
    const c = this.#c;
    const dt = (now - this.#lastProgress.atMs) / 1000;
    const rate = dt > 0 ? (c.completed - this.#lastProgress.completed) / dt : 0;
    if (advance) this.#lastProgress = { atMs: now, completed: c.completed };
    return {
      elapsedMs: this.#runStartMs === 0 ? 0 : now - this.#runStartMs,
      fetched: this.#completed,
      fetchedThisRun: c.completed,
      pagesPerSec: rate,
      inFlight: this.#flights.size,
      queued: f?.pending() ?? 0,
      urls: f?.len() ?? 0,
      hosts: countHosts(this.hostStates()),
      status2xx: c.s2xx,
      status3xx: c.s3xx,
      status4xx: c.s4xx,
      status429: c.s429,
      status5xx: c.s5xx,
      errors: c.errors,
      soft404: c.soft404,
      robotsRequests: this.#gate.requests,
      bytes: c.bytes,
      checkpoints: c.checkpoints,
      wakeups: this.#driverWaker.wakeups,
    };
  }

  #emitProgress(now: number): void {
    const p = this.#progress(now, true);
    this.options.onProgress?.(p);
    this.emit('progress', p);
  }
}

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
 */
export async function crawl(
  options: Partial<EngineOptions> & Pick<EngineOptions, 'agent'>,
  onPage?: (page: Page) => void | Promise<void>,
): Promise<CrawlSummary> {
  const engine = new Engine(options);
  let summary: CrawlSummary | undefined;
  engine.once('end', (s) => (summary = s));
  try {
    for await (const page of engine.run()) await onPage?.(page);
  } finally {
    await engine.close();
  }
  return summary ?? { reason: engine.stopReason ?? 'stopped', progress: engine.progress(), recovery: engine.recovery };
}

