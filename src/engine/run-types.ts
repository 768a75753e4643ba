/**
 * The engine's public vocabulary of a run: why it ended, what resuming found, the end summary
 * and the events. Types only, so the CLI and embedders can name them without the engine.
 */
import type { ClusterCheckpointFallback, ClusterPause, ClusterStoreRestore } from '../cluster/options.js';
import type { CheckpointFallbackInfo } from './datadir.js';
import type { RobotsFetchResult } from '../fetch/index.js';
import type { BlockCounts } from '../frontier/index.js';
import type { Page } from './page.js';
import type { SettingChange } from './settings.js';
import type { Progress } from './status.js';
import type { CrawlCounts, FailingHost, HandlerFailure, UnresolvedHost } from './tally.js';

/**
 * Why a run ended. `diskFull`: a write met a full device or quota; `run()` then rejects with the
 * `DiskFullError` (the summary, from `summary()` or the `end` event, still says why). `waiting`:
 * nothing was in flight and the next fetch allowed was further away than `maxWaitMs` (a
 * Retry-After of a day, a robots.txt retry); the checkpoint keeps the wait, and a resume after
 * `CrawlSummary.resumeAtMs` goes on.
 */
export type StopReason = 'drained' | 'maxPages' | 'maxRequests' | 'stopped' | 'aborted' | 'diskFull' | 'waiting';

/** A seed the settings refuse (reported before the crawl starts; never fetched while they hold). */
export interface RefusedSeed {
  readonly url: string;
  /** `not-http` (not an http(s) URL), or why the scope refuses it (`not-included`, `excluded`). */
  readonly reason: string;
}

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
  /**
   * robots.txt answers replayed from the journal (rules, retry state and Retry-After holds
   * kept across the crash: no origin is asked again for an answer the journal holds).
   */
  readonly replayedRobots: number;
  /** Bytes of a torn journal tail that were dropped. */
  readonly tornBytes: number;
  /**
   * URLs whose fetch an earlier run started and no journal holds the outcome of (in flight when
   * it ended without a checkpoint, or cut by an earlier end and not fetched again since): fetched
   * again.
   */
  readonly refetch: readonly string[];
  /**
   * robots.txt requests (each hop's URL) the journal saw start but not answered: the previous
   * run may have had its answer — a Retry-After too — and died before journaling it, so this
   * run cannot honour it and asks again. Empty for journals older than these records.
   */
  readonly robotsInFlight: readonly string[];
  /**
   * Of those, each fetch whose start is known, with that start (epoch ms) — from the journal,
   * and from the checkpoint across checkpoints (`EngineState.fetchStarts`: kept until the URL's
   * outcome is journaled, so a second kill forgets none): a consumer that keeps outputs can
   * tell a page it wrote before a kill, whose outcome never reached the journal, and not write
   * it twice (the CLI does so for WARC and pages.jsonl). A URL may have several (killed again
   * while its refetch was in flight).
   */
  readonly interrupted?: readonly { readonly url: string; readonly dispatchedAtMs: number }[] | undefined;
  /**
   * Set when the checkpoint in `dataDir` failed validation and the previous one was resumed with
   * its journal and the next one (nothing journaled lost; a copy of the damaged file kept aside).
   * `generation` above is then the previous checkpoint's.
   */
  readonly checkpointFallback?: CheckpointFallbackInfo | undefined;
  /**
   * URLs the trap defence had parked (Trapped) that this run's wider `maxDepth` or
   * `maxUrlsPerHost` queued again; absent when none.
   */
  readonly released?: number | undefined;
}

/** A seed's redirect out of the scope whose target became a seed (`CrawlSummary.seedRedirects`). */
export interface SeedRedirect {
  /** The seed. */
  readonly from: string;
  /** Its target, now a seed. */
  readonly to: string;
  /** An HTTP redirect, or a refresh written in the page (`Link.refresh`). */
  readonly how: 'redirect' | 'refresh';
}

/** The end of a run (`engine.summary()`, the `end` event, the value `run()` returns, `crawl()`). */
export interface CrawlSummary {
  readonly reason: StopReason;
  /** With reason `waiting`: when the first host may be fetched again (epoch ms, the engine's clock). */
  readonly resumeAtMs?: number | undefined;
  readonly progress: Progress;
  readonly recovery: RecoveryInfo;
  /** This run's outcomes, refusals and out-of-scope URLs (see `CrawlCounts`). */
  readonly counts: CrawlCounts;
  /** Pages fetched OK in the whole campaign, soft-404s included (what `maxPages` counts: `countsAsPage`; `counts.ok` is this run's, soft-404s aside). */
  readonly okInCampaign: number;
  /** The hosts that failed most this run, with the last reason. */
  readonly failingHosts: readonly FailingHost[];
  /**
   * What hosts' blocks did this run (a firewall answering 403 to every URL for a while: see
   * src/frontier/blocks.ts), summed over the frontiers open at the end (a cluster node's slots
   * released before then are not counted).
   */
  readonly blocks: BlockCounts;
  /** Names that do not exist, each taken out of the crawl at once. */
  readonly unresolvedHosts: readonly UnresolvedHost[];
  /**
   * Hosts with URLs left whose robots.txt could not be read (no answer, or a 5xx): waiting for a
   * retry, or given up and their URLs written off — an unreachable robots.txt disallows the whole
   * host (RFC 9309 §2.3.1.4). At most 100 listed.
   */
  readonly robotsUnreachable: readonly UnreachableRobots[];
  /**
   * Query keys learned ignorable, per scope — an origin and the path's first segment, as
   * `http://a.test/post/` (`EngineOptions.learnParams`): dropped from links in that scope,
   * their copies not fetched (`CrawlCounts.paramRewrites`, `paramCopies`).
   */
  readonly learnedParams: readonly { readonly scope: string; readonly keys: readonly string[] }[];
  /**
   * Query keys learned to select a view — a filter, a sort order — of the page their site names
   * canonical, per section (an origin and the path's first segment, as `http://a.test/shop/`;
   * `EngineOptions.learnParams`, `ViewKeys`): links drop them, queued URLs carrying them are not
   * fetched (`CrawlCounts.viewRewrites`, `viewCopies`).
   */
  readonly viewKeys: readonly { readonly section: string; readonly keys: readonly string[] }[];
  /**
   * Paths learned to answer one login form whatever is asked (`EngineOptions.learnParams`), as
   * `http://a.test/posting.php`: their queued URLs are not fetched (`CrawlCounts.loginWalled`).
   */
  readonly loginWalls: readonly string[];
  /**
   * Query pairs learned, per path, to name a page the crawl knows as their page — by the
   * rel=canonical or the redirect of the pages fetched under them, as phpBB's
   * `viewtopic.php?t=5&view=next` names topic 6 (`EngineOptions.learnParams`, `KnownCopies`): queued
   * URLs carrying them are not fetched (`CrawlCounts.knownCopies`).
   */
  readonly knownCopies: readonly { readonly scope: string; readonly pairs: readonly string[] }[];
  /**
   * Lessons on links whose fragment names an element of the page they are on and the item their
   * query selects (`viewtopic.php?p=7#p7` beside post 7): such links of a shape, on pages of a
   * path, were learned to serve the page they are on (`EngineOptions.learnParams`), each as the
   * linking pages' path, a space and the links' shape —
   * `http://a.test/viewtopic.php http://a.test/viewtopic.php?p` — and are not followed
   * (`CrawlCounts.anchorCopies`).
   */
  readonly anchorCopies: readonly string[];
  /**
   * URL shapes learned to say noindex and nofollow (`EngineOptions.learnNoindex`, `NoindexShapes`),
   * as `http://a.test/w/index.php?action=*&title=*` or `http://a.test/wiki/Special:WhatLinksHere/*`:
   * their queued URLs are not fetched (`CrawlCounts.noindexSkipped`).
   */
  readonly noindexShapes: readonly string[];
  /**
   * URL shapes learned to redirect into their parent page or serve a copy of it (`EngineOptions.learnAliases`,
   * `ParentRedirects`), as `http://a.test/threads/*` + `/post-*` (first segment, `*` per middle
   * segment, the last with digit runs as `*`): their queued URLs are not fetched once the parent
   * page was (`CrawlCounts.parentRedirects`).
   */
  readonly parentRedirects: readonly string[];
  /**
   * URL shapes learned to redirect where the crawl does not go (`EngineOptions.learnAliases`,
   * `DeadEndRedirects`), as `http://a.test/a/*` + `/*` or `http://a.test/go?to=*` (first and last
   * segments with digit runs as `*`, `*` per middle segment, the query's keys with their word values): their
   * queued URLs are not fetched (`CrawlCounts.deadEndRedirects`).
   */
  readonly deadEndRedirects: readonly string[];
  /**
   * URL shapes learned to serve copies of other pages of their site, named as their rel=canonical
   * (`EngineOptions.learnAliases`, `NamedCopies`), as `http://a.test/comment/*` or
   * `http://a.test/de/comment/*` (path segments that are words kept, the others `*`): their queued
   * URLs are not fetched (`CrawlCounts.namedCopies`).
   */
  readonly namedCopies: readonly string[];
  /**
   * Origins learned moved (`EngineOptions.learnAliases`): links into `from` are taken to `to`;
   * and sections' trailing-slash rules, as `http://x/blog/…` → `http://x/blog/…/` (or back).
   */
  readonly learnedAliases: readonly { readonly from: string; readonly to: string }[];
  /**
   * Origins learned to ignore the letter case of paths (`EngineOptions.learnAliases`, a
   * `PathCase`): links to them are taken to the spelling of a path met first
   * (`CrawlCounts.caseRewrites`), and a queued other spelling of a page served is not fetched
   * (`caseCopies`).
   */
  readonly caseInsensitive: readonly string[];
  /**
   * Origins learned to serve a directory's index file as the directory (`/a/index.html` as `/a/`;
   * `EngineOptions.learnAliases`, a `PathCase` with `fold: 'index'`): links to them are taken to
   * the spelling met first (`CrawlCounts.indexRewrites`), and a queued other spelling of a page
   * served is not fetched (`indexCopies`).
   */
  readonly indexFiles: readonly string[];
  /**
   * Links as found that a learner rewrote to a page that answered 404, 410 or as a soft-404
   * (at most 100): the lesson was unlearned and banned, and each was fetched as found instead,
   * at the missed URL's depth.
   */
  readonly rewriteMisses: readonly string[];
  /**
   * Seeds whose HTTP redirect or refresh (`Link.refresh`) led out of the scope this run, their
   * targets taken as seeds — the scope widened to them (at most 100).
   */
  readonly seedRedirects: readonly SeedRedirect[];
  /** Pages `crawl()`'s handler failed on after its retries (at most 100 listed). */
  readonly handlerFailures: readonly HandlerFailure[];
  /** Seeds the settings refused. */
  readonly refusedSeeds: readonly RefusedSeed[];
  /** Saved settings this run's options overrode. */
  readonly settingChanges: readonly SettingChange[];
}

/** A host whose robots.txt could not be read (`CrawlSummary.robotsUnreachable`). */
export interface UnreachableRobots {
  readonly host: string;
  /** Given up on (its URLs were written off); false: its URLs wait for the next try. */
  readonly gaveUp: boolean;
  /** What happened, in the words of `meguri hosts --why`. */
  readonly reason: string;
}

/** Events of an `Engine` (`engine.on(name, listener)`). */
export interface EngineEvents {
  /** `dataDir` is open (resumed or new) and the crawl is about to start. */
  open: [RecoveryInfo];
  progress: [Progress];
  /**
   * A checkpoint was written (and, in cluster mode, accepted). In cluster mode one per slot
   * checkpoint, with `slot`, `epoch`, `atMs` (the snapshot's clock: every page fetched before it
   * is in it) and `refetch` (pages a hand-off or the node leaving cut at the drain bound, fetched
   * again by the slot's next owner); `generation` is then the checkpoint's number in its epoch and
   * `urls` the URLs of that slot's partition.
   */
  checkpoint: [
    {
      readonly generation: number;
      readonly bytes: number;
      readonly urls: number;
      readonly ms: number;
      readonly slot?: number;
      readonly epoch?: number;
      readonly atMs?: number;
      readonly refetch?: number;
    },
  ];
  /**
   * Cluster mode: a slot was opened from its previous checkpoint because its current one was
   * damaged (`ClusterNode`'s fallback; what the damaged one held since is redone). Logged as a
   * warning.
   */
  checkpointFallback: [ClusterCheckpointFallback];
  /**
   * Cluster mode: Redis had lost the crawl's settings record or a slot's record, and the node
   * rebuilt it from the checkpoint store (`ClusterNode`'s `onStoreRestore`). Logged as a warning.
   */
  storeRestore: [ClusterStoreRestore];
  /**
   * Cluster mode: the node stopped dispatching because its heartbeat could not be renewed
   * (Redis unreachable or stalled), dispatches again, or rejoined after its entry expired.
   */
  clusterPause: [ClusterPause];
  /** A fetch completed (emitted before the page is yielded): for logs and metrics. */
  fetched: [Page];
  end: [CrawlSummary];
  /** A robots.txt request (each redirect hop) got its answer: for archiving (WARC) and logs. */
  robots: [RobotsCapture];
}

/** One robots.txt request and its answer (an `Outcome` with `HttpFetcher`). */
export interface RobotsCapture {
  readonly url: string;
  /** Epoch ms when the request left. */
  readonly startedAtMs: number;
  /** With `HttpFetcher` this is its `Outcome` (with `exchange` when it records). */
  readonly result: RobotsFetchResult;
}

