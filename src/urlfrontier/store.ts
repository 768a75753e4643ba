/**
 * The URLFrontier store: crawls, their queues and their URLs, and every rule of the API that
 * decides what a call does — which item is stored, which URL is served, which queue waits.
 *
 * Owns: the in-memory state and its invariants. Never: gRPC, files or a clock. Every method
 * takes the time (`nowMs`, epoch milliseconds) from its caller, and every change it makes is
 * reported to an `OpLog` as a self-contained operation carrying that time, so replaying the
 * journal through the same methods rebuilds exactly the state that was acknowledged.
 *
 * Why its own store rather than meguri's `Frontier`: URLFrontier clients choose the queue key,
 * lease URLs in batches of many per queue, date refetches to the second and keep politeness
 * themselves (SetDelay); the Frontier is a Mercator scheduler with one fetch in flight per
 * host and hour-resolution schedules. The two share URL identity when `canonicalize` is on.
 *
 * State, per crawl:
 *
 *   urls    Map url → UrlRec          every URL ever stored and not deleted (done ones too)
 *   queues  Map key → Queue           queues with URLs, and queues only named by a control call
 *   order   Queue[]                   creation order (ListQueues; the checkpoint's queue indexes)
 *   own     QueueRing                 the crawl's rotation for GetURLs (`QueueRing`)
 *
 * Over 600 lines because it is one set of rules over one state: every method reads and
 * writes the same counters and heaps, and the invariants below only hold together.
 *
 * Invariants (checked by the tests):
 *   queue.total     = |{u ∈ urls : u.queue = q}|
 *   queue.completed = |{u : u.queue = q, u.dueMs = ∞}|
 *   queue.leased    = |{u : u.queue = q, u.leaseMs > 0}|   (after `expire(now)`)
 *   u is in q.heap  ⇔ u.dueMs < ∞
 *   a leased URL is never served again before its lease ends or a known update ends it.
 */
import { canonicalize as canonicalizeUrl } from '../url/index.js';
import { LeaseHeap, UrlHeap, readyAt } from './heap.js';
import { type ChangeHistory, fingerprintOf, observe, refetchInterval, wantsAuto } from './refetch.js';

/** The crawl an empty crawlID names. */
export const DEFAULT_CRAWL = 'DEFAULT';
/** Longest queue key and crawl ID accepted (longer ones are SKIPPED). */
export const MAX_KEY_LENGTH = 255;

/**
 * Longest URL accepted, in UTF-16 units (longer ones are SKIPPED). Far above any real link
 * (browsers and servers stop near 8 k–64 k); it keeps one hostile item from costing megabytes
 * of memory and journal.
 */
export const MAX_URL_LENGTH = 65_536;

/**
 * Largest item accepted, in bytes of its journal operation (`itemBytes`); larger ones are
 * SKIPPED before anything is changed. A quarter of the journal's 64 MiB record limit
 * (src/journal), so one item always fits a record beside the pending batch it joins
 * (persist.ts): past that limit the journal refuses the record and the frontier stops being
 * durable. No real item comes near it; a hostile one went past the journal's limit (17 M empty
 * metadata values, a 34 MB message, made a 68 MB record).
 */
export const MAX_ITEM_BYTES = 16 * 1024 * 1024;

/** Ack statuses, as the schema names them. */
export type AckStatus = 'OK' | 'SKIPPED' | 'FAIL';

/** URL metadata as it travels on the wire: each key maps to a list of values. */
export type Metadata = Record<string, { values: string[] }>;

/** One stored URL. */
export interface UrlRec {
  readonly url: string;
  queue: Queue;
  meta: Metadata;
  /** When first stored (epoch ms). */
  readonly createdMs: number;
  dueMs: number;
  leaseMs: number;
  seq: number;
  pos: number;
  /** Fingerprint history (known items that carried `meguri.fingerprint`), for `meguri.refetch: auto`. */
  history?: ChangeHistory | undefined;
}

/** One queue of a crawl, with its control state. */
export class Queue {
  readonly heap = new UrlHeap<UrlRec>();
  total = 0;
  completed = 0;
  leased = 0;
  /** Own delay between servings (ms), or -1 for the crawl's default. */
  delayMs = -1;
  /** No URL is served before this time (epoch ms); 0 = not blocked. */
  blockedUntilMs = 0;
  /** Completed URLs after which the queue serves nothing; 0 = no limit. */
  limit = 0;
  /** Last time this queue produced URLs (epoch ms); -Infinity = never. */
  lastServedMs = Number.NEGATIVE_INFINITY;
  /** Neighbours in the store's ring of every queue and in its crawl's ring (`QueueRing`); itself when out of one. */
  readonly links: readonly [RingLink, RingLink] = [{ prev: this, next: this }, { prev: this, next: this }];

  constructor(
    /** The queue's key (a host name by default). */
    readonly key: string,
    /** The crawl the queue belongs to (the store's ring walks queues of every crawl). */
    readonly crawl: Crawl,
  ) {}

  /** URLs not done yet (in flight included). */
  get active(): number {
    return this.total - this.completed;
  }

  /** Holds URLs that are not done and is not blocked (the schema's definition; due dates aside). */
  isActive(nowMs: number): boolean {
    return this.active > 0 && this.blockedUntilMs <= nowMs;
  }

  /** True when nothing but the key is known: no URL, no control setting. */
  get bare(): boolean {
    return this.total === 0 && this.delayMs < 0 && this.blockedUntilMs === 0 && this.limit === 0;
  }
}

/** A queue's neighbours in one ring. */
export interface RingLink {
  prev: Queue;
  next: Queue;
}

/**
 * A ring of queues that GetURLs walks from `next`: the store's ring of every queue of every
 * crawl (GetURLs of any crawl; `links[0]`), and each crawl's ring of its own (`links[1]`). A
 * queue joins when it is created, at the tail: just behind `next`, so every queue already there
 * is reached before it. Between two looks at a queue the walk looks at no other queue twice: a
 * queue waits at most one round, however fast queues are added. Joining and leaving cost O(1);
 * leaving moves `next` on only when it was the queue leaving, so no queue is skipped.
 */
export class QueueRing {
  /** The queue the next walk starts at; undefined when the ring is empty. */
  next: Queue | undefined;
  #size = 0;

  /** Queues in the ring. */
  get size(): number {
    return this.#size;
  }

  constructor(
    /** Which of a queue's `links` this ring uses: 0 the store's, 1 its crawl's. */
    private readonly side: 0 | 1,
  ) {}

  /** The queue after `q` in this ring. */
  after(q: Queue): Queue {
    return q.links[this.side].next;
  }

  /** Puts `q` in the ring at its tail, just behind `next` (first queue: it is `next`). */
  add(q: Queue): void {
    const l = q.links[this.side];
    const at = this.next;
    if (at === undefined) {
      l.prev = l.next = q;
      this.next = q;
    } else {
      const a = at.links[this.side];
      l.prev = a.prev;
      l.next = at;
      a.prev.links[this.side].next = q;
      a.prev = q;
    }
    this.#size++;
  }

  /** Takes `q` out of the ring (a no-op when it is not in it); `next` moves on only when it was `q`. */
  remove(q: Queue): void {
    const l = q.links[this.side];
    if (l.next === q && this.next !== q) return; // not in the ring
    if (this.next === q) this.next = this.#size === 1 ? undefined : l.next;
    l.prev.links[this.side].next = l.next;
    l.next.links[this.side].prev = l.prev;
    l.prev = l.next = q;
    this.#size--;
  }
}

/** One crawl: isolated URLs, queues and default delay. */
export class Crawl {
  readonly urls = new Map<string, UrlRec>();
  readonly queues = new Map<string, Queue>();
  order: Queue[] = [];
  /** The crawl's own ring of its queues, which GetURLs of this crawl walks (any-crawl calls walk the store's). */
  readonly own = new QueueRing(1);
  /** Delay between two servings of a queue with no delay of its own (ms). */
  defaultDelayMs: number;
  readonly leases = new LeaseHeap<UrlRec>();
  seq = 0;

  constructor(
    readonly id: string,
    defaultDelayMs: number,
    /** The store's ring of every queue, which this crawl's queues join when created. */
    readonly ring: QueueRing = new QueueRing(0),
  ) {
    this.defaultDelayMs = defaultDelayMs;
  }

  queue(key: string): Queue {
    let q = this.queues.get(key);
    if (q === undefined) {
      q = new Queue(key, this);
      this.queues.set(key, q);
      this.order.push(q);
      this.ring.add(q);
      this.own.add(q);
    }
    return q;
  }

  delayOf(q: Queue): number {
    return q.delayMs >= 0 ? q.delayMs : this.defaultDelayMs;
  }
}

/** Receives every state change as it is applied (the journal; nothing in memory-only mode). */
export interface OpLog {
  discovered(crawl: string, url: string, key: string, meta: Metadata, nowMs: number): void;
  known(crawl: string, url: string, key: string, meta: Metadata, dueMs: number, nowMs: number): void;
  served(crawl: string, key: string, urls: readonly string[], nowMs: number, leaseUntilMs: number): void;
  control(op: ControlOp): void;
}

/** A control call, as journaled. */
export type ControlOp =
  | { readonly kind: 'delay'; readonly crawl: string; readonly key: string; readonly delayMs: number }
  | { readonly kind: 'block'; readonly crawl: string; readonly key: string; readonly untilMs: number }
  | { readonly kind: 'limit'; readonly crawl: string; readonly key: string; readonly limit: number }
  | { readonly kind: 'active'; readonly state: boolean }
  | { readonly kind: 'deleteQueue'; readonly crawl: string; readonly key: string }
  | { readonly kind: 'deleteCrawl'; readonly crawl: string }
  | { readonly kind: 'purge'; readonly crawl: string; readonly key: string; readonly beforeMs: number };

/** A URL handed out by `getUrls`. */
export interface Served {
  readonly url: string;
  readonly key: string;
  readonly meta: Metadata;
  readonly crawl: string;
}

/** What `getUrls` is asked for (the schema's GetParams, with defaults resolved). */
export interface ServeRequest {
  /** 0 = unbounded. */
  readonly maxUrlsPerQueue: number;
  /** 0 = unbounded. */
  readonly maxQueues: number;
  /** '' = any queue. */
  readonly key: string;
  /** Lease length (ms). */
  readonly leaseMs: number;
  /** undefined = every crawl; else one crawl ID ('' = DEFAULT). */
  readonly crawl: string | undefined;
}

/** GetStats's answer. */
export interface StoreStats {
  readonly size: number;
  readonly inProcess: number;
  readonly completed: number;
  readonly activeQueues: number;
  readonly numberOfQueues: number;
  readonly crawlID: string;
}

/** One URL as ListURLs and GetURLStatus report it. */
export interface UrlView {
  readonly url: string;
  readonly key: string;
  readonly meta: Metadata;
  readonly crawl: string;
  readonly createdMs: number;
  /** Epoch ms, Infinity when done. */
  readonly dueMs: number;
}

/** Filters of ListURLs and CountURLs. */
export interface UrlFilter {
  readonly key: string;
  readonly filter: string;
  readonly ignoreCase: boolean;
}

/** Store settings. */
export interface StoreSettings {
  /** Delay between servings of a queue until SetDelay says otherwise (ms). */
  readonly defaultDelayMs: number;
  /** Canonicalize URLs with meguri's rules before they become identities. */
  readonly canonicalize: boolean;
  /**
   * Largest item accepted (`itemBytes`); default `MAX_ITEM_BYTES`. A journal given a lower
   * record limit (tests) needs this at most a quarter of it (`FrontierLog.open` checks).
   */
  readonly maxItemBytes?: number;
}

const NO_LOG: OpLog = { discovered() {}, known() {}, served() {}, control() {} };

/** `''` → DEFAULT; every other ID as given. */
export function crawlName(id: string | undefined): string {
  return id === undefined || id === '' ? DEFAULT_CRAWL : id;
}

const EMPTY_META: Metadata = Object.freeze({}) as Metadata;

/**
 * The queue key of `url` when the client gave none: its host name, as the WHATWG URL parser
 * gives it. Returns '' for a URL that does not parse or has no host (such items are SKIPPED).
 *
 * Fast path: an `http(s)://` URL whose authority is already a plain lowercase DNS name (no
 * userinfo, port, escapes or IPv4-looking numbers) is its own hostname, found by one scan.
 * `new URL()` costs 1–4 µs a call (measured 4.1 µs under load), as much as the rest of an
 * ingest; it remains the answer for every other shape.
 */
export function defaultKey(url: string): string {
  const start = url.startsWith('https://') ? 8 : url.startsWith('http://') ? 7 : 0;
  if (start > 0) {
    let i = start;
    let letter = false;
    const n = url.length;
    for (; i < n; i++) {
      const c = url.charCodeAt(i);
      if (c >= 0x61 && c <= 0x7a) letter = true;
      else if (c === 0x2f || c === 0x3f || c === 0x23) break; // '/', '?', '#'
      else if (!((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e)) {
        i = -1; // anything else: let the parser decide
        break;
      }
    }
    if (i > start && letter) {
      const host = url.slice(start, i);
      // A last label starting with a digit makes the parser read an IPv4 address ("0x7f.1");
      // empty labels stay with the parser too.
      const last = host.charCodeAt(host.lastIndexOf('.') + 1);
      if (!(last >= 0x30 && last <= 0x39) && host.charCodeAt(0) !== 0x2e && !host.includes('..') && !host.endsWith('.')) return host;
    }
  }
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/** The identity of `raw`: itself, or its canonical form (`canonicalize`); '' when unusable. */
export function identityOf(raw: string, canonicalize: boolean): string {
  if (typeof raw !== 'string' || raw === '' || raw.length > MAX_URL_LENGTH) return '';
  if (!canonicalize) return raw;
  return canonicalizeUrl(raw) ?? '';
}

const utf16Bound = (s: string): number => 3 * s.length;
const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

function opBytes(crawl: string, url: string, key: string, meta: Metadata | undefined, size: (s: string) => number): number {
  // codec.ts's known operation, the larger of the two: op u8, crawl, url, key (u32 length +
  // UTF-8 each), due f64, now f64, metadata (u32 count, per key: key, u32 n, n × value).
  let n = 33 + size(crawl) + size(url) + size(key);
  if (meta !== undefined) {
    for (const k of Object.keys(meta)) {
      n += 8 + size(k);
      for (const v of meta[k]?.values ?? []) n += 4 + size(v);
    }
  }
  return n;
}

/**
 * The size in bytes of an item's journal operation (codec.ts: a known item's, which a
 * discovered one's does not exceed): what `MAX_ITEM_BYTES` bounds.
 */
export function itemBytes(crawl: string, url: string, key: string, meta: Metadata | undefined): number {
  return opBytes(crawl, url, key, meta, utf8Length);
}

/** Whether an item's operation is at most `limit` bytes; the exact count only when 3 bytes per UTF-16 unit could pass it (the ingest path). */
function fitsJournal(crawl: string, url: string, key: string, meta: Metadata | undefined, limit: number): boolean {
  return opBytes(crawl, url, key, meta, utf16Bound) <= limit || itemBytes(crawl, url, key, meta) <= limit;
}

/** An item's crawl, URL identity and queue key, as the store files it. */
export interface ResolvedItem {
  readonly crawl: string;
  readonly url: string;
  readonly key: string;
}

/**
 * Resolves an incoming item's crawl, URL and key, or returns undefined (it is SKIPPED). A
 * cluster routes by the result, so every node must resolve alike (same `canonicalize`).
 */
export function resolveItem(rawUrl: string, rawKey: string, crawlId: string, canonicalize: boolean): ResolvedItem | undefined {
  const url = identityOf(rawUrl, canonicalize);
  if (url === '') return undefined;
  const host = defaultKey(url);
  if (host === '') return undefined; // no host: not a crawlable URL
  const key = rawKey === '' ? host : rawKey;
  const crawl = crawlName(crawlId);
  if (key.length > MAX_KEY_LENGTH || crawl.length > MAX_KEY_LENGTH) return undefined;
  return { crawl, url, key };
}

/** The store. One owner (the server); not safe to share between processes. */
export class UrlFrontierStore {
  readonly crawls = new Map<string, Crawl>();
  /** Whether GetURLs serves anything (SetActive). */
  active = true;
  private log: OpLog = NO_LOG;
  /** Largest item accepted (`itemBytes`). */
  readonly maxItemBytes: number;
  /**
   * Every queue of every crawl, for GetURLs of any crawl; and, with a key, where the next such
   * call starts in the crawl list. Neither is kept across a restart (only fairness rests on
   * them): the ring is rebuilt in crawl then queue creation order, from its first queue.
   */
  readonly ring = new QueueRing(0);
  private anyCrawlCursor = 0;

  constructor(readonly settings: StoreSettings) {
    this.maxItemBytes = settings.maxItemBytes ?? MAX_ITEM_BYTES;
  }

  /** Starts reporting changes to `log` (after a replay, which must not be journaled again). */
  attach(log: OpLog): void {
    this.log = log;
  }

  crawl(id: string): Crawl {
    let c = this.crawls.get(id);
    if (c === undefined) {
      c = new Crawl(id, this.settings.defaultDelayMs, this.ring);
      this.crawls.set(id, c);
    }
    return c;
  }

  /** The identity of `raw`: itself, or its canonical form; '' when unusable. */
  identity(raw: string): string {
    return identityOf(raw, this.settings.canonicalize);
  }

  /** Resolves crawl, URL and key of an incoming item, or returns undefined (SKIPPED). */
  private resolve(rawUrl: string, rawKey: string, crawlId: string): ResolvedItem | undefined {
    return resolveItem(rawUrl, rawKey, crawlId, this.settings.canonicalize);
  }

  /**
   * A discovered URL: stored (OK) unless unusable, too large to journal (`maxItemBytes`) or
   * already known in any state (SKIPPED).
   */
  putDiscovered(rawUrl: string, rawKey: string, crawlId: string, meta: Metadata | undefined, nowMs: number): AckStatus {
    const r = this.resolve(rawUrl, rawKey, crawlId);
    if (r === undefined || !fitsJournal(r.crawl, r.url, r.key, meta, this.maxItemBytes)) return 'SKIPPED';
    const c = this.crawl(r.crawl);
    if (c.urls.has(r.url)) return 'SKIPPED';
    const m = meta ?? EMPTY_META;
    this.insert(c, r.url, c.queue(r.key), m, nowMs, nowMs);
    this.log.discovered(r.crawl, r.url, r.key, m, nowMs);
    return 'OK';
  }

  /**
   * A known URL's update: applied (created if unknown) unless unusable or too large to journal
   * (SKIPPED). `refetchSec` 0 = done, never served again; else not before that time. Ends the
   * URL's lease.
   */
  putKnown(rawUrl: string, rawKey: string, crawlId: string, meta: Metadata | undefined, refetchSec: number, nowMs: number): AckStatus {
    const r = this.resolve(rawUrl, rawKey, crawlId);
    if (r === undefined || !fitsJournal(r.crawl, r.url, r.key, meta, this.maxItemBytes)) return 'SKIPPED';
    let dueMs = refetchSec > 0 ? refetchSec * 1000 : Number.POSITIVE_INFINITY;
    const fp = wantsAuto(meta) ? fingerprintOf(meta) : undefined;
    if (fp !== undefined) {
      // meguri dates the refetch from the page's change history (refetch.ts); the client's date is ignored
      dueMs = nowMs + refetchInterval(observe(this.crawls.get(r.crawl)?.urls.get(r.url)?.history, fp, nowMs));
    }
    const m = meta ?? EMPTY_META;
    this.applyKnown(r.crawl, r.url, r.key, m, dueMs, nowMs);
    this.log.known(r.crawl, r.url, r.key, m, dueMs, nowMs);
    return 'OK';
  }

  /** Replays a journaled discovery (it was unknown when acknowledged, so it is stored). */
  applyDiscovered(crawlId: string, url: string, key: string, meta: Metadata, nowMs: number): void {
    const c = this.crawl(crawlId);
    if (!c.urls.has(url)) this.insert(c, url, c.queue(key), meta, nowMs, nowMs);
  }

  /** Applies a resolved known update (also the journal's replay path). */
  applyKnown(crawlId: string, url: string, key: string, meta: Metadata, dueMs: number, nowMs: number): void {
    this.updateKnown(crawlId, url, key, meta, dueMs, nowMs);
    const fp = fingerprintOf(meta);
    if (fp !== undefined) {
      const rec = this.crawls.get(crawlId)!.urls.get(url)!;
      rec.history = observe(rec.history, fp, nowMs);
    }
  }

  private updateKnown(crawlId: string, url: string, key: string, meta: Metadata, dueMs: number, nowMs: number): void {
    const c = this.crawl(crawlId);
    const rec = c.urls.get(url);
    if (rec === undefined) {
      this.insert(c, url, c.queue(key), meta, nowMs, dueMs);
      return;
    }
    let q = rec.queue;
    if (q.key !== key) {
      // The client moved the URL to another queue: detach it whole, attach it whole.
      this.detach(rec);
      q = c.queue(key);
      rec.queue = q;
      q.total++;
      rec.dueMs = dueMs;
      rec.leaseMs = 0;
      rec.meta = meta;
      if (dueMs === Number.POSITIVE_INFINITY) q.completed++;
      else q.heap.push(rec);
      return;
    }
    if (rec.leaseMs > 0) {
      rec.leaseMs = 0;
      q.leased--;
    }
    rec.meta = meta;
    const wasDone = rec.dueMs === Number.POSITIVE_INFINITY;
    rec.dueMs = dueMs;
    const isDone = dueMs === Number.POSITIVE_INFINITY;
    if (wasDone && !isDone) {
      q.completed--;
      q.heap.push(rec);
    } else if (!wasDone && isDone) {
      q.completed++;
      q.heap.remove(rec);
    } else if (!isDone) {
      q.heap.update(rec);
    }
  }

  /** Stores a new URL (also the journal's replay path for discovered items). */
  insert(c: Crawl, url: string, q: Queue, meta: Metadata, createdMs: number, dueMs: number): UrlRec {
    const rec: UrlRec = { url, queue: q, meta, createdMs, dueMs, leaseMs: 0, seq: c.seq++, pos: -1 };
    c.urls.set(url, rec);
    q.total++;
    if (dueMs === Number.POSITIVE_INFINITY) q.completed++;
    else q.heap.push(rec);
    return rec;
  }

  /** Takes `rec` out of its queue's counters and heap (not out of the crawl's map). */
  private detach(rec: UrlRec): void {
    const q = rec.queue;
    q.total--;
    if (rec.dueMs === Number.POSITIVE_INFINITY) q.completed--;
    if (rec.leaseMs > 0) q.leased--;
    q.heap.remove(rec);
    rec.leaseMs = 0;
  }

  /** Ends every lease of `c` that ran out by `nowMs`: those URLs can be served again. */
  expire(c: Crawl, nowMs: number): void {
    c.leases.popExpired(nowMs, (rec) => {
      rec.leaseMs = 0;
      rec.queue.leased--;
      rec.queue.heap.update(rec);
    });
  }

  /**
   * GetURLs: leases and returns due URLs, earliest first, from at most `maxQueues` queues
   * (rotating across calls) and at most `maxUrlsPerQueue` per queue counting URLs already
   * leased. A queue serves only when it is not blocked, not at its crawl limit, and its delay
   * since it last produced URLs has passed; producing URLs restarts its delay.
   *
   * Of one crawl, it walks the crawl's own ring (`Crawl.own`). Of any crawl, it walks the
   * store's ring of every queue (`QueueRing`), where a new queue of any crawl joins behind every
   * queue already there: walking the crawls in creation order with one budget of queues let
   * the first crawl take every call, and one list of crawl A's queues then B's let A's new
   * queues go ahead of B's, so a growing crawl starved the others.
   */
  getUrls(req: ServeRequest, nowMs: number): Served[] {
    const out: Served[] = [];
    if (!this.active) return out;
    const perQueue = req.maxUrlsPerQueue > 0 ? req.maxUrlsPerQueue : Number.POSITIVE_INFINITY;
    const maxQueues = req.maxQueues > 0 ? req.maxQueues : Number.POSITIVE_INFINITY;
    const until = nowMs + req.leaseMs;
    if (req.crawl !== undefined) {
      const c = this.crawls.get(crawlName(req.crawl));
      if (c !== undefined) this.serveCrawl(c, req.key, perQueue, maxQueues, nowMs, until, out);
      return out;
    }
    if (req.key !== '') this.serveKeyOfAnyCrawl([...this.crawls.values()], req.key, perQueue, maxQueues, nowMs, until, out);
    else this.serveAnyCrawl(perQueue, maxQueues, nowMs, until, out);
    return out;
  }

  /** One crawl's queues (or its queue `key`), from where its ring's last walk stopped. */
  private serveCrawl(c: Crawl, key: string, perQueue: number, maxQueues: number, nowMs: number, until: number, out: Served[]): void {
    this.expire(c, nowMs);
    if (key !== '') {
      const q = c.queues.get(key);
      if (q !== undefined) this.serveQueue(c, q, perQueue, nowMs, until, out);
      return;
    }
    // The crawl's ring, from the queue after the last one looked at: a queue created meanwhile
    // joins behind every queue already waiting (appended after a cursor into the creation order,
    // a crawl gaining as many queues a call as the call looked at never came back to its first).
    const ring = c.own;
    let q = ring.next;
    let queuesLeft = maxQueues;
    for (let i = 0; q !== undefined && i < ring.size && queuesLeft > 0; i++) {
      if (this.serveQueue(c, q, perQueue, nowMs, until, out) > 0) queuesLeft--;
      q = ring.after(q);
    }
    ring.next = q;
  }

  /** The queue `key` of every crawl, starting at the crawl after the last one looked at. */
  private serveKeyOfAnyCrawl(crawls: Crawl[], key: string, perQueue: number, maxQueues: number, nowMs: number, until: number, out: Served[]): void {
    const n = crawls.length;
    let queuesLeft = maxQueues;
    let i = 0;
    for (; i < n && queuesLeft > 0; i++) {
      const c = crawls[(this.anyCrawlCursor + i) % n]!;
      const q = c.queues.get(key);
      if (q === undefined) continue;
      this.expire(c, nowMs);
      if (this.serveQueue(c, q, perQueue, nowMs, until, out) > 0) queuesLeft--;
    }
    if (n > 0) this.anyCrawlCursor = (this.anyCrawlCursor + i) % n;
  }

  /**
   * The ring of every queue, from the queue after the last one looked at. Costs O(queues looked
   * at): at most the ring's size, fewer once `maxQueues` queues produced URLs.
   */
  private serveAnyCrawl(perQueue: number, maxQueues: number, nowMs: number, until: number, out: Served[]): void {
    const ring = this.ring;
    let q = ring.next;
    if (q === undefined) return;
    const expired = new Set<Crawl>(); // each crawl met ends its run-out leases once
    let queuesLeft = maxQueues;
    // Serving changes no queue's place in the ring, so its size holds for the walk.
    for (let i = 0; i < ring.size && queuesLeft > 0; i++) {
      const c = q.crawl;
      if (!expired.has(c)) {
        expired.add(c);
        this.expire(c, nowMs);
      }
      if (this.serveQueue(c, q, perQueue, nowMs, until, out) > 0) queuesLeft--;
      q = ring.after(q);
    }
    ring.next = q;
  }

  private serveQueue(c: Crawl, q: Queue, perQueue: number, nowMs: number, until: number, out: Served[]): number {
    if (q.heap.size === 0 || q.blockedUntilMs > nowMs) return 0;
    if (q.lastServedMs + c.delayOf(q) > nowMs) return 0;
    let room = perQueue - q.leased;
    if (q.limit > 0) room = Math.min(room, q.limit - q.completed - q.leased);
    if (room <= 0) return 0;
    const urls: string[] = [];
    while (room > 0) {
      const rec = q.heap.peek();
      if (rec === undefined || readyAt(rec) > nowMs) break;
      this.lease(c, rec, until);
      urls.push(rec.url);
      out.push({ url: rec.url, key: q.key, meta: rec.meta, crawl: c.id });
      room--;
    }
    if (urls.length > 0) {
      q.lastServedMs = nowMs;
      this.log.served(c.id, q.key, urls, nowMs, until);
    }
    return urls.length;
  }

  private lease(c: Crawl, rec: UrlRec, until: number): void {
    rec.leaseMs = until;
    rec.queue.leased++;
    rec.queue.heap.update(rec);
    c.leases.push(until, rec);
  }

  /** Replays a journaled serving: the same leases and the same delay window. */
  applyServed(crawlId: string, key: string, urls: readonly string[], nowMs: number, until: number): void {
    const c = this.crawl(crawlId);
    const q = c.queue(key);
    for (const url of urls) {
      const rec = c.urls.get(url);
      if (rec === undefined || rec.queue !== q || rec.dueMs === Number.POSITIVE_INFINITY) continue;
      if (rec.leaseMs > 0) rec.queue.leased--;
      this.lease(c, rec, until);
    }
    q.lastServedMs = nowMs;
  }

  /** Applies a control call and journals it. */
  control(op: ControlOp): number {
    const n = this.applyControl(op);
    this.log.control(op);
    return n;
  }

  /** Applies a control call; returns the URLs removed for deletes and purges, else 0. */
  applyControl(op: ControlOp): number {
    switch (op.kind) {
      case 'active':
        this.active = op.state;
        return 0;
      case 'delay': {
        const c = this.crawl(op.crawl);
        if (op.key === '') c.defaultDelayMs = op.delayMs;
        else c.queue(op.key).delayMs = op.delayMs;
        return 0;
      }
      case 'block':
        this.crawl(op.crawl).queue(op.key).blockedUntilMs = op.untilMs;
        return 0;
      case 'limit':
        this.crawl(op.crawl).queue(op.key).limit = op.limit;
        return 0;
      case 'deleteQueue':
        return this.deleteQueue(op.crawl, op.key);
      case 'deleteCrawl': {
        const c = this.crawls.get(op.crawl);
        if (c === undefined) return 0;
        this.crawls.delete(op.crawl);
        for (const q of c.order) this.ring.remove(q);
        return c.urls.size;
      }
      case 'purge':
        return this.purge(op.crawl, op.key, op.beforeMs);
    }
  }

  private deleteQueue(crawlId: string, key: string): number {
    const c = this.crawls.get(crawlId);
    const q = c?.queues.get(key);
    if (c === undefined || q === undefined) return 0;
    let n = 0;
    if (q.total > 0) {
      for (const [url, rec] of c.urls) {
        if (rec.queue !== q) continue;
        c.urls.delete(url);
        rec.leaseMs = -1; // stale for the lease heap
        n++;
      }
    }
    c.queues.delete(key);
    this.ring.remove(q);
    c.own.remove(q);
    c.order.splice(c.order.indexOf(q), 1);
    return n;
  }

  private purge(crawlId: string, key: string, beforeMs: number): number {
    const c = this.crawls.get(crawlId);
    if (c === undefined) return 0;
    let n = 0;
    for (const [url, rec] of c.urls) {
      if (rec.createdMs >= beforeMs || (key !== '' && rec.queue.key !== key)) continue;
      this.detach(rec);
      rec.leaseMs = -1;
      c.urls.delete(url);
      n++;
    }
    return n;
  }

  /** SetCrawlLimit's precondition: the queue must exist (URLs or earlier control calls). */
  hasQueue(crawlId: string, key: string): boolean {
    return this.crawls.get(crawlId)?.queues.has(key) === true;
  }

  /** GetStats for a queue (`key` non-empty) or a whole crawl. */
  stats(crawlId: string, key: string, nowMs: number): StoreStats {
    const c = this.crawls.get(crawlId);
    let size = 0;
    let inProcess = 0;
    let completed = 0;
    let activeQueues = 0;
    let numberOfQueues = 0;
    if (c !== undefined) {
      this.expire(c, nowMs);
      const qs = key === '' ? c.order : c.queues.has(key) ? [c.queues.get(key)!] : [];
      for (const q of qs) {
        // A queue known only by a control call (a block, a delay, set before its first URL) is
        // kept for its setting but is no queue of the crawl yet: a mistyped key or crawl ID
        // would otherwise show up in every count.
        if (q.total === 0) continue;
        size += q.active;
        inProcess += q.leased;
        completed += q.completed;
        // "Queues holding active or in flight URLs" (the schema's Stats.counts): a blocked queue
        // still holds its URLs (the reference counts it too); ListQueues is where blocked ones drop out.
        if (q.active > 0) activeQueues++;
        numberOfQueues++;
      }
    }
    return { size, inProcess, completed, activeQueues, numberOfQueues, crawlID: crawlId };
  }

  /** ListQueues: keys of the crawl's queues in rotation order, active ones unless `includeInactive`. */
  listQueues(crawlId: string, includeInactive: boolean, nowMs: number): string[] {
    const c = this.crawls.get(crawlId);
    if (c === undefined) return [];
    this.expire(c, nowMs);
    const out: string[] = [];
    for (const q of c.order) if (q.total > 0 && (includeInactive || q.isActive(nowMs))) out.push(q.key);
    return out;
  }

  /** ListCrawls: the crawls holding URLs (not those known only by a control call). */
  crawlIds(): string[] {
    const out: string[] = [];
    for (const [id, c] of this.crawls) if (c.urls.size > 0) out.push(id);
    return out;
  }

  /** Calls `visit` for every URL of the crawl matching `f`, in storage order, until it returns false. */
  scanUrls(crawlId: string, f: UrlFilter, visit: (v: UrlView) => boolean): void {
    const c = this.crawls.get(crawlId);
    if (c === undefined) return;
    const needle = f.ignoreCase ? f.filter.toLowerCase() : f.filter;
    for (const rec of c.urls.values()) {
      if (f.key !== '' && rec.queue.key !== f.key) continue;
      if (needle !== '' && !(f.ignoreCase ? rec.url.toLowerCase() : rec.url).includes(needle)) continue;
      if (!visit(this.view(c, rec))) return;
    }
  }

  /** GetURLStatus: the URL's record, or undefined when unknown (or in another queue than `key`). */
  status(crawlId: string, rawUrl: string, key: string): UrlView | undefined {
    const c = this.crawls.get(crawlId);
    const rec = c?.urls.get(this.identity(rawUrl));
    if (c === undefined || rec === undefined || (key !== '' && rec.queue.key !== key)) return undefined;
    return this.view(c, rec);
  }

  private view(c: Crawl, rec: UrlRec): UrlView {
    return { url: rec.url, key: rec.queue.key, meta: rec.meta, crawl: c.id, createdMs: rec.createdMs, dueMs: rec.dueMs };
  }
}
