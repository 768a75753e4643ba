/**
 * `meguri crawl` and the crawl loop it shares with `meguri demo`: the engine driven like any
 * embedder would drive it — every page written to WARC and pages.jsonl before the next is
 * taken (so a page is on disk before its outcome is journaled, and both files are fdatasynced
 * before each checkpoint marks their pages done), progress shown while it runs,
 * SIGINT/SIGTERM turned into a graceful stop with a checkpoint (a second signal cuts the
 * fetches in flight; they are fetched again on resume).
 *
 * Over 600 lines because the flag table, the flags' reading (cluster flags included) and the end
 * report all describe this one command; each is a separate function.
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve as resolvePath } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { rootCertificates } from 'node:tls';
import {
  CHECKPOINT_FILE,
  type CrawlCounts,
  type CrawlSettings,
  type CrawlSummary,
  type EnginePoliteness,
  type FailingHost,
  type UnreachableRobots,
  Engine,
  type EngineOptions,
  type EngineResolve,
  type HostStatus,
  JOURNAL_FILE,
  PREV_CHECKPOINT_FILE,
  type Progress,
  type RecoveryInfo,
  type RobotsCapture,
  type SeedRedirect,
  SETTINGS_FILE,
  Scope,
  readCrawlSettings,
} from '../engine/index.js';
import { DiskFullError, InvalidArgumentError } from '../errors/index.js';
import { isDiskFull } from '../disk/io.js';
import { DataDir, singleProcessFiles } from '../engine/datadir.js';
import { splitSeedCredentials } from '../engine/credentials.js';
import { describeLessons } from '../dedup/index.js';
import { CookieJar, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_LINKS, DEFAULT_STALL_TIMEOUT_MS, DnsCache, isHeaderField, isOwnHeader, lookupResolver, refusalReason, systemResolver } from '../fetch/index.js';
import type { Outcome } from '../model/index.js';
import { canonicalize } from '../url/index.js';
import { type BlockCounts, type FrontierStats, MIN_MEMORY_BUDGET, type TrappedBy } from '../frontier/index.js';
import { type CommandSpec, type ParsedArgs } from './args.js';
import { CliFailure, EXIT, inFile } from './failure.js';
import { type CliIo, SignalHub, bytes, directoryFlag, int, seconds } from './io.js';
import { ensureDirectory, syncFile } from '../format/file.js';
import { PagesIndex, fetchKey, pageRecord, shownPath, urlOfKey } from './pages.js';
import { NAME_NEXT_FETCH_MS, type ProgressView, type StatusContext, JsonEvents, LineProgress, TtyProgress, estimateEta, untilText } from './progress.js';
import { WarcWriter } from './warc.js';
import { type TailCapture, type WarcTailRepair, repairNotes } from './warc-tail.js';
import { resumeFlags, shownFlag, withoutCredentials } from './saved-flags.js';
import { type ScriptShell, type ShellHost, ShellSoft404s, scriptLine, scriptShell, shellsLine } from './script-pages.js';
import { type CalendarSeries, CalendarRepeats, calendarLine } from './calendar-pages.js';
import { type LogLevel, lineLogger } from '../observe/index.js';
import { CaptureIndex } from '../warc/index.js';
import { type ClusterCrawlSettings, ClusterKeys, readCrawl } from '../cluster/index.js';
import type { EngineClusterOptions } from '../engine/cluster-mode.js';
import { DEFAULT_MIN_DELAY_MS } from '../engine/options.js';
import { withRedis } from './redis.js';

/** The pages index file in the data directory. */
export const PAGES_FILE = 'pages.jsonl';

/** The `crawl` command's flags. */
export const CRAWL_SPEC: CommandSpec = {
  name: 'crawl',
  summary: 'Crawl politely from seed URLs into WARC files and pages.jsonl; run it again on the same --data to resume.',
  usage: '[URL…] --data DIR --agent "Name/1.0 (+contact)"',
  minPositionals: 0,
  maxPositionals: Infinity,
  flags: [
    { name: 'data', kind: 'string', arg: 'DIR', help: 'crawl state: checkpoint, journal, pages.jsonl (an existing one resumes)', required: 'where the crawl keeps its state' },
    { name: 'agent', kind: 'agent', arg: 'UA', help: 'User-Agent sent with every request, product token first (required); a resume reuses the saved one' },
    { name: 'seeds', kind: 'string', arg: 'FILE', help: 'more seed URLs, one per line (# starts a comment)' },
    { name: 'scope', kind: 'choice', arg: 'SCOPE', choices: ['domain', 'host', 'origin', 'any'], help: "how far from the seeds: their registrable domain (default), host name, origin, or anywhere; a seed's redirect target (HTTP, or a prompt meta refresh or Refresh header) counts as a seed" },
    { name: 'include', kind: 'string', arg: 'GLOB', multiple: true, help: 'only URLs matching one of these globs, e.g. "https://example.com/docs/**"' },
    { name: 'exclude', kind: 'string', arg: 'GLOB', multiple: true, help: 'never URLs matching one of these globs, e.g. "**/*.pdf"' },
    { name: 'max-pages', kind: 'integer', arg: 'N', min: 1, help: 'stop after N pages fetched OK (2xx/304, soft-404s included) in the campaign; resumes count earlier runs, failures and sitemaps do not; with --redis, over every node' },
    { name: 'max-requests', kind: 'integer', arg: 'N', min: 1, help: 'stop after N content requests of any outcome in the campaign (robots.txt not counted; with --redis, over every node)' },
    { name: 'sitemap', kind: 'string', arg: 'URL', multiple: true, help: 'a sitemap, sitemap index or RSS/Atom feed to start from (gzip too); its URLs are crawled' },
    { name: 'requisites', kind: 'boolean', help: "also fetch each page's images, scripts and stylesheets (same politeness and robots rules), marked in pages.jsonl" },
    { name: 'no-robots-sitemaps', kind: 'boolean', help: 'do not follow the Sitemap: lines of robots.txt files (followed by default)' },
    { name: 'no-learn-params', kind: 'boolean', help: "fetch URLs that differ only by query keys a site ignores; by default a key (?ref=, ?from=…) is dropped from links into a section of a site (/post/…) once three pages there name the URL without it as rel=canonical and have the same text, or (a return-to key: ?redirect_to=https…, ?returnto=…) differ only in its value and have the same text; a path (/posting.php) whose URLs answered one login form (a password field, the same text) five times is not fetched again; links to a spot on their own page (?p=7#p7 beside post 7) are not followed once three of their shape were copies of that page; and a listing's filters and sort orders (?filter_color=red, ?orderby=price, named canonical to the listing without them) are dropped from links once three such pages brought no new link; and a query pair whose pages name a page the crawl knows as theirs (?view=next showing the next topic, by rel=canonical or redirect) is not fetched once ten of its URLs on a path named such pages, distinct ones for ¾ of them (a redirect out of the scope counts as one) and none standing named a page the crawl did not hold, or itself (one in 32 still is, as a check)" },
    { name: 'no-learn-aliases', kind: 'boolean', help: "fetch links as found on an origin that moved; by default once three of its URLs answered a permanent redirect to the same path on its https:// or www. form, its links are taken there (a redirect each saved), and so are links into a section of a site (/blog/…) whose URLs redirect to add (or drop) a trailing slash, links to a server that ignores the letter case of paths (IIS) to the spelling met first, links to a directory or its index file (/a/ or /a/index.html) to the one met first once a server serves both the same, a link whose URL shape redirected into its parent page (or served a copy of it: rel=canonical the parent, its text and links) eight times and never served a page of its own (a forum post's permalink /threads/t.1/post-5 to the thread's page, an answer link /questions/7/title/9 showing the question) is not fetched once the parent page was, and a link whose URL shape redirected eight times where the crawl does not go (a login form once a login path is learned, another site, a path robots.txt disallows, a page another lesson refuses: /posts/5/edit, ?share=twitter) and of which none served a page nor, once one was a dead end, led to a page the crawl had not met is not fetched, nor is a link whose URL shape served eight times a copy of another page it named canonical, a page the crawl had reached otherwise (a comment's permalink /comment/512 showing its article), and never a page of its own (their first refusals and then one in 32 are, as checks)" },
    { name: 'no-learn-noindex', kind: 'boolean', help: 'fetch every page that asks not to be indexed nor followed; by default once eight URLs of one shape (the path with each segment holding a digit as *, then the query\'s keys, /w/index.php?action=*&title=*, or without a query the last segment as *, /wiki/Special:WhatLinksHere/*) answered <meta name=robots content="noindex,nofollow"> (or X-Robots-Tag) and none answered otherwise, its queued URLs are not fetched (a wiki\'s edit forms and histories, a shop\'s cart; its first refusals and then one in 32 still are, as checks that lift the lesson and fetch what it refused if one finds a page to index or follow)' },
    { name: 'no-soft404-probe', kind: 'boolean', help: "read a body that five URLs of a site share as its not-found page (a soft-404) at once; by default one made-up URL beside them (the part they differ in — a version, a commit, an id — made up: a ten-digit number, a hash, or meguri-soft404-probe-…) is fetched first, and a 404 there says the body is a page's copies — versioned docs, a code forge's file at every commit — kept as pages" },
    { name: 'no-cookies', kind: 'boolean', help: 'send no cookies; by default the cookies a site sets are sent back to it for the rest of the run, as a browser does (RFC 6265 rules, memory only), and a redirect to the page itself (a cookie check) is fetched again with them' },
    { name: 'max-depth', kind: 'integer', arg: 'N', min: 0, max: 0xffff, help: 'deepest link depth to follow (fewest links from a seed, seeds are 0; a page fetched before a shorter path to it turned up is fetched again for its links when the crawl is otherwise idle and URLs are parked past the cap); 0 = unlimited (default 32); raised on resume, it fetches what it parked' },
    { name: 'max-urls-per-host', kind: 'integer', arg: 'N', min: 0, help: 'URLs admitted per host, the blunt trap defence; 0 = unlimited (default 100000)' },
    { name: 'max-links', kind: 'integer', arg: 'N', min: 1, max: 1_000_000, help: 'distinct links taken from one page, in document order (default 10000); the end summary names pages that had more' },
    { name: 'timeout', kind: 'duration', arg: 'TIME', min: 1000, help: 'give up on a request after TIME in all (default 2m); the waits for its headers and between its body bytes are a quarter of that, at least 30s (never more than TIME), and for a connection at most 10s and half of TIME (a connection not made in time is the host\'s outage, not the page\'s failure)' },
    { name: 'max-body', kind: 'size', arg: 'SIZE', min: 64 * 1024, help: 'bytes of a response body kept, as received and decoded (default 10M; a sitemap is read to 50M, the protocol\'s limit); a longer one is cut there (truncated in pages.jsonl: links past the cut not taken) and named in the end summary; its WARC record is marked WARC-Truncated when it lacks bytes of the response, not when every byte on the wire was read (a small gzip body cut by its decoded size)' },
    { name: 'memory', kind: 'size', arg: 'SIZE', min: MIN_MEMORY_BUDGET, help: 'frontier memory budget, at least 1MiB, e.g. 4GiB: past it, queued URLs beyond each host\'s best spill to DIR/disk (default: no budget, all in memory; not with --redis)' },
    { name: 'concurrency', kind: 'integer', arg: 'N', min: 1, max: 100_000, help: 'fetches in flight across hosts, never two to one host (default 64)' },
    { name: 'grouping', kind: 'choice', arg: 'MODE', choices: ['registrable', 'host', 'origin'], help: 'politeness unit: registrable domain, host name or origin (default registrable)' },
    { name: 'recrawl', kind: 'boolean', help: 'continuous mode: pages come due again as often as they change, in whole hours (a page is recrawled at most about hourly, at the first pass of its due hour); runs until stopped' },
    { name: 'budget', kind: 'number', arg: 'N', above: 0, help: 'with --recrawl: recrawls per hour the freshness scheduler spends (default 3600)' },
    { name: 'warc', kind: 'string', arg: 'DIR', help: 'WARC output directory (default DIR/warc under --data)' },
    { name: 'warc-size', kind: 'size', arg: 'SIZE', min: 64 * 1024, help: 'rotate WARC files at this size (default 1G)' },
    { name: 'warc-redact', kind: 'boolean', help: 'write request records with the values of Authorization, Proxy-Authorization and Cookie replaced by [redacted] (for WARCs you share; responses are kept as received)' },
    { name: 'warc-digest', kind: 'choice', arg: 'ALG', choices: ['sha1', 'sha256'], help: 'WARC-Block/Payload-Digest algorithm, base32 (default sha1)' },
    { name: 'allow-private', kind: 'boolean', help: 'allow private, loopback and link-local addresses (intranets, tests); names DNS does not know are looked up in /etc/hosts too' },
    { name: 'no-allow-private', kind: 'boolean', help: 'on resume: turn a saved --allow-private off (private, loopback and link-local addresses refused again)' },
    { name: 'min-delay', kind: 'duration', arg: 'TIME', min: 0, max: 299_999, help: 'least time between two requests to one host (default 250ms)' },
    { name: 'start-delay', kind: 'duration', arg: 'TIME', min: 0, max: 299_999, help: "time between the first requests to a host, before its answers show how fast it may go (default the larger of 1s and --min-delay; never below --min-delay): the interval then narrows towards --min-delay while the host answers well and widens when it struggles; lower it for a site you run. Saved with --min-delay: a resume giving one keeps the other (a saved start below a new --min-delay is dropped)" },
    { name: 'max-crawl-delay', kind: 'duration', arg: 'TIME', min: 0, max: 299_999, help: 'cap on a robots.txt Crawl-delay (default 30s)' },
    { name: 'resolve', kind: 'mapping', arg: 'NAME=IP', multiple: true, help: 'answer NAME with IP instead of asking DNS' },
    { name: 'max-wait', kind: 'duration', arg: 'TIME', min: 0, help: 'end the run when every host left must wait longer than TIME (a Retry-After, a robots.txt retry), to be resumed after it (default 1h; 0: wait as long as asked; never below the 5 min interval ceiling; a --redis node always waits)' },
    { name: 'checkpoint-every', kind: 'duration', arg: 'TIME', min: 100, help: 'checkpoint period (default 60s, 10s per slot with --redis; also at stop; while nothing changes, at most hourly)' },
    { name: 'interval', kind: 'duration', arg: 'TIME', min: 50, help: 'progress period (default: 0.25s on a terminal, 5s in a log, 1s with --json)' },
    { name: 'json', kind: 'boolean', help: 'machine-readable events on stdout, one JSON object per line' },
    { name: 'proxy', kind: 'string', arg: 'URL', help: 'fetch through this HTTP proxy (CONNECT tunnels to addresses meguri resolved and checked); saved for resumes without its user:password' },
    { name: 'http2', kind: 'boolean', help: 'offer HTTP/2 on TLS connections' },
    { name: 'header', kind: 'string', arg: '"NAME: VALUE"', multiple: true, help: 'send this header with every request, to every host (e.g. "Accept-Language: ja"; one named as a secret, Authorization or X-Api-Key, is not saved for resumes); for a password use user:password@ in the seed URL, which goes to its origin only' },
    { name: 'cookie', kind: 'string', arg: '"NAME=VALUE"', multiple: true, help: "start with this cookie for the seeds' hosts (a logged-in session copied from a browser); sent to those hosts only, never saved" },
    { name: 'ca', kind: 'string', arg: 'FILE', help: "also trust the CA certificates (PEM) in FILE, besides Node's own: an intranet's CA, a staging site's self-signed certificate" },
    { name: 'insecure', kind: 'boolean', help: 'do not verify TLS certificates (a test or staging site); the WARC still records what was served' },
    { name: 'metrics-port', kind: 'integer', arg: 'PORT', min: 0, max: 65535, help: 'serve Prometheus metrics on 127.0.0.1:PORT/metrics (needs the prom-client package)' },
    { name: 'log-level', kind: 'choice', arg: 'LEVEL', choices: ['debug', 'info', 'warn', 'error', 'silent'], help: 'log to stderr from this level: start/stop, host transitions, checkpoints, errors (default info)' },
    { name: 'redis', kind: 'string', arg: 'URL', help: 'join (or create) a cluster crawl coordinated by this Redis; needs --crawl and --store' },
    { name: 'crawl', kind: 'string', arg: 'NAME', help: "with --redis: the cluster crawl's name" },
    { name: 'store', kind: 'string', arg: 'DIR', help: 'with --redis: the checkpoint store every node shares (a network file system across machines)' },
    { name: 'slots', kind: 'integer', arg: 'N', min: 1, max: 65_536, help: 'with --redis: slots of a new cluster crawl (default 64; fixed at creation)' },
    { name: 'durability', kind: 'choice', arg: 'MODE', choices: ['none', 'aof', 'wait'], help: "with --redis: links durable before each checkpoint by Redis's AOF (appendfsync always), by WAIT 1 on a replica, or not (default none)" },
    { name: 'log-format', kind: 'choice', arg: 'FMT', choices: ['lines', 'json'], help: 'log lines as text or as JSON objects (pino-style; default lines)' },
    { name: 'unset', kind: 'string', arg: 'FLAG', multiple: true, help: 'on resume: drop a flag saved with the crawl so its default applies again (e.g. --unset proxy, --unset requisites, --unset no-learn-params)' },
  ],
  notes: [
    'TIME is 250ms, 2s, 1.5m or 1h (a bare number is seconds); SIZE is 512K, 100M or 1G.',
    'Ctrl-C stops gracefully: fetches in flight finish, a checkpoint is written, and the same\ncommand resumes. A second Ctrl-C cuts the fetches in flight (they are fetched again).',
    'Settings (seeds, scope, patterns, agent, limits, --allow-private, --resolve, --requisites,\n--no-learn-*, --header, --warc*, --proxy, --ca, --insecure, --memory, …) are saved in\nDIR/settings.json: `npx meguri crawl --data DIR` alone resumes with them, a flag given on\nresume overrides the saved value and --unset FLAG drops one (the change is printed and\nrecorded). Never saved: --cookie, user:password in a seed or --proxy, a --header whose name\nsays it carries a secret (Authorization, …-Token, …-Key), and --json, --interval, --log-*,\n--metrics-port.',
    'With --redis URL --crawl NAME --store DIR the crawl runs on as many processes and machines as\njoin it: crawl-wide flags (agent, scope, patterns, grouping, --min-delay, --start-delay,\nlimits, --slots) are recorded when the crawl is created; a node joining with none of them uses\nthe recorded ones, and a differing one is refused naming both values. --data is then this\nnode\'s pages and WARCs.',
    'Globs match the whole canonical URL: * stays within a path segment, ** crosses them; a host\nor path written in Unicode (bücher.example, /wiki/Café) matches as its canonical ASCII form.',
    'Exit codes: 0 done, 1 failure, 2 usage (or every seed refused by the settings),\n3 nothing fetched OK in the whole crawl, 4 disk full (stopped cleanly: free space\nand run again to resume), 75 every host left must wait past --max-wait (run again\nat the time the summary names), 130 interrupted (resumable).',
  ],
};

/** Everything `runCrawl` needs. */
export interface CrawlSetup {
  /** Engine options (dataDir, agent, seeds, politeness, …). */
  readonly engine: Partial<EngineOptions> & Pick<EngineOptions, 'agent'> & { readonly dataDir: string };
  /** WARC output directory; undefined writes none. */
  readonly warcDir: string | undefined;
  readonly warcMaxBytes: number | undefined;
  /** WARC digest algorithm (default sha1). */
  readonly warcDigest?: 'sha1' | 'sha256' | undefined;
  /** Hide the values of Authorization, Proxy-Authorization and Cookie in request records (`--warc-redact`). */
  readonly warcRedact?: boolean | undefined;
  readonly json: boolean;
  /** First line of the status block. */
  readonly title: string;
  /** Progress period; default by output kind. */
  readonly progressIntervalMs: number | undefined;
  /** Log level and format (stderr); undefined logs nothing. */
  readonly log?: { readonly level: LogLevel; readonly format: 'lines' | 'json' } | undefined;
  /** Called before each page is taken (the demo records statuses). */
  readonly onPage?: ((page: import('../engine/index.js').Page) => void) | undefined;
  /** Called with the engine once it is built, before the crawl starts. */
  readonly onEngine?: ((engine: Engine) => void) | undefined;
}

/** What a crawl run did. */
export interface CrawlResult {
  readonly summary: CrawlSummary;
  /** Stopped by a signal (resumable). */
  readonly interrupted: boolean;
  readonly pagesWritten: number;
  /** Seed pages whose scripts render them, linking to nothing in their HTML (script-pages.ts; at most a few). */
  readonly scriptShells: readonly ScriptShell[];
  /** Hosts whose soft-404s were an app shell (`ShellSoft404s`). */
  readonly shellHosts: readonly ShellHost[];
  /** Calendars walked page after page that differed only in their digits (`CalendarRepeats`). */
  readonly calendars: readonly CalendarSeries[];
  readonly warcFiles: readonly string[];
  readonly warcBytes: number;
  /** Out-links followed on this run's pages plus redirect targets (discoveries offered to the frontier). */
  readonly discoveries: number;
  /** URLs the frontier held when the first page arrived, and at the end. */
  readonly urlsBefore: number;
  readonly urlsAfter: number;
  /** Frontier stats at the end of the run. */
  readonly stats: FrontierStats | undefined;
  /** The admission limits the run used (for the summary's trapped line). */
  readonly limits: { readonly maxDepth: number; readonly maxUrlsPerHost: number; readonly maxLinks: number; readonly maxBody: number };
  readonly hosts: readonly HostStatus[];
  readonly elapsedMs: number;
  /** Continuous mode: when the frontier could have started its next fetch as the run ended (undefined: nothing queued, or not continuous). */
  readonly nextFetch: StatusContext['nextFetch'];
}

/** The package version (for warcinfo and --version). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function viewFor(io: CliIo, json: boolean): ProgressView {
  if (json) return new JsonEvents(io.stdout);
  if (io.stderr.isTTY === true && io.env['TERM'] !== 'dumb') return new TtyProgress(io.stderr);
  return new LineProgress(io.stderr);
}

/**
 * Runs a crawl to its end (drained, max pages, stopped) with outputs and progress. While the
 * engine runs, `hub`'s signals stop it gracefully (a second one cuts the fetches in flight);
 * the caller keeps `hub` open until it has printed its summary.
 */
export async function runCrawl(setup: CrawlSetup, io: CliIo, hub: SignalHub): Promise<CrawlResult> {
  const dataDir = setup.engine.dataDir;
  const view = viewFor(io, setup.json);
  const json = view instanceof JsonEvents ? view : undefined;
  const tty = view instanceof TtyProgress;
  const intervalMs = setup.progressIntervalMs ?? (json ? 1000 : tty ? 250 : 5000);
  // With WARC output the fetcher records each exchange as it crossed the wire.
  const record = setup.warcDir !== undefined && setup.engine.fetcher === undefined;
  // Log lines go to stderr; on a terminal, through the status block so it is not torn.
  const logger =
    setup.log === undefined || setup.log.level === 'silent'
      ? undefined
      : lineLogger({ level: setup.log.level, format: setup.log.format, write: (line) => (tty && setup.log?.format !== 'json' ? view.note(line.trimEnd()) : io.stderr.write(line)) });
  const engine = new Engine({
    ...setup.engine,
    ...(record ? { http: { ...setup.engine.http, record: true } } : {}),
    ...(logger !== undefined ? { logger } : {}),
    progressIntervalMs: intervalMs,
    handleSignals: false,
    beforeCheckpoint: () => {
      syncOutputs();
      setup.engine.beforeCheckpoint?.();
    },
  });
  setup.onEngine?.(engine);
  // A cluster node's progress counts its own pages, and its limit is the crawl's (counted over
  // every node): the ETA does not cut at it there.
  const maxPages = engine.options.cluster === undefined ? engine.options.maxPages : Infinity;
  const continuous = engine.options.recrawl || engine.options.freshness !== undefined;
  let pages: PagesIndex | undefined;
  let warc: WarcWriter | undefined;
  let interrupted = false;
  let discoveries = 0;
  let urlsBefore = -1;
  let hostsCache: HostStatus[] = [];
  let hostsAtMs: number | undefined;
  const context = (p: Progress, note?: string): StatusContext => ({
    title: setup.title,
    eta: continuous ? undefined : estimateEta(p, hostsCache, maxPages, hostsAtMs),
    continuous,
    nextFetch: continuous && p.inFlight === 0 && hostsAtMs !== undefined ? nextFetchOf(engine, hostsAtMs) : undefined,
    warcBytes: warc?.bytes ?? 0,
    note,
  });
  engine.on('progress', (p) => {
    hostsCache = engine.hostStates();
    hostsAtMs = engine.options.clock();
    view.update(p, context(p));
  });
  engine.on('checkpoint', (c) => json?.emit('checkpoint', c));
  engine.on('checkpointFallback', (f) => json?.emit('checkpointFallback', { ...f, error: f.error.message }));
  engine.on('clusterPause', (p) => json?.emit('clusterPause', p));
  engine.on('storeRestore', (r) => json?.emit('storeRestore', r.kind === 'settings' ? r : { ...r, skipped: r.skipped.map((k) => ({ rel: k.rel, error: k.error.message })) }));
  void engine.metrics()?.then(
    (m) => m.url !== undefined && logger?.info({ event: 'metrics', url: m.url }, 'metrics served'),
    () => undefined, // run() reports it
  );
  const pagesPath = join(dataDir, PAGES_FILE);
  /**
   * Before each checkpoint, which marks every page taken so far done (never fetched again): their
   * WARC records and pages.jsonl lines reach the disk first — one fdatasync each. Before pages.jsonl
   * is open (the checkpoint at open), the files an earlier run left are synced instead.
   */
  function syncOutputs(): void {
    const steps: [string, () => void][] = [
      [warc?.files.at(-1) ?? setup.warcDir ?? dataDir, () => warc?.sync()],
      [pagesPath, () => (pages !== undefined ? pages.sync() : syncFile(pagesPath))],
    ];
    for (const [file, sync] of steps) {
      try {
        sync();
      } catch (err) {
        throw inFile(diskFull(err, file, 'fsync reported the device full (the checkpoint was not written; the previous one stands)'), file);
      }
    }
  }
  engine.once('open', (r) => {
    // Only now does this process hold the data directory's lock: pages.jsonl (whose torn last
    // line opening cuts off) is never touched while another crawl writes to it.
    try {
      pages = PagesIndex.open(pagesPath);
      // Earlier runs' captures, so an unchanged page becomes a revisit record.
      if (warc !== undefined) warc.useCaptures(CaptureIndex.fromPages(pagesPath, warc.digest));
    } catch (err) {
      throw inFile(err, pagesPath);
    }
    const written = writtenBeforeKill(r, pages);
    writtenUnjournaled = new Set([...written].map(urlOfKey));
    if (warc !== undefined) {
      // A page's records written, its line not (a kill or a full disk between the two): its
      // fetch is interrupted, so the resume writes it anew, and its old records go.
      const interrupted = new Set((r.interrupted ?? []).map((i) => fetchKey(i.url, i.dispatchedAtMs)));
      const unlisted = (c: TailCapture): boolean => interrupted.has(fetchKey(c.url, c.date)) && !written.has(fetchKey(c.url, c.date));
      let repair: WarcTailRepair;
      try {
        repair = warc.repair(unlisted);
      } catch (err) {
        throw inFile(err, warc.dir);
      }
      // Never silent: what was cut, removed or found damaged is said with the file and offset.
      for (const line of repairNotes(repair, (f) => shownPath(f, dataDir))) io.stderr.write(`meguri: ${line}\n`);
    }
    urlsBefore = engine.frontier?.len() ?? 0;
    json?.emit('open', { ...r, refetch: r.refetch.length, urls: urlsBefore, resumedPages: pages.existing });
    const fb = r.checkpointFallback;
    if (fb !== undefined && json === undefined) {
      const kept = fb.savedAs === undefined ? '' : ` (a copy kept as ${fb.savedAs})`;
      // The reason names the file that failed: the checkpoint, or a disk-tier file it names.
      view.note(`the checkpoint in ${dataDir} is damaged${kept}: ${fb.reason}; resumed the previous checkpoint and replayed its journals (${fb.records} records)`);
    }
    if (r.resumed && json === undefined) {
      view.note(`resumed checkpoint generation ${r.generation}: ${r.replayedOutcomes} journaled outcomes replayed, ${r.refetch.length} interrupted fetches to redo`);
    }
    if (r.released !== undefined && json === undefined) {
      view.note(`${int(r.released)} URLs parked by the old --max-depth / --max-urls-per-host are queued under the new limits`);
    }
  });
  /** URLs whose page a killed run wrote and never journaled: their refetch is not written again. */
  let writtenUnjournaled = new Set<string>();
  const holdAfter = testHoldAfter(io, 'MEGURI_TEST_HOLD_AFTER_WRITE');
  const holdAfterWarc = testHoldAfter(io, 'MEGURI_TEST_HOLD_AFTER_WARC');
  let warcPages = 0;
  const requisites = new Set<string>();
  const scriptShells: ScriptShell[] = [];
  const shellSoft404s = new ShellSoft404s();
  const calendars = new CalendarRepeats();
  let count = 0;
  hub.route((signal) => {
    count++;
    interrupted = true;
    if (count === 1) {
      view.note(`${signal}: stopping — finishing the fetches in flight and writing a checkpoint (again to cut them short)`);
      void engine.stop();
    } else {
      view.note(`${signal}: cutting the fetches in flight (they are fetched again on resume)`);
      void engine.abort();
    }
  });
  const started = Date.now();
  let summary: CrawlSummary | undefined;
  engine.once('end', (s) => (summary = s));
  try {
    ensureDirectory(dataDir);
    if (setup.warcDir !== undefined) {
      warc = await WarcWriter.open({
        dir: setup.warcDir,
        maxBytes: setup.warcMaxBytes,
        agent: setup.engine.agent,
        software: `meguri/${packageVersion()}`,
        robots: engine.options.robots,
        digest: setup.warcDigest,
        redactSecrets: setup.warcRedact,
        // Repaired in 'open', under the data directory's lock (another crawl may be writing here).
        repair: false,
      });
      const w = warc;
      engine.on('robots', (r) => void w.writeOutcome(robotsOutcome(r), r.startedAtMs));
    }
    json?.emit('start', { dataDir, warcDir: setup.warcDir ?? null, seeds: setup.engine.seeds?.length ?? 0 });
    try {
      for await (const page of engine.run()) {
        setup.onPage?.(page);
        if (page.depth === 0 && scriptShells.length < MAX_SCRIPT_SHELLS) {
          const shell = scriptShell(page);
          if (shell !== undefined) scriptShells.push(shell);
        }
        shellSoft404s.observe(page);
        calendars.observe(page);
        if (!page.soft404) for (const l of page.links) if (!l.nofollow) discoveries++;
        if (page.headers.location !== undefined && page.status >= 300 && page.status < 400) discoveries++;
        // Requisites are marked by how they were found (remembered for this run, bounded).
        for (const l of page.links) if (l.requisite === true && requisites.size < MAX_REQUISITES) requisites.add(l.url);
        if (writtenUnjournaled.delete(page.url)) {
          // Written just before a kill, journaled never: its outputs are already there once.
          requisites.delete(page.url);
          continue;
        }
        let where: ReturnType<NonNullable<typeof warc>['write']> | undefined;
        try {
          where = warc?.write(page);
        } catch (err) {
          throw diskFull(err, warc?.files.at(-1) ?? setup.warcDir ?? dataDir, 'a WARC record was cut short');
        }
        if (where !== undefined && ++warcPages === holdAfterWarc) await holdForTest(io, 'WARC records written, no pages.jsonl line');
        const rec = pageRecord(page, where, dataDir, requisites.delete(page.url));
        try {
          pages!.append(rec);
        } catch (err) {
          throw diskFull(err, pagesPath, 'a page line was cut short (a torn line, dropped on resume)');
        }
        json?.emit('page', { ...rec });
        if (holdAfter !== undefined && pages!.appended === holdAfter) await holdForTest(io, 'page written, not journaled');
      }
    } catch (err) {
      throw fileContext(err, dataDir);
    }
    const end = summary ?? engine.summary();
    hostsCache = engine.hostStates();
    hostsAtMs = engine.options.clock();
    const stats = engine.frontier?.stats(Math.floor(Date.now() / 3_600_000));
    view.finish(end.progress, context(end.progress, interrupted ? `stopped (${end.reason}); checkpoint written — run the same command to resume` : undefined));
    if (engine.rejectedSeeds.length > 0) io.stderr.write(`meguri: skipped ${engine.rejectedSeeds.length} seed(s) that are not http(s) URLs: ${engine.rejectedSeeds.slice(0, 3).map((s) => JSON.stringify(s)).join(', ')}\n`);
    return {
      summary: end,
      interrupted,
      pagesWritten: pages?.appended ?? 0,
      scriptShells,
      shellHosts: shellSoft404s.hosts(),
      calendars: calendars.named(),
      warcFiles: warc?.files ?? [],
      warcBytes: warc?.bytes ?? 0,
      discoveries,
      urlsBefore: Math.max(0, urlsBefore),
      urlsAfter: engine.frontier?.len() ?? 0,
      stats,
      limits: {
        maxDepth: engine.options.maxDepth,
        maxUrlsPerHost: engine.options.maxUrlsPerHost,
        maxLinks: engine.options.http?.maxLinks ?? DEFAULT_MAX_LINKS,
        maxBody: engine.options.http?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      },
      hosts: hostsCache,
      elapsedMs: Date.now() - started,
      nextFetch: continuous ? nextFetchOf(engine, hostsAtMs) : undefined,
    };
  } finally {
    // The engine has checkpointed (or never opened): later signals only hear that it is ending.
    hub.route(undefined);
    warc?.close();
    pages?.close();
    await engine.close();
  }
}

/** A robots.txt answer as an Outcome for the WARC writer (HttpFetcher's answers already are one). */
function robotsOutcome(r: RobotsCapture): Outcome {
  const res = r.result as RobotsCapture['result'] & Partial<Outcome>;
  const body = typeof r.result.body === 'string' ? new TextEncoder().encode(r.result.body) : r.result.body;
  return { ...res, row: -1, url: r.url, body };
}

/**
 * A full device or quota on one of the command's own files (WARC, pages.jsonl) as the engine's
 * own writes report it: `DiskFullError` naming the file (exit 4). The page is not acknowledged,
 * so a resume fetches it again. Other errors pass through.
 */
function diskFull(err: unknown, file: string, message: string): unknown {
  return isDiskFull(err) && !(err instanceof DiskFullError) ? new DiskFullError(file, message, { cause: err }) : err;
}

/** Names the checkpoint or journal in a corrupt-file error from the engine. */
function fileContext(err: unknown, dataDir: string): unknown {
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'CorruptJournalError') return inFile(err, join(dataDir, JOURNAL_FILE));
  return inFile(err, join(dataDir, CHECKPOINT_FILE));
}

/** Reads a seeds file: one URL per line, blank lines and `#` comments ignored. */
export function readSeedsFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const failure = inFile(err, path);
    throw failure instanceof CliFailure ? new InvalidArgumentError(`--seeds: cannot read ${failure.message}`, { cause: err }) : failure;
  }
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const t = line.replace(/(^|\s)#.*$/, '').trim();
    if (t !== '') out.push(t);
  }
  return out;
}

/**
 * A resolver that answers the `--resolve` table and asks the system's DNS for the rest. With
 * `hostsFile` (`--allow-private`: intranets, a server on this machine) a name DNS cannot
 * answer is looked up once more through getaddrinfo, which reads /etc/hosts — so `localhost`
 * and names only the hosts file or nsswitch knows work too. Undefined when neither applies
 * (the engine's own resolver then).
 */
export function tableResolver(
  pairs: readonly (readonly [string, string])[],
  hostsFile = false,
  system: EngineResolve = systemResolver(),
  local: EngineResolve = lookupResolver(),
): EngineResolve | undefined {
  if (pairs.length === 0 && !hostsFile) return undefined;
  const table = new Map<string, string[]>();
  for (const [name, ip] of pairs) table.set(name, [...(table.get(name) ?? []), ip]);
  return async (hostname) => {
    const hit = table.get(hostname.toLowerCase().replace(/\.$/, ''));
    if (hit !== undefined) return hit;
    try {
      // Records keep their TTLs: the engine's DNS cache honours them.
      return await system(hostname);
    } catch (err) {
      if (!hostsFile) throw err;
      try {
        return await local(hostname);
      } catch {
        throw err;
      }
    }
  };
}

/** A seed written as a bare host name (and port, path): `example.com`, `docs.example.com:8443/guide`, `localhost`. */
const BARE_HOST = /^(?:localhost|[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+|\[[0-9a-f:.]+\])(?::\d{1,5})?(?:[/?#]|$)/iu;

/**
 * A seed as the crawl takes it: a bare host name gets `https://` (most sites serve it, and
 * browsers try it first), with a notice naming the URL taken; anything else as given.
 */
export function seedWithScheme(seed: string): string {
  return !seed.includes('://') && BARE_HOST.test(seed) ? `https://${seed}` : seed;
}

/** The seeds the engine can crawl (http(s) URLs); the rest are reported once, up front. */
function usableSeeds(seeds: readonly string[], resumable: boolean, io: CliIo): string[] {
  const good: string[] = [];
  const bad: string[] = [];
  for (const given of seeds) {
    const s = seedWithScheme(given);
    const canonical = canonicalize(s);
    if (s !== given && canonical !== null) io.stderr.write(`meguri: taking ${given} as ${canonical} (write http://${given} for a site without TLS)\n`);
    (canonical === null ? bad : good).push(s);
  }
  if (bad.length === 0) return good;
  const list = `${bad.slice(0, 3).map((b) => JSON.stringify(b)).join(', ')}${bad.length > 3 ? `, … (${bad.length} in all)` : ''}`;
  if (good.length === 0 && !resumable) throw new InvalidArgumentError(`crawl: no seed is an http(s) URL: ${list}`);
  io.stderr.write(`meguri: skipping ${bad.length} seed(s) that are not http(s) URLs: ${list}\n`);
  return good;
}

/** The CLI's words for an engine option error: `--grouping` where the engine says `grouping`. */
function inFlagWords(err: unknown, args: ParsedArgs, dataDir: string): unknown {
  if (!(err instanceof InvalidArgumentError) || !err.message.startsWith('EngineOptions.grouping:')) return err;
  const theirs = /crawled with grouping "([a-z]+)"/.exec(err.message)?.[1] ?? '?';
  return new InvalidArgumentError(`--grouping ${args.text('grouping') ?? ''}: ${dataDir} was crawled with --grouping ${theirs}; give that, or leave --grouping out to continue with it`, { cause: err });
}

/** The flag of each saved setting, as a resume's changes are printed (and `meguri cluster limit` names its limits). */
export const FLAG_OF: Readonly<Record<string, string>> = {
  seeds: 'seeds',
  scope: '--scope',
  include: '--include',
  exclude: '--exclude',
  agent: '--agent',
  grouping: '--grouping',
  allowPrivate: '--allow-private',
  maxPages: '--max-pages',
  maxRequests: '--max-requests',
  maxDepth: '--max-depth',
  maxUrlsPerHost: '--max-urls-per-host',
  concurrency: '--concurrency',
  politeness: '--min-delay/--start-delay',
  maxCrawlDelayMs: '--max-crawl-delay',
  recrawl: '--recrawl',
  recrawlBudget: '--budget',
  extraSettings: 'the flags of saved-flags.ts',
};

/** A saved value as the user would type it. */
function shown(v: unknown): string {
  if (v === Infinity || v === null) return 'unlimited';
  if (typeof v === 'object' && v !== null && ('minDelayMs' in v || 'startDelayMs' in v)) {
    // As FLAG_OF names it: "--min-delay/--start-delay: 5ms/100ms → 10ms/default".
    const ms = (n: number | undefined): string => (n === undefined ? 'default' : `${n}ms`);
    return `${ms((v as EnginePoliteness).minDelayMs)}/${ms((v as EnginePoliteness).startDelayMs)}`;
  }
  return Array.isArray(v) ? v.join(' ') || 'none' : String(v);
}

/**
 * The fetcher's options the flags set: --proxy, --http2, --header, --cookie (a jar holding them
 * for each seed's host, `seeds` being the seeds given and saved), --ca, --insecure.
 */
function httpFlags(args: ParsedArgs, seeds: readonly string[]): { http?: NonNullable<EngineOptions['http']> } {
  const http: { -readonly [K in keyof NonNullable<EngineOptions['http']>]: NonNullable<EngineOptions['http']>[K] } = {};
  const cookies = args.list('cookie');
  if (cookies.length > 0 && args.flag('no-cookies')) throw new InvalidArgumentError('--cookie and --no-cookies contradict each other: give one');
  if (cookies.length > 0) http.cookies = startingCookies(cookies, seeds);
  if (args.has('proxy')) http.proxy = args.text('proxy')!;
  const headers = args.list('header');
  if (headers.length > 0) http.headers = Object.fromEntries(headers.map(headerFlag));
  if (args.flag('http2')) http.allowH2 = true;
  const caFile = args.text('ca');
  if (caFile !== undefined || args.flag('insecure')) {
    // HttpFetcher's `tls.ca` replaces Node's roots; a crawl that also reaches public sites
    // keeps them and adds the file's.
    const ca = caFile === undefined ? undefined : [...rootCertificates, readCaFile(caFile)];
    http.tls = { ...(ca !== undefined ? { ca } : {}), ...(args.flag('insecure') ? { rejectUnauthorized: false } : {}) };
  }
  return Object.keys(http).length === 0 ? {} : { http };
}

/** A jar holding each --cookie "NAME=VALUE" as a host-only cookie of every seed's host (path /). */
function startingCookies(cookies: readonly string[], seeds: readonly string[]): CookieJar {
  const jar = new CookieJar();
  const hosts = new Set<string>();
  for (const s of seeds) {
    try {
      const u = new URL(s);
      if (u.protocol === 'http:' || u.protocol === 'https:') hosts.add(u.origin);
    } catch {
      // not a URL: usableSeeds reported it
    }
  }
  if (hosts.size === 0) throw new InvalidArgumentError('--cookie: no seed URL to give it to (the cookie goes to the seeds\' hosts)');
  for (const c of cookies) {
    const eq = c.indexOf('=');
    if (eq <= 0 || /[;\s]/.test(c.slice(0, eq)) || c.includes(';')) {
      throw new InvalidArgumentError(`--cookie ${JSON.stringify(c)}: expected "NAME=VALUE" (one cookie, no attributes)`);
    }
    for (const origin of hosts) {
      // An https seed's cookie is Secure: never sent to its host over plain http.
      const line = `${c}; Path=/${origin.startsWith('https:') ? '; Secure' : ''}`;
      if (jar.store(`${origin}/`, line) === 0) throw new InvalidArgumentError(`--cookie ${JSON.stringify(c)}: not a cookie a site could set (visible ASCII, at most 4 KiB)`);
    }
  }
  return jar;
}

/** One --header "Name: value", checked as HttpFetcher will send it. */
function headerFlag(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon < 0 ? '' : text.slice(0, colon).trim();
  const value = colon < 0 ? '' : text.slice(colon + 1).trim();
  if (!isHeaderField(name, value)) {
    throw new InvalidArgumentError(`--header ${JSON.stringify(text)}: expected "Name: value", a header name and a value of visible ASCII`);
  }
  if (isOwnHeader(name)) {
    throw new InvalidArgumentError(`--header ${JSON.stringify(text)}: meguri sets ${name} itself${/^user-agent$/i.test(name) ? ' (use --agent)' : ''}`);
  }
  return [name, value];
}

/** The PEM text of --ca FILE, refused when it holds no certificate. */
function readCaFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw inFile(err, file);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new InvalidArgumentError(`--ca ${file}: no PEM certificate in it (expected "-----BEGIN CERTIFICATE-----" blocks)`);
  }
  return text;
}

/**
 * The engine's politeness from --min-delay and --start-delay, over the crawl's own values
 * (`crawl`: saved in settings.json, or a cluster crawl's record): a flag given wins, the other
 * keeps the crawl's value, so a resume (or a node joining) giving one does not change the other.
 * A start delay of the crawl's below a newly given floor is dropped (its default, the larger of
 * 1s and the floor, applies again) rather than refused: the resume only asked to go slower.
 * Other keys a library embedder saved are kept, in their order (settings compare as JSON text).
 * Undefined when neither flag is given (the crawl's politeness, if any, applies as it is).
 * @throws InvalidArgumentError when --start-delay is below the floor in force.
 */
export function politenessFlags(minDelay: number | undefined, startDelay: number | undefined, crawl: EnginePoliteness | undefined): EnginePoliteness | undefined {
  if (minDelay === undefined && startDelay === undefined) return undefined;
  const floor = minDelay ?? crawl?.minDelayMs;
  const start = startDelay ?? crawl?.startDelayMs;
  const least = floor ?? DEFAULT_MIN_DELAY_MS;
  if (startDelay !== undefined && startDelay < least) {
    const from = minDelay !== undefined ? '' : floor !== undefined ? ", the crawl's" : ', the default';
    throw new InvalidArgumentError(`--start-delay ${startDelay}ms is below --min-delay (${least}ms${from}): a host never starts faster than the least interval; give a lower --min-delay too`);
  }
  const out: { -readonly [K in keyof EnginePoliteness]: EnginePoliteness[K] } = { ...crawl };
  if (floor !== undefined) out.minDelayMs = floor;
  if (start !== undefined && start >= least) out.startDelayMs = start;
  else delete out.startDelayMs;
  return out;
}

/** A cluster crawl's recorded politeness (the frontier's words) in the flags' words. */
function recordedPoliteness(recorded: ClusterCrawlSettings | undefined): EnginePoliteness | undefined {
  const p = recorded?.politeness;
  if (p?.['floorMs'] === undefined) return undefined;
  return { minDelayMs: p['floorMs'], ...(p['defaultIntervalMs'] !== undefined ? { startDelayMs: p['defaultIntervalMs'] } : {}) };
}

/** `meguri crawl`. */
export async function crawlCommand(typed: ParsedArgs, io: CliIo): Promise<number> {
  const dataDir = directoryFlag('data', resolvePath(typed.text('data')!));
  if (typed.has('redis')) refuseSingleProcessData(dataDir);
  let saved: CrawlSettings | undefined;
  try {
    saved = readCrawlSettings(dataDir);
  } catch (err) {
    throw inFile(err, join(dataDir, SETTINGS_FILE));
  }
  // From here on, the flags saved with the crawl count as given (saved-flags.ts).
  const resumed = resumeFlags(typed, saved?.extraSettings, join(dataDir, SETTINGS_FILE));
  const args = resumed.args;
  for (const n of resumed.notes) io.stderr.write(`meguri: ${n}\n`);
  const given = [...args.positionals];
  const sitemaps = args.list('sitemap');
  const seedsFile = args.text('seeds');
  if (seedsFile !== undefined) given.push(...readSeedsFile(seedsFile));
  const cluster = await clusterOf(args);
  const resumable = existsSync(join(dataDir, CHECKPOINT_FILE)) || existsSync(join(dataDir, PREV_CHECKPOINT_FILE)) || cluster !== undefined;
  if (given.length === 0 && sitemaps.length === 0 && !resumable) {
    throw new InvalidArgumentError(`crawl: nothing to crawl: give seed URLs (or --seeds FILE), or a --data directory holding a crawl to resume (${JSON.stringify(dataDir)} has none)`);
  }
  const agent = args.text('agent') ?? saved?.agent ?? cluster?.recordedAgent;
  if (agent === undefined) throw new InvalidArgumentError('crawl: --agent is required (e.g. --agent "MyBot/1.0 (+https://example.com/bot)"; sites identify and contact you by it)');
  const warcDir = directoryFlag('warc', resolvePath(args.text('warc') ?? join(dataDir, 'warc')));
  const budget = args.number('budget');
  const recrawl = args.flag('recrawl');
  if (budget !== undefined && !recrawl && saved?.recrawl !== true) throw new InvalidArgumentError('--budget applies to continuous mode: add --recrawl');
  const politeness = politenessFlags(args.number('min-delay'), args.number('start-delay'), saved?.politeness ?? cluster?.recordedPoliteness);
  const maxCrawlDelay = args.number('max-crawl-delay');
  const seeds = usableSeeds(given, resumable || sitemaps.length > 0, io);
  // Only what was given goes in: the engine fills in the rest from the saved settings.
  if (args.flag('allow-private') && args.flag('no-allow-private')) throw new InvalidArgumentError('--allow-private and --no-allow-private contradict each other: give one');
  const allowPrivate = args.flag('no-allow-private') ? false : args.flag('allow-private') || saved?.allowPrivate === true;
  const pairs = args.pairs('resolve').map(([n, ip]): [string, string] => [n, ip]);
  const maxLinks = args.number('max-links');
  const maxBody = args.number('max-body');
  const http = httpFlags(args, [...seeds, ...(saved?.seeds ?? [])]).http;
  const timeout = args.number('timeout');
  const caps = {
    ...(maxLinks !== undefined ? { maxLinks } : {}),
    ...(maxBody !== undefined ? { maxBodyBytes: maxBody, maxDecodedBytes: maxBody } : {}),
    ...(timeout !== undefined ? requestTimeouts(timeout) : {}),
  };
  const engine: CrawlSetup['engine'] = {
    agent,
    dataDir,
    seeds,
    ...(args.has('scope') ? { scope: args.text('scope') as EngineOptions['scope'] } : {}),
    ...(args.has('include') ? { include: args.list('include') } : {}),
    ...(args.has('exclude') ? { exclude: args.list('exclude') } : {}),
    ...(sitemaps.length > 0 ? { sitemaps: usableSeeds(sitemaps, resumable, io) } : {}),
    robotsSitemaps: !args.flag('no-robots-sitemaps'),
    learnParams: !args.flag('no-learn-params'),
    learnAliases: !args.flag('no-learn-aliases'),
    learnNoindex: !args.flag('no-learn-noindex'),
    cookies: !args.flag('no-cookies'),
    soft404Probe: !args.flag('no-soft404-probe'),
    ...(args.flag('requisites') ? { requisites: true } : {}),
    ...(args.has('metrics-port') ? { metrics: { port: args.number('metrics-port')! } } : {}),
    ...(http !== undefined || Object.keys(caps).length > 0 ? { http: { ...http, ...caps } } : {}),
    ...(args.has('max-pages') ? { maxPages: args.number('max-pages')! } : {}),
    ...(args.has('max-requests') ? { maxRequests: args.number('max-requests')! } : {}),
    ...(args.has('max-depth') ? { maxDepth: args.number('max-depth')! } : {}),
    ...(args.has('max-urls-per-host') ? { maxUrlsPerHost: args.number('max-urls-per-host')! } : {}),
    ...(args.has('concurrency') ? { concurrency: args.number('concurrency')! } : {}),
    ...(args.has('memory') ? { memoryBudget: args.number('memory')! } : {}),
    ...(args.has('grouping') ? { grouping: args.text('grouping') as EngineOptions['grouping'] } : {}),
    ...(args.has('checkpoint-every') ? { checkpointIntervalMs: args.number('checkpoint-every')! } : {}),
    maxWaitMs: args.has('max-wait') ? args.number('max-wait')! || Infinity : DEFAULT_MAX_WAIT_MS,
    ...(maxCrawlDelay !== undefined ? { maxCrawlDelayMs: maxCrawlDelay } : {}),
    ...(politeness !== undefined ? { politeness } : {}),
    ...(recrawl ? recrawlFreshness(budget ?? saved?.recrawlBudget ?? DEFAULT_RECRAWL_BUDGET) : budget !== undefined ? { recrawlBudget: budget } : {}),
    ...(args.flag('allow-private') ? { allowPrivate: true } : args.flag('no-allow-private') ? { allowPrivate: false } : {}),
    extraSettings: resumed.save,
    resolve: tableResolver(pairs, allowPrivate),
    ...(cluster !== undefined ? { cluster: cluster.options } : {}),
  };
  if (args.flag('insecure')) io.stderr.write('meguri: --insecure: TLS certificates are not verified\n');
  // The engine takes them out of the seeds by the same rule (src/engine/credentials.ts).
  const origins = Object.keys(splitSeedCredentials(seeds).credentials);
  if (origins.length > 0) {
    const clear = origins.some((o) => o.startsWith('http:')) ? ' (over http:// they cross the network in clear)' : '';
    io.stderr.write(`meguri: credentials in ${origins.length === 1 ? 'a seed URL are' : `seed URLs for ${origins.length} origins are`} sent as HTTP Basic auth to that origin only${clear}, and never saved: give the seed with them again to resume\n`);
  }
  const json = args.flag('json');
  DataDir.checkFree(dataDir);
  await preflightSeeds(engine, saved, allowPrivate, resumable, io);
  await preflightProxy(args.text('proxy'), !typed.has('proxy'));
  const hub = SignalHub.open(io, stillEnding(io, json));
  try {
    const result = await runCrawl(
      {
        engine,
        warcDir,
        warcMaxBytes: args.number('warc-size'),
        warcDigest: args.text('warc-digest') as 'sha1' | 'sha256' | undefined,
        warcRedact: args.flag('warc-redact'),
        log: { level: (args.text('log-level') ?? 'info') as LogLevel, format: (args.text('log-format') ?? 'lines') as 'lines' | 'json' },
        json,
        title: `meguri crawl → ${dataDir}`,
        progressIntervalMs: args.number('interval'),
        onEngine: (e) => {
          if (json) return;
          e.once('open', () => {
            if (saved !== undefined) io.stderr.write(`meguri: resuming ${dataDir} with its saved settings (${SETTINGS_FILE})\n`);
            for (const c of e.settingChanges) {
              if (c.name === 'extraSettings') continue; // said flag by flag below
              io.stderr.write(`meguri: ${FLAG_OF[c.name] ?? c.name}: ${shown(c.from)} → ${shown(c.to)} (overrides the saved value; recorded in ${SETTINGS_FILE})\n`);
            }
            for (const c of resumed.changes) {
              const why = c.to === undefined ? 'dropped by --unset' : 'overrides the saved value';
              io.stderr.write(`meguri: --${c.flag}: ${shownFlag(c.from)} → ${shownFlag(c.to)} (${why}; recorded in ${SETTINGS_FILE})\n`);
            }
          });
        },
      },
      io,
      hub,
    ).catch((err: unknown) => {
      throw inFlagWords(err, args, dataDir);
    });
    printCrawlEnd(result, io, json, dataDir, warcDir, !args.flag('no-cookies'), cluster?.options);
    if (result.interrupted) return EXIT.interrupted;
    if (result.summary.reason === 'waiting') return EXIT.waiting;
    // A cluster node that joined late may fetch nothing while the crawl went well: 0 on a drained crawl.
    if (cluster !== undefined) return EXIT.ok;
    return result.summary.okInCampaign === 0 && result.summary.reason !== 'stopped' ? EXIT.nothingFetched : EXIT.ok;
  } finally {
    hub.close();
  }
}

/**
 * `--redis` with a `--data` directory holding a single-process crawl: refused in flag words
 * (exit 2) before Redis is contacted or its settings.json read, as the Engine would refuse it
 * (datadir.ts `refuseSingleProcessCrawl`): a cluster node would not resume that crawl.
 */
function refuseSingleProcessData(dataDir: string): void {
  const found = singleProcessFiles(dataDir);
  if (found.length === 0) return;
  throw new InvalidArgumentError(
    `crawl: --data ${dataDir} holds a single-process crawl (${found.join(', ')}), which a cluster node (--redis) would not resume; ` +
      `resume it without --redis, --crawl and --store, give --data another directory, or remove ${found.join(', ')} from it to start fresh`,
  );
}

/**
 * `--redis URL --crawl NAME --store DIR [--slots N]`: the engine's cluster options, the agent
 * recorded with the crawl (a node joining without --agent uses it) and its politeness (a node
 * giving one of --min-delay and --start-delay keeps the other); undefined without `--redis`.
 */
async function clusterOf(args: ParsedArgs): Promise<{ options: EngineClusterOptions; recordedAgent: string | undefined; recordedPoliteness: EnginePoliteness | undefined } | undefined> {
  if (!args.has('redis')) {
    for (const f of ['crawl', 'store', 'slots', 'durability']) if (args.has(f)) throw new InvalidArgumentError(`crawl: --${f} applies to a cluster crawl: add --redis URL`);
    return undefined;
  }
  const redis = args.text('redis')!;
  const crawl = args.text('crawl');
  const store = args.text('store');
  if (crawl === undefined || store === undefined) throw new InvalidArgumentError('crawl: --redis needs --crawl NAME and --store DIR (the checkpoint store every node shares)');
  const recorded: ClusterCrawlSettings | undefined = await withRedis(redis, (client) => readCrawl(client, new ClusterKeys(crawl)));
  const durability = args.text('durability');
  const options: EngineClusterOptions = {
    redis,
    crawl,
    store: resolvePath(store),
    ...(args.has('slots') ? { slots: args.number('slots')! } : {}),
    ...(durability === 'aof' ? { durability: 'aof' as const } : durability === 'wait' ? { durability: { replicas: 1, timeoutMs: 1_000 } } : {}),
  };
  return { options, recordedAgent: recorded?.agent ?? undefined, recordedPoliteness: recordedPoliteness(recorded) };
}

/** How long the seed checks wait for a DNS answer, ms. */
const PREFLIGHT_DNS_MS = 5000;

/** Why a seed cannot be fetched under the settings, with the flag that would allow it. */
interface SeedRefusal {
  readonly seed: string;
  readonly reason: string;
  readonly fix: string;
}

/**
 * Asks of every seed, before the crawl starts, what the engine would: is it in the scope and
 * patterns, does its name exist, may its address be fetched. Each refusal is printed with the
 * flag that would allow it; when every seed is refused and there is no earlier work to
 * resume, the command stops with exit 2.
 */
async function preflightSeeds(engine: CrawlSetup['engine'], saved: CrawlSettings | undefined, allowPrivate: boolean, resumable: boolean, io: CliIo): Promise<void> {
  const before = saved?.seeds ?? [];
  const seeds = [...before, ...(engine.seeds ?? []).filter((s) => !before.includes(s))].filter((s) => canonicalize(s) !== null);
  if (seeds.length === 0) return;
  const scope = new Scope(engine.scope ?? saved?.scope ?? 'domain', seeds.map((u) => canonicalize(u)!), engine.include ?? saved?.include, engine.exclude ?? saved?.exclude);
  const dns = new DnsCache({ ...(engine.resolve ? { resolver: engine.resolve } : {}), maxConcurrent: 16 });
  const refusals: SeedRefusal[] = [];
  await Promise.all(
    seeds.map(async (seed) => {
      const url = canonicalize(seed)!;
      const out = scope.check(url);
      if (out !== undefined) {
        refusals.push({ seed, reason: `out of scope (${out})`, fix: out === 'excluded' ? 'drop the --exclude that matches it' : '--include a pattern that matches it' });
        return;
      }
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      // A resolver that does not answer in a few seconds leaves the verdict to the crawl.
      const answer = await Promise.race([dns.lookup(host), sleep(PREFLIGHT_DNS_MS, undefined, { ref: false })]);
      if (answer === undefined) return;
      if (!answer.ok) {
        if (answer.notFound) refusals.push({ seed, reason: `no such name ${host} (${answer.code})`, fix: allowPrivate ? `--resolve ${host}=IP` : `--resolve ${host}=IP, or --allow-private for a name only /etc/hosts knows` });
        return;
      }
      const why = answer.addresses.map((a) => refusalReason(a.address, allowPrivate));
      if (why.every((w) => w !== undefined)) refusals.push({ seed, reason: `${why[0]!} refused`, fix: '--allow-private' });
    }),
  );
  for (const r of refusals) io.stderr.write(`meguri: seed ${r.seed} refused: ${r.reason} (to allow it: ${r.fix})\n`);
  if (refusals.length === seeds.length && !resumable) {
    const first = refusals[0]!;
    throw new InvalidArgumentError(`crawl: every seed is refused by the settings — ${first.reason}; to allow it: ${first.fix}`);
  }
}

/**
 * `--proxy`: a TCP connection to the proxy before the crawl starts. A proxy that is down or
 * mistyped otherwise shows up as every site's robots.txt being unreachable, and each host then
 * waits minutes for its retry — in the checkpoint, so even a resume with the proxy fixed waits.
 * Only the connection is tried (the proxy's answers, a 407 for missing credentials, are the
 * crawl's to report per site); a proxy that neither accepts nor refuses in the connect timeout
 * counts as unreachable too. `saved`: the proxy came from settings.json, not the command line.
 */
async function preflightProxy(proxy: string | undefined, saved: boolean): Promise<void> {
  if (proxy === undefined) return;
  let u: URL;
  try {
    u = new URL(proxy);
  } catch {
    return; // the fetcher refuses it, in its own words
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return;
  const shown = u.origin;
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const problem = await new Promise<string | undefined>((done) => {
    const socket = connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port, timeout: PREFLIGHT_PROXY_MS });
    socket.once('connect', () => {
      socket.destroy();
      done(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      done(`no answer in ${seconds(PREFLIGHT_PROXY_MS)}`);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
  if (problem !== undefined) {
    throw new CliFailure('MEGURI_PROXY_UNREACHABLE', `--proxy ${shown}: cannot connect (${problem}); nothing was fetched`, EXIT.failure, `is the proxy running at that address?${saved ? ' (it is the one saved with the crawl: give --proxy URL, or --unset proxy to fetch directly)' : ''}`);
  }
}

/** How long the `--proxy` preflight waits for a connection. */
const PREFLIGHT_PROXY_MS = 10_000;

/**
 * The fetches (`fetchKey`s) whose page a killed run wrote (WARC, pages.jsonl) but never
 * journaled: interrupted fetches (`RecoveryInfo.interrupted`, URL and start) with a line in
 * pages.jsonl. Pages are written one at a time and each is journaled before the next is taken,
 * so a run leaves at most one (its last line); the engine keeps interrupted starts until their
 * URL's outcome is journaled, so one a run killed again before its refetch left is found too,
 * lines of that run after it (before, only the last line was compared, and the page was
 * written twice). Their refetch is not written.
 */
export function writtenBeforeKill(r: RecoveryInfo, pages: PagesIndex | undefined): Set<string> {
  if (!r.resumed || pages === undefined) return new Set();
  return pages.written(r.interrupted ?? []);
}

/**
 * Test hooks: with `MEGURI_TEST_HOLD_AFTER_WRITE=N` the crawl stops forever right after the Nth
 * page's outputs are written and before its outcome is journaled, with
 * `MEGURI_TEST_HOLD_AFTER_WARC=N` right after the Nth page's WARC records and before its
 * pages.jsonl line (announced on stderr), so a test can kill it at exactly that moment.
 */
function testHoldAfter(io: CliIo, name: string): number | undefined {
  const v = io.env[name];
  const n = v === undefined ? Number.NaN : Number(v);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function holdForTest(io: CliIo, what: string): Promise<never> {
  io.stderr.write(`meguri: test hold: ${what}\n`);
  return new Promise<never>(() => undefined);
}

/**
 * What a signal does once the crawl has ended but the command is still closing files or
 * printing: nothing but say so (the checkpoint is already on disk).
 */
export function stillEnding(io: CliIo, json: boolean): (signal: NodeJS.Signals) => void {
  return (signal) => {
    const message = `${signal}: the crawl has stopped and its checkpoint is written; finishing up (twice more to quit at once)`;
    if (json) new JsonEvents(io.stdout).emit('note', { message });
    else io.stderr.write(`${message}\n`);
  };
}

/**
 * The fetcher's timeouts for `--timeout TIME`: TIME for the whole request; for its headers and
 * between its body bytes a quarter of it, at least 30 s and never more than TIME (so the default
 * 2 min gives the fetcher's own 30 s); for the connection at most 10 s and half of TIME, so a
 * connection not made is told from a slow page (at TIME itself the total fired first, and a
 * silent network drop was charged to the page as its timeout). Raising TIME for a slow
 * site thus also waits longer for a slow first byte, which a total alone would not.
 */
export function requestTimeouts(totalMs: number): { totalTimeoutMs: number; headersTimeoutMs: number; bodyTimeoutMs: number; connectTimeoutMs: number } {
  const stall = Math.min(totalMs, Math.max(DEFAULT_STALL_TIMEOUT_MS, totalMs / 4));
  return { totalTimeoutMs: totalMs, headersTimeoutMs: stall, bodyTimeoutMs: stall, connectTimeoutMs: Math.min(totalMs / 2, DEFAULT_CONNECT_TIMEOUT_MS) };
}

/** When the engine may start its next fetch (a cluster node: over the slots it runs). */
function nextFetchOf(engine: Engine, nowMs: number): StatusContext['nextFetch'] {
  const atMs = engine.nextFetchAt();
  return atMs === undefined ? undefined : { atMs, nowMs };
}

/** After the failing hosts: when timeouts are what most of them failed with, the flag that waits longer. */
export function timeoutHint(hosts: readonly FailingHost[]): string {
  const timedOut = hosts.filter((h) => h.byKind[0]?.kind === 'timeout').length;
  return timedOut > 0 && timedOut * 2 >= hosts.length ? ' — --timeout TIME waits longer (default 2m)' : '';
}

/**
 * One failing host for the summary: "a.example 15× (8 timeout: total timeout after 120000 ms;
 * 4 incomplete; 3 protocol)" — its most frequent kind with that kind's latest message, then
 * the other kinds by count; a host that failed one way keeps the short form.
 */
export function failingText(h: FailingHost): string {
  if (h.byKind.length <= 1) return `${h.host} ${int(h.failures)}× (${h.reason})`;
  const [first, ...rest] = h.byKind;
  const message = h.reason.startsWith(first!.kind) ? h.reason.slice(first!.kind.length).replace(/^[:,] /, '') : h.reason;
  const head = message === '' ? `${int(first!.failures)} ${first!.kind}` : `${int(first!.failures)} ${first!.kind}: ${message}`;
  return `${h.host} ${int(h.failures)}× (${[head, ...rest.map((k) => `${int(k.failures)} ${k.kind}`)].join('; ')})`;
}

/** The end summary's line for soft-404 probes ('' for none). */
export function softProbesLine(c: CrawlCounts): string {
  const n = c.soft404Probes;
  if (n === 0) return '';
  const cleared = c.soft404Cleared;
  const said = [
    ...(cleared > 0 ? [`${int(cleared)} answered not found (or with another page), so the bodies shared there are pages, their URLs kept as pages`] : []),
    ...(n > cleared ? [`${int(n - cleared)} answered with the shared body or could not tell, so the shared body is the not-found page`] : []),
  ];
  return `  soft-404  ${int(n)} made-up URL${n === 1 ? '' : 's'} asked (a ten-digit id, a made-up hash, or …meguri-soft404-probe-…) before a body many URLs shared was read as the not-found page: ${said.join('; ')} — --no-soft404-probe skips the question`;
}

/** The counts line of the end summary: ok / redirects / 4xx / 5xx / network / refused / out of scope. */
export function countsLine(c: CrawlCounts): string {
  const of = [
    ...(c.sitemaps > 0 ? [`${int(c.sitemaps)} of them sitemap${c.sitemaps === 1 ? '' : 's'}, not counted as pages`] : []),
    ...(c.relinked > 0 ? [`${int(c.relinked)} of them pages fetched again: a shorter path within --max-depth found after their fetch`] : []),
  ];
  const parts = [`${int(c.ok)} ok${of.length > 0 ? ` (${of.join('; ')})` : ''}`, `${int(c.redirects)} redirects`, `${int(c.clientErrors)} 4xx${c.soft404s > 0 ? ` (${int(c.soft404s)} of them soft-404s: answered 200, read as the not-found page; --max-pages counts them)` : ''}`, `${int(c.serverErrors)} 5xx`, `${int(c.networkErrors)} network errors`];
  if (c.incomplete > 0) parts.push(`${int(c.incomplete)} broken off mid-answer`);
  const refused = Object.entries(c.refusedBy).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${int(n)}`);
  parts.push(`${int(c.refusedByPolicy)} refused by policy${refused.length > 0 ? ` (${refused.join(', ')})` : ''}`);
  if (c.robotsDisallowed > 0) parts.push(`${int(c.robotsDisallowed)} disallowed by robots.txt`);
  const out = Object.entries(c.outOfScopeBy).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${int(n)}`);
  parts.push(`${int(c.outOfScope)} out of scope${out.length > 0 ? ` (${out.join(', ')})` : ''}`);
  if (c.handlerFailed > 0) parts.push(`${int(c.handlerFailed)} handler failures`);
  return parts.join(' · ');
}

/**
 * The end summary's line on URLs the trap defence parked (none: ''), each rule with the flag
 * that sets it — a crawl that ends with most of its URLs past --max-depth should say so. URLs
 * parked by a host's trap patterns are let out the same way: a resume whose limit widened sends
 * every parked URL of its hosts through admission again (`Frontier.setAdmission`), and the trap
 * detector's flags are not checkpointed, so the patterns are counted afresh (a site that is a
 * trap is flagged again by its new URLs; the ones queued stay queued).
 */
export function trappedLine(by: TrappedBy, limits: { readonly maxDepth: number; readonly maxUrlsPerHost: number }): string {
  const total = by.depth + by.budget + by.pattern;
  if (total === 0) return '';
  const parts: string[] = [];
  if (by.depth > 0) parts.push(`${int(by.depth)} past --max-depth ${limits.maxDepth}`);
  if (by.budget > 0) parts.push(`${int(by.budget)} over --max-urls-per-host ${limits.maxUrlsPerHost}`);
  if (by.pattern > 0) parts.push(`${int(by.pattern)} on hosts that look like crawler traps (calendars, facets, session ids, repeated path segments)`);
  const raise = [by.depth > 0 ? '--max-depth' : '', by.budget > 0 || by.pattern > 0 ? '--max-urls-per-host' : ''].filter(Boolean).join(' or ');
  const afresh = by.pattern > 0 ? ' — a resume counts the trap patterns afresh' : '';
  return `  trapped   ${int(total)} URL${total === 1 ? '' : 's'} not fetched: ${parts.join(' · ')} (to follow them, raise ${raise} and resume; 0 = unlimited${afresh})`;
}

/** Pages whose links past the per-page cap were not taken, and the flag that takes more; '' when none. */
export function linksCappedLine(c: CrawlCounts, maxLinks: number): string {
  if (c.linksCapped === 0) return '';
  return `  links     ${pagesNamed(c.linksCapped, c.linksCappedExample)} had more than ${int(maxLinks)} distinct links: those past it were not followed (--max-links N takes more from the pages fetched after it is given)`;
}

/** `1 page (URL)` or `N pages (e.g. URL)`: the pages a cap line names. */
function pagesNamed(count: number, example: string | undefined): string {
  return count === 1 ? `1 page (${example ?? '?'})` : `${int(count)} pages (e.g. ${example ?? '?'})`;
}

/** Pages cut at the body cap, and the flag that keeps more; '' when none. */
export function bodiesCutLine(c: CrawlCounts, maxBody: number): string {
  if (c.bodiesCut === 0) return '';
  return `  cut       ${pagesNamed(c.bodiesCut, c.bodiesCutExample)} ${c.bodiesCut === 1 ? 'was' : 'were'} longer than ${bytes(maxBody)}: kept up to it, links past it not taken (its WARC record is marked WARC-Truncated only if bytes of the response are missing from it) (--max-body SIZE keeps more from the pages fetched after it is given)`;
}

/** The end summary's line on sitemaps read only in part ('' for none). */
export function sitemapsCutLine(c: CrawlCounts): string {
  if (c.sitemapsCut === 0) return '';
  const named = c.sitemapsCut === 1 ? c.sitemapsCutExample : `${int(c.sitemapsCut)} sitemaps (the first ${c.sitemapsCutExample})`;
  return `  cut       ${named} ${c.sitemapsCut === 1 ? 'was' : 'were'} read only in part — past the protocol's 50 MiB, or cut by a timeout or a broken connection: the entries before the cut were taken`;
}

/** The end summary's line on links dropped as a catch-all path's echoes ('' for none). */
export function echoLine(c: CrawlCounts): string {
  if (c.echoLinks === 0) return '';
  return `  echoes    ${int(c.echoLinks)} link${c.echoLinks === 1 ? '' : 's'} not followed: pages repeating a parent directory's relative navigation one level deeper (a catch-all path such as /index.php/…)`;
}

/**
 * Trapped URLs by the rule that parks them, in words without flags (`meguri stats`, the demo):
 * one part per rule with URLs, none when nothing is trapped. The end summary names the flags
 * instead (`trappedLine`).
 */
export function trapRuleParts(by: TrappedBy): string[] {
  return [
    by.depth > 0 ? `${int(by.depth)} past the depth cap` : '',
    by.budget > 0 ? `${int(by.budget)} over a host's URL budget` : '',
    by.pattern > 0 ? `${int(by.pattern)} matching a host's trap patterns (calendars, facets, session ids, repeated path segments)` : '',
  ].filter(Boolean);
}

/**
 * The end summary's line on hosts' blocks ('' for none): runs of 403s a page served before was
 * asked again to judge (src/frontier/blocks.ts) — a block (a firewall answering 403 to every URL
 * for a while), whose URLs were asked again later, or the pages' own 403s.
 */
export function blocksLine(b: BlockCounts): string {
  if (b.confirmed === 0 && b.dismissed === 0) return '';
  const parts: string[] = [];
  if (b.confirmed > 0) {
    parts.push(
      `${int(b.confirmed)} run${b.confirmed === 1 ? '' : 's'} of 403s where a page served before got 403 too — the host blocking this crawler for a while (a firewall's rate rule): ${int(b.retried)} of its 403s taken as the block's, their URLs asked again later (for up to 30 minutes of block), the host slowed`,
    );
  }
  if (b.dismissed > 0) parts.push(`${int(b.dismissed)} run${b.dismissed === 1 ? '' : 's'} of 403s were the pages' own (a page served before was asked again and served)`);
  return `  blocked   ${parts.join('; ')}`;
}

/** Why nothing was fetched, with the flag that would change it (`cookies`: whether the crawl kept them). */
export function nothingFetched(s: CrawlSummary, cookies = true, clusterNode = false): string {
  const c = s.counts;
  if (c.refusedBy['private-address'] > 0) return `${int(c.refusedBy['private-address'])} URL(s) refused: private or loopback address — add --allow-private`;
  if (s.unresolvedHosts.length > 0) return `no such name: ${s.unresolvedHosts.map((h) => h.host).slice(0, 3).join(', ')} — check the URL, or --resolve NAME=IP`;
  if (s.refusedSeeds.length > 0) return `every seed was refused (${s.refusedSeeds[0]!.reason}) — see --scope, --include, --exclude`;
  if (c.outOfScope > 0 && c.ok === 0) return `${int(c.outOfScope)} URL(s) out of scope — widen --scope or --include`;
  const robots = s.robotsUnreachable[0];
  if (robots !== undefined && c.ok === 0) return `robots.txt of ${robots.host}${s.robotsUnreachable.length > 1 ? ` and ${int(s.robotsUnreachable.length - 1)} more` : ''} unreachable — a host is not fetched while its robots.txt does not answer (RFC 9309); check the URL and port`;
  const top = s.failingHosts[0];
  if (c.robotsDisallowed > 0 && top === undefined) return `${int(c.robotsDisallowed)} URL(s) disallowed by the sites' robots.txt for this --agent — meguri obeys it`;
  const self = c.selfRedirects;
  if (self > 0 && c.ok === 0) {
    return cookies
      ? `${int(self)} answer(s) redirected to the page itself, cookies kept and sent back (a check that wants a script to run, or a loop)`
      : `${int(self)} answer(s) redirected to the page itself, a cookie check — run without --no-cookies`;
  }
  if (top?.reason.startsWith('HTTP 401') === true) return `${top.host}: HTTP 401, a password is wanted — give the seed as https://user:password@host/ (sent to that origin only, never saved)`;
  // A bare 403 on every page (a challenge names itself: see the fetcher's notes) is a rule against
  // this client, most often a firewall or CDN rule on the User-Agent or the address.
  if (top?.reason === 'HTTP 403') return `${top.host}: HTTP 403, the server refuses this client — often a firewall or CDN rule against crawlers' User-Agents or addresses; meguri will not pose as a browser: ask the site's owner to allow your --agent`;
  if (top !== undefined) return `${top.host}: ${top.reason}`;
  // A cluster node that asked nothing: the other nodes held every host (each host is one node's
  // at a time), which on a one-site crawl is the rule, not a fault.
  if (clusterNode && c.ok + c.redirects + c.clientErrors + c.serverErrors + c.networkErrors + c.incomplete === 0) return "this node asked for no page: the crawl's hosts were held by the other nodes (a host is one node's at a time; a one-site crawl runs on one node) — meguri stats --redis … --crawl … --store … shows the crawl";
  return 'no page answered';
}

/**
 * The end summary's line on query keys learned ignorable ('' for none): which sections of which
 * sites drop which keys, how many links lost them and how many queued copies were not fetched.
 */
export function paramsLine(learned: CrawlSummary['learnedParams'], c: CrawlCounts): string {
  if (learned.length === 0 && c.paramRewrites === 0 && c.paramCopies === 0) return '';
  const items = learned.flatMap((l) => describeLessons(l.scope, l.keys));
  const shown = items.slice(0, 3).join('; ');
  const more = items.length > 3 ? `; ${int(items.length - 3)} more` : '';
  const one = learned.length === 1 && learned[0]!.keys.length === 1;
  const copies = `${int(c.paramRewrites)} link${c.paramRewrites === 1 ? '' : 's'} taken without ${one ? 'it' : 'them'}, ${int(c.paramCopies)} queued cop${c.paramCopies === 1 ? 'y' : 'ies'} not fetched`;
  const why = `learned from pages with the same text whose rel=canonical is their URL without ${one ? 'it' : 'the key'} (or without leading path segments), or that differ only in a return-to key like ?redirect_to; --no-learn-params keeps such keys`;
  return `  params    ${shown === '' ? 'no key learned now' : `${shown}${more}`} — ${copies} (${why})`;
}

/**
 * The end summary's line on query keys learned to select a view of a page ('' for none): which
 * sections drop which keys, how many links lost them and how many queued URLs were not fetched.
 */
export function viewsLine(views: CrawlSummary['viewKeys'], c: CrawlCounts): string {
  if (views.length === 0 && c.viewRewrites === 0 && c.viewCopies === 0) return '';
  const shown = views
    .slice(0, 3)
    .map((v) => `${v.section}…?${v.keys.join(', ')}`)
    .join('; ');
  const more = views.length > 3 ? `; ${int(views.length - 3)} more` : '';
  const copies = `${int(c.viewRewrites)} link${c.viewRewrites === 1 ? '' : 's'} taken without them, ${int(c.viewCopies)} queued URL${c.viewCopies === 1 ? '' : 's'} not fetched`;
  return `  views     ${shown === '' ? 'no key learned now' : `${shown}${more}`} — ${copies} (filters and sort orders: pages whose rel=canonical is their URL without the key brought no link the crawl did not know; one URL in 32 is still fetched as a check; --no-learn-params keeps them)`;
}

/**
 * The end summary's line on paths learned to answer a login form whatever is asked ('' for none):
 * which paths, and how many queued URLs were not fetched.
 */
export function loginWallsLine(walls: CrawlSummary['loginWalls'], c: CrawlCounts): string {
  if (walls.length === 0 && c.loginWalled === 0) return '';
  const shown = walls.slice(0, 3).join(', ');
  const more = walls.length > 3 ? ` and ${int(walls.length - 3)} more` : '';
  const skipped = `${int(c.loginWalled)} queued URL${c.loginWalled === 1 ? '' : 's'} there not fetched`;
  return `  login     ${shown === '' ? 'no path walled now' : `${shown}${more}`} — ${skipped} (each path answered one login form, a password field and the same text, for five URLs; one in 32 is still fetched as a check; --no-learn-params fetches them all)`;
}

/**
 * The end summary's line on URL shapes learned to redirect where the crawl does not go ('' for
 * none): which shapes, and how many queued URLs were not fetched. (Its rules in words:
 * `DeadEndRedirects`' options and `isCheck`; keep in sync, as `parentRedirectsLine`.)
 */
export function deadEndRedirectsLine(shapes: CrawlSummary['deadEndRedirects'], c: CrawlCounts): string {
  if (shapes.length === 0 && c.deadEndRedirects === 0) return '';
  const shown = shapes.slice(0, 3).join(', ');
  const more = shapes.length > 3 ? ` and ${int(shapes.length - 3)} more` : '';
  const skipped = `${int(c.deadEndRedirects)} queued URL${c.deadEndRedirects === 1 ? '' : 's'} not fetched`;
  return `  dead ends ${shown === '' ? 'no shape learned now' : `${shown}${more}`} — ${skipped} (eight URLs of each shape redirected where the crawl does not go — a login form, another site, a path robots.txt disallows, a page another lesson refuses — and none served a page nor, once one was a dead end, led to a page the crawl had not met; its first refusals and then one in 32 still fetched as checks; --no-learn-aliases fetches them all)`;
}

/**
 * The end summary's line on URL shapes learned to serve copies of pages they name canonical ('' for
 * none): which shapes, and how many queued URLs were not fetched. (Its rules in words:
 * `NamedCopies`' options and `isCheck`; keep in sync, as `deadEndRedirectsLine`.)
 */
export function namedCopiesLine(shapes: CrawlSummary['namedCopies'], c: CrawlCounts): string {
  if (shapes.length === 0 && c.namedCopies === 0) return '';
  const shown = shapes.slice(0, 3).join(', ');
  const more = shapes.length > 3 ? ` and ${int(shapes.length - 3)} more` : '';
  const skipped = `${int(c.namedCopies)} queued URL${c.namedCopies === 1 ? '' : 's'} not fetched`;
  return `  copies of ${shown === '' ? 'no shape learned now' : `${shown}${more}`} — ${skipped} (eight URLs of each shape served a copy of another page they named canonical, one the crawl had reached otherwise, and none served a page of its own; its first refusals and then one in 32 still fetched as checks; --no-learn-aliases fetches them all)`;
}

/**
 * The end summary's line on URL shapes learned to redirect into (or copy) their parent page ('' for none):
 * which shapes, and how many queued URLs were not fetched. (Its rules in words:
 * `ParentRedirects`' options and `isCheck`; keep in sync, as `noindexLine`.)
 */
export function parentRedirectsLine(shapes: CrawlSummary['parentRedirects'], c: CrawlCounts): string {
  if (shapes.length === 0 && c.parentRedirects === 0) return '';
  const shown = shapes.slice(0, 3).join(', ');
  const more = shapes.length > 3 ? ` and ${int(shapes.length - 3)} more` : '';
  const skipped = `${int(c.parentRedirects)} queued URL${c.parentRedirects === 1 ? '' : 's'} not fetched`;
  return `  redirects ${shown === '' ? 'no shape learned now' : `${shown}${more}`} — ${skipped} (eight URLs of each shape redirected into their parent page or served a copy of it, and none served a page of its own; refused once the parent page was fetched, its first refusals and then one in 32 still fetched as checks; --no-learn-aliases fetches them all)`;
}

/**
 * The end summary's line on URL shapes learned to say noindex and nofollow ('' for none): which
 * shapes, and how many queued URLs were not fetched. (Its rules in words: `NoindexShapes`' options
 * and `isCheck`; keep in sync.)
 */
export function noindexLine(shapes: CrawlSummary['noindexShapes'], c: CrawlCounts): string {
  if (shapes.length === 0 && c.noindexSkipped === 0) return '';
  const shown = shapes.slice(0, 3).join(', ');
  const more = shapes.length > 3 ? ` and ${int(shapes.length - 3)} more` : '';
  const skipped = `${int(c.noindexSkipped)} queued URL${c.noindexSkipped === 1 ? '' : 's'} not fetched`;
  return `  noindex   ${shown === '' ? 'no shape learned now' : `${shown}${more}`} — ${skipped} (eight pages of each shape said noindex and nofollow, and none said otherwise; its first refusals and then one in 32 are still fetched as checks; --no-learn-noindex fetches them all)`;
}

/**
 * The end summary's line on query pairs learned to name a page the crawl knows as theirs ('' for
 * none): which pairs on which paths, and how many queued URLs were not fetched.
 */
export function copiesLine(copies: CrawlSummary['knownCopies'], c: CrawlCounts): string {
  if (copies.length === 0 && c.knownCopies === 0) return '';
  const shown = copies
    .slice(0, 3)
    .map((l) => `${l.scope}?${l.pairs.join(', ?')}`)
    .join('; ');
  const more = copies.length > 3 ? `; ${int(copies.length - 3)} more` : '';
  const skipped = `${int(c.knownCopies)} queued URL${c.knownCopies === 1 ? '' : 's'} not fetched`;
  return `  copies    ${shown === '' ? 'no pair learned now' : `${shown}${more}`} — ${skipped} (pages fetched under the pair named, by rel=canonical or redirect, a page the crawl knew as theirs; one in 32 is still fetched as a check; --no-learn-params fetches them all)`;
}

/** A link shape's origin and path (`http://a/v.php?p` → `http://a/v.php`). */
function pathOnly(shape: string): string {
  const q = shape.indexOf('?');
  return q < 0 ? shape : shape.slice(0, q);
}

/**
 * The end summary's line on URL shapes learned to serve, at an anchored link, the page it is on
 * ('' for none): which shapes, and how many links and queued URLs were not fetched.
 */
export function anchorsLine(shapes: CrawlSummary['anchorCopies'], c: CrawlCounts): string {
  if (shapes.length === 0 && c.anchorCopies === 0) return '';
  const shown = shapes
    .slice(0, 3)
    .map((key) => {
      const [from, shape] = [key.slice(0, key.indexOf(' ')), key.slice(key.indexOf(' ') + 1)];
      return `${shape}… on ${from === pathOnly(shape) ? 'its own pages' : from}`;
    })
    .join(', ');
  const more = shapes.length > 3 ? ` and ${int(shapes.length - 3)} more` : '';
  const skipped = `${int(c.anchorCopies)} link${c.anchorCopies === 1 ? '' : 's'} not followed`;
  return `  anchors   ${shown === '' ? 'no shape learned now' : `${shown}${more}`} — ${skipped} (each a permalink to a spot on the page it sits on, #id and all, and three of that shape fetched from such pages were copies of their page; one in 32 is still fetched as a check; --no-learn-params follows them)`;
}

/**
 * The end summary's line on origins learned moved ('' for none): which origin moved where, and
 * how many links were taken straight there (each distinct URL among them a redirect not fetched).
 */
export function aliasesLine(learned: CrawlSummary['learnedAliases'], c: CrawlCounts): string {
  if (learned.length === 0 && c.aliasRewrites === 0 && c.aliasCopies === 0) return '';
  const shown = learned
    .slice(0, 3)
    .map((a) => `${a.from} → ${a.to}`)
    .join('; ');
  const more = learned.length > 3 ? `; ${int(learned.length - 3)} more` : '';
  const copies = c.aliasCopies > 0 ? `, ${int(c.aliasCopies)} queued redirect${c.aliasCopies === 1 ? '' : 's'} not fetched` : '';
  const links = `${int(c.aliasRewrites)} link${c.aliasRewrites === 1 ? '' : 's'} taken straight there${copies}`;
  return `  aliases   ${shown === '' ? 'nothing learned now' : `${shown}${more}`} — ${links} (learned from 3 permanent redirects of one kind; --no-learn-aliases follows a redirect per URL)`;
}

/**
 * The end summary's line on a run that ended because every host left must wait (stop reason
 * `waiting`; '' otherwise): which host goes first, when and why, and the command to run then.
 */
export function waitLine(s: CrawlSummary, hosts: readonly HostStatus[], resume: string): string {
  if (s.reason !== 'waiting') return '';
  let first: HostStatus | undefined;
  let held = 0;
  for (const h of hosts) {
    if (h.queued === 0 || h.nextAtMs === undefined) continue;
    held++;
    if (first === undefined || h.nextAtMs < first.nextAtMs!) first = h;
  }
  const at = s.resumeAtMs === undefined ? '' : ` at ${new Date(s.resumeAtMs).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  const others = held > 1 ? `; ${int(held - 1)} more host${held === 2 ? '' : 's'} held later: meguri hosts --why` : '';
  const who = first === undefined ? '' : ` (${first.host}: ${first.reason}${others})`;
  return `  wait   the next fetch allowed is${at}${who}, past --max-wait — nothing was skipped: run ${resume} then to go on (--max-wait 0 waits in the run)`;
}

/**
 * The command that brings a cluster node back into its crawl, and what it leaves out: a node
 * keeps no settings.json (the crawl-wide settings are in Redis), so `--data` alone would start
 * a new single-process crawl; the node's own --resolve / --allow-private are kept nowhere, and
 * a password in the Redis URL is not printed.
 */
export function rejoinCommand(cluster: Pick<EngineClusterOptions, 'redis' | 'crawl' | 'store'>, dataDir: string): { command: string; note: string } {
  const redis = withoutCredentials(cluster.redis);
  const command = `npx meguri crawl --redis ${redis.text} --crawl ${cluster.crawl} --store ${cluster.store} --data ${dataDir}`;
  const password = redis.stripped ? '; add the Redis URL\'s user:password' : '';
  return { command, note: `the crawl's settings are in Redis; give this node's own --resolve / --allow-private again${password}` };
}

/**
 * Continuous mode's end summary: when the next fetch was due as the run ended, once it is a
 * while off (every page fetched, the next recrawl in a later hour; '' when URLs were due or
 * nothing was queued, as on the progress line). Pages go stale while no crawl runs, so the
 * time says when resuming starts to matter.
 */
export function nextRecrawlLine(next: StatusContext['nextFetch']): string {
  if (next === undefined || !Number.isFinite(next.atMs) || next.atMs - next.nowMs < NAME_NEXT_FETCH_MS) return '';
  return `  next   the next recrawl is due at ${untilText(next.atMs, next.atMs - next.nowMs)}`;
}

/** The end summary's line on listings paged past their end ('' for none). */
export function pagingLine(c: CrawlCounts): string {
  if (c.pagingEnds === 0) return '';
  return `  paging    ${int(c.pagingEnds)} link${c.pagingEnds === 1 ? '' : 's'} to later pages not followed: listing pages past their end repeating the page before (?page=… or /page/…/: the same links, the same words)`;
}

/**
 * The end summary's line on one spelling learner (`PathCase`): the origins it learned, saying
 * `what` of them, the links it took to the spelling met first and the queued spellings it did
 * not fetch ('' when it learned and saved nothing).
 */
function spellingLine(label: string, origins: readonly string[], what: (many: boolean) => string, rewrites: number, copies: number, learnedFrom: string): string {
  if (origins.length === 0 && rewrites === 0 && copies === 0) return '';
  const shown = origins.slice(0, 3).join(', ') + (origins.length > 3 ? ` and ${int(origins.length - 3)} more` : '');
  const skipped = copies > 0 ? `, ${int(copies)} queued spelling${copies === 1 ? '' : 's'} of pages served not fetched` : '';
  const lesson = origins.length === 0 ? 'nothing learned now' : `${shown} ${what(origins.length > 1)}`;
  return `  ${label.padEnd(10)}${lesson} — ${int(rewrites)} link${rewrites === 1 ? '' : 's'} taken to the spelling met first${skipped} (${learnedFrom})`;
}

/** The end summary's line on origins learned to ignore the letter case of paths ('' for none, and nothing it saved). */
export function caseLine(origins: readonly string[], c: CrawlCounts): string {
  const what = (many: boolean): string => `${many ? 'ignore' : 'ignores'} the letter case of paths`;
  return spellingLine('case', origins, what, c.caseRewrites, c.caseCopies, 'learned from 2 pages served with the same text under two spellings, neither naming another canonical; a few other spellings are still fetched as checks; --no-learn-aliases fetches every spelling');
}

/** The end summary's line on origins learned to serve a directory's index file as the directory ('' for none, and nothing it saved). */
export function indexLine(origins: readonly string[], c: CrawlCounts): string {
  const what = (many: boolean): string => `${many ? 'serve' : 'serves'} a directory's index file as the directory (/a/index.html = /a/)`;
  return spellingLine('index', origins, what, c.indexRewrites, c.indexCopies, 'learned from 2 pages served with the same text under both; a few are still fetched as checks; --no-learn-aliases fetches both');
}

/**
 * The end summary's line on links a lesson rewrote to a missing page ('' for none): the lesson
 * was unlearned and each link fetched as found instead.
 */
/**
 * The end summary's line on seeds whose redirect or refresh led out of the scope ('' for none):
 * their targets became seeds, so the crawl went where no seed named — say so, and where.
 */
export function seedRedirectLine(list: readonly SeedRedirect[]): string {
  if (list.length === 0) return '';
  const shown = list.slice(0, 2).map((r) => `${r.from} → ${r.to}${r.how === 'refresh' ? ' (meta refresh)' : ''}`).join('; ');
  const more = list.length > 2 ? `; and ${int(list.length - 2)}${list.length >= 100 ? '+' : ''} more` : '';
  return `  seeds     ${shown}${more}: ${list.length === 1 ? 'a seed leads' : 'seeds lead'} out of the scope, so ${list.length === 1 ? 'its target was' : 'their targets were'} taken as ${list.length === 1 ? 'a seed' : 'seeds'} (saved with the settings; --exclude keeps one out)`;
}

export function rewriteMissLine(misses: readonly string[]): string {
  if (misses.length === 0) return '';
  const shown = misses.slice(0, 2).join(', ');
  const more = misses.length > 2 ? ` and ${int(misses.length - 2)}${misses.length >= 100 ? '+' : ''} more` : '';
  return `  misses    ${int(misses.length)}${misses.length >= 100 ? '+' : ''} link${misses.length === 1 ? '' : 's'} taken by a learned alias or key to a page that is not there (404/410): the lesson was unlearned and ${misses.length === 1 ? 'it was' : 'they were'} fetched as found (${shown}${more})`;
}

/**
 * The end summary's line on hosts whose robots.txt could not be read ('' for none): a crawl
 * stopped while its only host waits on robots.txt retries otherwise ends saying nothing of why.
 */
export function robotsLine(list: readonly UnreachableRobots[]): string {
  if (list.length === 0) return '';
  const shown = list.slice(0, 3).map((r) => `${r.host}: ${r.reason}`).join('; ');
  // The summary lists at most 100: at that many there may be more.
  const more = list.length > 3 ? `; ${int(list.length - 3)}${list.length >= 100 ? '+' : ''} more hosts (meguri hosts --why)` : '';
  const waiting = list.some((r) => !r.gaveUp) ? ' — their URLs wait until robots.txt answers (RFC 9309), and a resume tries again' : '';
  return `  robots    ${shown}${more}${waiting}`;
}

function printCrawlEnd(result: CrawlResult, io: CliIo, json: boolean, dataDir: string, warcDir: string, cookies: boolean, cluster: EngineClusterOptions | undefined): void {
  const s = result.summary;
  const p = s.progress;
  const rejoin = cluster === undefined ? undefined : rejoinCommand(cluster, dataDir);
  const resume = rejoin?.command ?? `npx meguri crawl --data ${dataDir}`;
  if (json) {
    new JsonEvents(io.stdout).emit('end', {
      reason: s.reason,
      ...(s.resumeAtMs !== undefined ? { resumeAt: new Date(s.resumeAtMs).toISOString() } : {}),
      ...(result.scriptShells.length > 0 ? { scriptShells: result.scriptShells } : {}),
      ...(result.shellHosts.length > 0 ? { shellHosts: result.shellHosts } : {}),
      ...(result.calendars.length > 0 ? { calendars: result.calendars } : {}),
      interrupted: result.interrupted,
      fetched: p.fetched,
      fetchedThisRun: p.fetchedThisRun,
      okInCampaign: s.okInCampaign,
      counts: s.counts,
      failingHosts: s.failingHosts,
      blocks: s.blocks,
      unresolvedHosts: s.unresolvedHosts,
      robotsUnreachable: s.robotsUnreachable,
      learnedParams: s.learnedParams,
      viewKeys: s.viewKeys,
      loginWalls: s.loginWalls,
      knownCopies: s.knownCopies,
      anchorCopies: s.anchorCopies,
      noindexShapes: s.noindexShapes,
      parentRedirects: s.parentRedirects,
      deadEndRedirects: s.deadEndRedirects,
      namedCopies: s.namedCopies,
      learnedAliases: s.learnedAliases,
      caseInsensitive: s.caseInsensitive,
      indexFiles: s.indexFiles,
      rewriteMisses: s.rewriteMisses,
      seedRedirects: s.seedRedirects,
      settingChanges: s.settingChanges,
      urls: result.stats === undefined ? null : result.urlsAfter,
      warcFiles: result.warcFiles,
      warcBytes: result.warcBytes,
      pagesFile: join(dataDir, PAGES_FILE),
      resume,
      ...(result.nextFetch !== undefined && Number.isFinite(result.nextFetch.atMs) ? { nextFetchAt: new Date(result.nextFetch.atMs).toISOString() } : {}),
      stats: result.stats ?? null,
    });
    return;
  }
  // A cluster node holds no frontier of its own at the end (its slots are checkpointed and
  // released): the crawl's URLs are for `meguri stats --redis`, and this node's pages are its own.
  const known = result.stats === undefined ? ' by this node (the crawl\'s URLs: meguri stats --redis … --crawl … --store …)' : `, ${int(result.urlsAfter)} URL${result.urlsAfter === 1 ? '' : 's'} known`;
  const why = { drained: 'nothing left to fetch', maxPages: 'page limit reached', maxRequests: 'request limit reached', stopped: 'stopped', aborted: 'aborted', diskFull: 'disk full', waiting: 'every host left asks to wait' }[s.reason];
  const failing = s.failingHosts.map(failingText).join('; ') + timeoutHint(s.failingHosts);
  io.stdout.write(
    `${[
      `meguri crawl: ${why} after ${seconds(result.elapsedMs / 1000)} — ${int(p.fetchedThisRun)} fetched this run, ${int(p.fetched)} in the campaign (${int(s.okInCampaign)} OK)${known}`,
      `  this run  ${countsLine(s.counts)}`,
      failing === '' ? '' : `  failing   ${failing}`,
      blocksLine(s.blocks),
      robotsLine(s.robotsUnreachable),
      aliasesLine(s.learnedAliases, s.counts),
      caseLine(s.caseInsensitive, s.counts),
      indexLine(s.indexFiles, s.counts),
      paramsLine(s.learnedParams, s.counts),
      viewsLine(s.viewKeys, s.counts),
      loginWallsLine(s.loginWalls, s.counts),
      copiesLine(s.knownCopies, s.counts),
      anchorsLine(s.anchorCopies, s.counts),
      noindexLine(s.noindexShapes, s.counts),
      parentRedirectsLine(s.parentRedirects, s.counts),
      deadEndRedirectsLine(s.deadEndRedirects, s.counts),
      namedCopiesLine(s.namedCopies, s.counts),
      rewriteMissLine(s.rewriteMisses),
      seedRedirectLine(s.seedRedirects),
      s.unresolvedHosts.length === 0 ? '' : `  no such name  ${s.unresolvedHosts.map((h) => `${h.host} (${h.code}, ${int(h.urls)} URLs refused at once)`).join('; ')}`,
      s.okInCampaign === 0 && !result.interrupted ? `  nothing fetched: ${nothingFetched(s, cookies, result.stats === undefined)}` : '',
      result.stats === undefined ? '' : trappedLine(result.stats.trappedBy, result.limits),
      echoLine(s.counts),
      pagingLine(s.counts),
      softProbesLine(s.counts),
      s.counts.sitemaps === 0 ? scriptLine(result.scriptShells) : '',
      shellsLine(result.shellHosts),
      calendarLine(result.calendars, int) ?? '',
      linksCappedLine(s.counts, result.limits.maxLinks),
      bodiesCutLine(s.counts, result.limits.maxBody),
      sitemapsCutLine(s.counts),
      waitLine(s, result.hosts, resume),
      nextRecrawlLine(result.nextFetch),
      `  pages  ${join(dataDir, PAGES_FILE)} (+${int(result.pagesWritten)} lines)`,
      `  WARC   ${result.warcFiles.length === 0 ? 'no records this run' : `${result.warcFiles.length} file(s), ${bytes(result.warcBytes)} in ${warcDir}`}`,
      result.stats === undefined && (s.reason === 'maxPages' || s.reason === 'maxRequests') && !result.interrupted
        ? `  limit  the crawl's ${s.reason === 'maxPages' ? '--max-pages' : '--max-requests'} counts every node's fetches and is spent (meguri cluster status shows it); to go on, raise it with meguri cluster limit --redis … --crawl … --store … ${s.reason === 'maxPages' ? '--max-pages' : '--max-requests'} N and start the nodes again (without the flag)`
        : s.reason === 'maxPages' && !result.interrupted
        ? `  more   run it again with a higher --max-pages (the limit counts the whole campaign: ${int(s.okInCampaign)} page${s.okInCampaign === 1 ? '' : 's'} fetched OK so far): ${resume} --max-pages N`
        : result.interrupted || s.reason !== 'drained'
          ? rejoin !== undefined
            ? `  rejoin ${resume}   (${rejoin.note})`
            : `  resume ${resume}   (settings are saved in ${join(dataDir, SETTINGS_FILE)}; a flag given overrides them)`
          : '',
    ]
      .filter(Boolean)
      .join('\n')}\n`,
  );
}

/** App shells among the seed pages kept for the summary (it names the first and counts the rest). */
const MAX_SCRIPT_SHELLS = 100;

/** Requisite URLs remembered until fetched (so pages.jsonl can mark them). */
const MAX_REQUISITES = 1_000_000;

/**
 * How long a run idles for the next fetch allowed before it ends to be resumed later, when
 * `--max-wait` is not given (`EngineOptions.maxWaitMs`): an hour — a host that asks for a day
 * (Retry-After) should not keep a terminal busy for it.
 */
export const DEFAULT_MAX_WAIT_MS = 3_600_000;

/** Crawls per hour continuous mode spends when `--budget` is not given: one a second. */
export const DEFAULT_RECRAWL_BUDGET = 3600;

/**
 * The engine options of continuous mode: the engine's default freshness scheduler (src/freshness's
 * `withFreshness`) learns each page's change rate and spends `budgetPerHour` recrawls an hour
 * where they keep the most pages fresh, within every host's politeness.
 */
function recrawlFreshness(budgetPerHour: number): Partial<EngineOptions> {
  return { recrawl: true, recrawlBudget: budgetPerHour };
}
