/**
 * Intake: URLs entering the partition — seeds (`seed`, `seedBatch`) and routed discoveries
 * (`discover`) — and the rows and host records they create.
 *
 * A URL is identified by its URLKey (HostKey of its group, PathKey of the canonical URL); the
 * exact key → row index says whether it is known, and the optional seen filter in front of
 * it lets a sure miss skip the look-up. Intake is idempotent: a known key never makes a second
 * row (a rediscovery only credits the known row's cash). A new discovery passes admission
 * (the host's URL budget and depth cap, and the trap seam for suspect hosts) and is queued, or
 * kept as Trapped so a rediscovery costs no row. A rediscovery along a shorter path lowers the
 * row's depth, and admits it again if only the depth cap held it (`rediscover`); a resume
 * under wider limits sends Trapped rows through admission again (`setAdmission`). Seeds are
 * never asked about traps.
 */
import { InvalidArgumentError } from '../errors/index.js';
import type { KeyArray } from '../core/keys.js';
import { type Discovery, HostFlags, UrlStatus, isLiveStatus } from '../model/index.js';
import { hostInterval } from '../politeness/index.js';
import { enqueue, registerHost, reprioritize } from './banks.js';
import { admit, keyBatch, keyOf, linkKeyBatch } from './deps.js';
import { HostRecord } from './hosts.js';
import { type FrontierState, HOUR_MS, MISSING, type RelinkCounts, checkHours, checkMs } from './state.js';
import { FpFlag, type UrlTable } from './table.js';

/** One candidate for `seedBatch`: the arguments of `seed`. */
export interface SeedSpec {
  readonly url: string;
  readonly host: string;
  readonly priority: number;
  readonly firstSeen: number;
  readonly nextDue: number;
  /** The host's crawl-delay in ms (0 = none). */
  readonly crawlDelay: number;
}

function checkSeed(url: string, host: string, priority: number, firstSeen: number, nextDue: number, crawlDelay: number): void {
  if (typeof url !== 'string' || url === '') throw new InvalidArgumentError(`seed: expected a canonical URL string, received ${String(url)}`);
  if (typeof host !== 'string' || host === '') throw new InvalidArgumentError(`seed: expected a host group name, received ${String(host)}`);
  if (typeof priority !== 'number' || !Number.isFinite(priority)) {
    throw new InvalidArgumentError(`seed: expected a finite priority, received ${String(priority)}`);
  }
  checkHours('seed firstSeen', firstSeen);
  checkHours('seed nextDue', nextDue);
  if (typeof crawlDelay !== 'number' || !(crawlDelay >= 0) || !Number.isFinite(crawlDelay)) {
    throw new InvalidArgumentError(`seed: expected crawlDelay as ms >= 0, received ${String(crawlDelay)}`);
  }
}

/** `Frontier.seed` (see there). */
export function seed(s: FrontierState, url: string, host: string, priority: number, firstSeen: number, nextDue: number, crawlDelay: number): boolean {
  checkSeed(url, host, priority, firstSeen, nextDue, crawlDelay);
  const k = s.oneKey;
  keyOf(url, host, k, 0);
  const known = s.index.get(k, 0);
  if (known !== undefined) {
    reseed(s, s.rowOf(known), nextDue, crawlDelay);
    return false;
  }
  const row = addSeedRow(s, url, host, priority, firstSeen, nextDue, crawlDelay, k, 0);
  s.index.insertBatch(k, Uint32Array.of(s.payloadOf(row)));
  s.opts.seenFilter?.add(k, 0);
  return true;
}

/** `Frontier.seedBatch` (see there). */
export function seedBatch(s: FrontierState, specs: readonly SeedSpec[]): number {
  if (!Array.isArray(specs)) throw new InvalidArgumentError(`seedBatch: expected an array of seed specs, received ${typeof specs}`);
  const n = specs.length;
  const keys = new Uint32Array(n * 4);
  const urls: string[] = new Array<string>(n);
  const hosts: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const sp = specs[i]!;
    checkSeed(sp.url, sp.host, sp.priority, sp.firstSeen, sp.nextDue, sp.crawlDelay ?? 0);
    urls[i] = sp.url;
    hosts[i] = sp.host;
  }
  keyBatch(urls, hosts, keys);
  const found = s.index.getBatch(keys, new Uint32Array(n), MISSING);
  const isNew = firstMisses(keys, found, n);
  let fresh = 0;
  for (let i = 0; i < n; i++) fresh += isNew[i]!;
  s.table.reserve(fresh);
  const newKeys = new Uint32Array(fresh * 4);
  const rows = new Uint32Array(fresh);
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (isNew[i] === 0) {
      if (found[i] !== MISSING) reseed(s, s.rowOf(found[i]!), specs[i]!.nextDue, specs[i]!.crawlDelay ?? 0);
      continue;
    }
    const sp = specs[i]!;
    rows[m] = s.payloadOf(addSeedRow(s, sp.url, sp.host, sp.priority, sp.firstSeen, sp.nextDue, sp.crawlDelay ?? 0, keys, i));
    newKeys.set(keys.subarray(i * 4, i * 4 + 4), m * 4);
    s.opts.seenFilter?.add(keys, i);
    m++;
  }
  if (fresh > 0) s.index.insertBatch(newKeys, rows);
  return fresh;
}

/**
 * A URL the frontier holds, given as a seed (−1: spilled to disk, only ever a never-fetched
 * Scheduled row: left at its depth). A seed is depth 0 whatever link first found it: before,
 * `seedBatch` ignored a known key, so a URL first found as a link and later given as a seed
 * (`engine.add()`, a resume naming it) kept its link depth — parked past a tight depth cap. The
 * depth falls through `rediscover` (a fetched row marked for a relink, a row parked past the
 * depth cap admitted again). Its status is left alone: whether a Refused row may be queued is
 * the caller's rule (`reconsider`: a copy refused under a learned rule stays refused).
 * `nextDueHours` is the seed's due hour (the hour it is given).
 */
function reseed(s: FrontierState, row: number, nextDueHours: number, crawlDelay: number): void {
  if (row < 0) return;
  const t = s.table;
  const h = s.hosts[t.host[row]!]!;
  seedDelay(s, h, crawlDelay);
  if (t.depth[row]! > 0) rediscover(s, row, { url: t.urlOf(row), host: h.name, depth: 0, cash: 0 }, s.oneKey, 0, h, nextDueHours * HOUR_MS);
}

/**
 * A seed's crawl delay configures its host, whether its URL is new or known (a checkpoint keeps
 * the delay in force only, which a load takes as robots.txt's: seeding again puts a configured
 * one back): the largest given, a floor robots.txt never lowers (dispatch.ts `robotsDelayChanged`).
 */
function seedDelay(s: FrontierState, h: HostRecord, crawlDelay: number): void {
  if (crawlDelay <= h.seedDelayMs) return;
  h.seedDelayMs = crawlDelay;
  if (crawlDelay > h.crawlDelayMs) {
    h.crawlDelayMs = crawlDelay;
    h.intervalMs = hostInterval(s.politeness, h.intervalMs, crawlDelay);
  }
}

/**
 * Which of `n` keys are new: missing from the index (`found[i] === MISSING`) and the first of
 * their key in the batch (in-batch repeats keep the first occurrence). 1 = new.
 */
export function firstMisses(keys: Uint32Array, found: Uint32Array, n: number): Uint8Array {
  const miss: number[] = [];
  for (let i = 0; i < n; i++) if (found[i] === MISSING) miss.push(i);
  // Sort the missing indices by key (index as tie-break) and keep the first of each key.
  miss.sort((a, b) => compareKeys(keys, a, b) || a - b);
  const isNew = new Uint8Array(n);
  for (let j = 0; j < miss.length; j++) {
    const i = miss[j]!;
    const prev = miss[j - 1];
    if (prev === undefined || !sameKey(keys, i, prev)) isNew[i] = 1;
  }
  return isNew;
}

function sameKey(keys: Uint32Array, a: number, b: number): boolean {
  const x = a * 4;
  const y = b * 4;
  return keys[x] === keys[y] && keys[x + 1] === keys[y + 1] && keys[x + 2] === keys[y + 2] && keys[x + 3] === keys[y + 3];
}

function addSeedRow(
  s: FrontierState,
  url: string,
  host: string,
  priority: number,
  firstSeen: number,
  nextDue: number,
  crawlDelay: number,
  keys: KeyArray,
  i: number,
): number {
  const h = hostFor(s, host, keys, i);
  seedDelay(s, h, crawlDelay);
  const row = newRow(s, keys, i, url, h, 0, firstSeen, UrlStatus.Scheduled);
  const t = s.table;
  t.nextDue[row] = nextDue;
  h.admitted++;
  if (s.prio) {
    s.prio.endow(row, priority);
    t.priority[row] = s.prio.priority(row, h.id, h.hostScore);
  } else {
    t.priority[row] = priority;
  }
  if (s.wheel && nextDue > s.wheelHour) s.wheel.schedule(row, nextDue);
  else enqueue(s, row);
  return row;
}

/** Throws unless `d` is a well-formed discovery. */
export function checkDiscovery(d: Discovery, nowMs: number): void {
  if (d === null || typeof d !== 'object') throw new InvalidArgumentError(`discover: expected a Discovery, received ${String(d)}`);
  if (typeof d.url !== 'string' || d.url === '') throw new InvalidArgumentError(`discover: expected a canonical URL, received ${String(d.url)}`);
  if (typeof d.host !== 'string' || d.host === '') throw new InvalidArgumentError(`discover: expected a host group name, received ${String(d.host)}`);
  if (!Number.isInteger(d.depth) || d.depth < 0) throw new InvalidArgumentError(`discover: expected depth as an integer >= 0, received ${String(d.depth)}`);
  if (typeof d.cash !== 'number' || !Number.isFinite(d.cash) || d.cash < 0) {
    throw new InvalidArgumentError(`discover: expected cash as a finite number >= 0, received ${String(d.cash)}`);
  }
  checkMs('discover nowMs', nowMs);
  if (d.key !== undefined && (!(d.key instanceof Uint32Array) || d.key.length !== 4)) {
    throw new InvalidArgumentError(`discover: expected key as a 4-lane Uint32Array, received ${String(d.key)}`);
  }
}

/** `Frontier.discover` (see there). */
export function discover(s: FrontierState, d: Discovery, nowMs: number): boolean {
  checkDiscovery(d, nowMs);
  const k = s.oneKey;
  if (d.key !== undefined) k.set(d.key);
  else keyOf(d.url, d.host, k, 0);
  const filter = s.opts.seenFilter;
  const h = hostFor(s, d.host, k, 0);
  creditInDegree(s, h, d);
  const existing = filter === undefined || filter.maybeContains(k, 0) ? s.index.get(k, 0) : undefined;
  if (existing !== undefined) return rediscover(s, s.rowOf(existing), d, k, 0, h, nowMs);
  const row = addDiscovered(s, d, k, 0, h, nowMs);
  s.index.insertBatch(k, Uint32Array.of(s.payloadOf(row)));
  return s.table.status[row] === UrlStatus.Scheduled;
}

/** Whether `discover` would accept `d` (the checks of `checkDiscovery`, without throwing). */
function validDiscovery(d: Discovery, nowMs: number): boolean {
  try {
    checkDiscovery(d, nowMs);
    return true;
  } catch {
    return false;
  }
}

/** Whether a row of status `st` was fetched with a page (`Crawled`, `DueRecrawl`): the one rule of `knownCount`'s 'fetched', `fetchedSimhashOf` and `eachCrawled`. */
function fetchedWithPage(st: number): boolean {
  return st === UrlStatus.Crawled || st === UrlStatus.DueRecrawl;
}

/**
 * `Frontier.knownCount`: how many of `urls` have a row (in memory, or spilled to disk with their
 * host); a URL the canonicalizer refuses counts as unknown. `which` narrows the rows counted:
 * 'live' (`Frontier.liveCount`: a spilled row is a live one) or 'fetched'
 * (`Frontier.fetchedCount`: Crawled or DueRecrawl, in memory). One batched key computation and
 * one index lookup.
 */
export function knownCount(s: FrontierState, urls: readonly string[], which: 'known' | 'live' | 'fetched' = 'known'): number {
  const n = urls.length;
  if (n === 0) return 0;
  const keys = new Uint32Array(n * 4);
  const canon: (string | undefined)[] = new Array<string | undefined>(n);
  linkKeyBatch(urls, s.opts.grouping, keys, canon, new Array<string>(n));
  const found = s.index.getBatch(keys, new Uint32Array(n), MISSING);
  let known = 0;
  for (let i = 0; i < n; i++) {
    if (canon[i] === undefined || found[i] === MISSING) continue;
    if (which !== 'known') {
      // A spilled row (−1) is a never-fetched Scheduled one: live, not fetched.
      const row = s.rowOf(found[i]!);
      if (which === 'live' && row >= 0 && !isLiveStatus(s.table.status[row]!)) continue;
      if (which === 'fetched' && (row < 0 || !fetchedWithPage(s.table.status[row]!))) continue;
    }
    known++;
  }
  return known;
}

/**
 * `Frontier.liveDepthOf`: the link depth of `url`'s row when it is live (`knownCount`'s rule) and
 * in memory; undefined when the URL has no row, a row not live, or one spilled to disk.
 */
export function liveDepthOf(s: FrontierState, url: string): number | undefined {
  const row = memoryRowOf(s, url);
  return row !== undefined && isLiveStatus(s.table.status[row]!) ? s.table.depth[row] : undefined;
}

/** The in-memory row of `url` (a link as a page gives it, canonicalized as intake would); undefined when it has none or its row is spilled to disk. */
function memoryRowOf(s: FrontierState, url: string): number | undefined {
  const keys = new Uint32Array(4);
  const canon: (string | undefined)[] = [undefined];
  linkKeyBatch([url], s.opts.grouping, keys, canon, ['']);
  if (canon[0] === undefined) return undefined;
  const found = s.index.getBatch(keys, new Uint32Array(1), MISSING);
  if (found[0] === MISSING) return undefined;
  const row = s.rowOf(found[0]!);
  return row >= 0 ? row : undefined;
}

/**
 * `Frontier.fetchedSimhashOf`: the simhash stored for `url`'s row when it was fetched with a page
 * (`knownCount`'s 'fetched' rule) and its text gave one; undefined otherwise (no row, not fetched,
 * spilled to disk, no simhash).
 */
export function fetchedSimhashOf(s: FrontierState, url: string): bigint | undefined {
  const row = memoryRowOf(s, url);
  if (row === undefined) return undefined;
  const t = s.table;
  if (!fetchedWithPage(t.status[row]!)) return undefined;
  const sl = t.slot[row]!;
  return sl !== 0 && (t.fpFlags[sl]! & FpFlag.Simhash) !== 0 ? lanes(t.simhash, sl) : undefined;
}

/**
 * `discover` for a batch (a page's routed out-links), with the same result as a loop of
 * `discover` over it in order — the same rows, hosts, seam calls and credits, in the same
 * order — but keys computed in one batched hash, known keys looked up in one index call and
 * new keys inserted in one more. A key repeated inside the batch is new only at its first
 * occurrence (later ones credit its row). An invalid discovery throws when the loop reaches
 * it, after the ones before it took effect.
 */
export function discoverBatch(s: FrontierState, ds: readonly Discovery[], nowMs: number): void {
  let n = 0;
  while (n < ds.length && validDiscovery(ds[n]!, nowMs)) n++;
  if (n > 0) discoverValid(s, ds, n, nowMs);
  if (n < ds.length) checkDiscovery(ds[n]!, nowMs); // throws
}

function discoverValid(s: FrontierState, ds: readonly Discovery[], n: number, nowMs: number): void {
  const keys = new Uint32Array(n * 4);
  let unkeyed: number[] | undefined;
  for (let i = 0; i < n; i++) {
    const key = ds[i]!.key;
    if (key !== undefined) keys.set(key, i * 4);
    else (unkeyed ??= []).push(i);
  }
  if (unkeyed !== undefined) {
    const urls = unkeyed.map((i) => ds[i]!.url);
    const sub = new Uint32Array(unkeyed.length * 4);
    keyBatch(
      urls,
      unkeyed.map((i) => ds[i]!.host),
      sub,
    );
    unkeyed.forEach((i, j) => keys.set(sub.subarray(j * 4, j * 4 + 4), i * 4));
  }
  const found = s.index.getBatch(keys, new Uint32Array(n), MISSING);
  // The first occurrence of each key missing from the index: a later repeat finds its row.
  const first = firstOccurrence(keys, found, n);
  const rowAt = new Int32Array(n).fill(-1);
  const filter = s.opts.seenFilter;
  const newKeys = new Uint32Array(n * 4);
  const newRows = new Uint32Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    const d = ds[i]!;
    const h = hostFor(s, d.host, keys, i);
    creditInDegree(s, h, d);
    // A known URL whose row is spilled to disk (rowOf −1) is credited beside its key (spill.ts).
    let existing = -2;
    if (filter === undefined || filter.maybeContains(keys, i)) {
      if (found[i] !== MISSING) existing = s.rowOf(found[i]!);
      else if (first[i] !== i) existing = rowAt[first[i]!]!;
    }
    if (existing !== -2) {
      rediscover(s, existing, d, keys, i, h, nowMs);
      continue;
    }
    const row = addDiscovered(s, d, keys, i, h, nowMs);
    rowAt[i] = row;
    newKeys.set(keys.subarray(i * 4, i * 4 + 4), m * 4);
    newRows[m++] = s.payloadOf(row);
  }
  if (m > 0) s.index.insertBatch(newKeys.subarray(0, m * 4), newRows.subarray(0, m));
}

/**
 * For each of `n` keys missing from the index (`found[i] === MISSING`), the index of the first
 * key equal to it in the batch (itself when it is the first); −1 for keys the index holds.
 */
function firstOccurrence(keys: Uint32Array, found: Uint32Array, n: number): Int32Array {
  const first = new Int32Array(n).fill(-1);
  const miss: number[] = [];
  for (let i = 0; i < n; i++) if (found[i] === MISSING) miss.push(i);
  if (miss.length === 0) return first;
  miss.sort((a, b) => compareKeys(keys, a, b) || a - b);
  let lead = -1;
  for (let j = 0; j < miss.length; j++) {
    const i = miss[j]!;
    if (lead < 0 || !sameKey(keys, i, lead)) lead = i;
    first[i] = lead;
  }
  return first;
}

function compareKeys(keys: Uint32Array, a: number, b: number): number {
  const x = a * 4;
  const y = b * 4;
  return keys[x + 1]! - keys[y + 1]! || keys[x]! - keys[y]! || keys[x + 3]! - keys[y + 3]! || keys[x + 2]! - keys[y + 2]!;
}

/** A link from another registrable domain raises the host's in-degree (and maybe its budget). */
function creditInDegree(s: FrontierState, h: HostRecord, d: Discovery): void {
  const prio = s.prio;
  if (!prio || d.fromHost === undefined || d.fromHost === d.host) return;
  const linking = s.dir.domainOf(d.fromHost);
  if (linking !== s.dir.domainOf(d.host) && prio.linkFrom(h.id, linking)) {
    const budget = prio.hostBudget(h.id);
    if (budget > h.urlBudget) h.urlBudget = budget;
  }
}

/**
 * A rediscovery of known `row` (−1: on disk, key at index `i` of `keys`): its cash, and the
 * shorter path when the link is shallower than the row's depth. A row's depth is the fewest
 * links from a seed seen so far, whatever order the crawl found them in: the depth it keeps
 * is what its own out-links inherit, and a URL parked as Trapped only for being past the
 * depth cap is admitted again (`readmit`) once a path within the cap reaches it. Without
 * this the cap would cut a site by crawl order — a URL two links from the seed first reached
 * through a longer chain stayed at the longer depth, and with it everything below it. A
 * spilled row (only ever a never-fetched Scheduled one) keeps its depth: its record is on disk.
 * Returns whether a parked URL became schedulable.
 */
function rediscover(s: FrontierState, row: number, d: Discovery, keys: KeyArray, i: number, h: HostRecord, nowMs: number): boolean {
  creditKnown(s, row, d.cash, keys, i);
  if (row < 0) return false;
  const t = s.table;
  const depth = Math.min(d.depth, 0xffff);
  const was = t.depth[row]!;
  if (!(depth < was)) return false;
  t.depth[row] = depth;
  if (relink(s, row, h, nowMs)) return true;
  if (t.status[row] !== UrlStatus.Trapped || !(h.depthCap > 0 && was > h.depthCap && depth <= h.depthCap)) return false;
  return readmit(s, row, h, nowMs);
}

/**
 * A fetched row whose depth just fell, under a depth cap its links could now pass within:
 * its out-links entered at the longer depth, and everything below them inherited it, so pages
 * within the cap stayed parked past it (measured on 200 loopback hosts × 50 pages, cap 8:
 * 2,829 of the 3,426 pages within the cap fetched). The frontier keeps no links, so the row is
 * marked (`FpFlag.Relink`) and fetched again — unconditionally, as a 304 carries no links — at
 * the partition's next idle point (`relinkAtIdle`) if the relink rule holds then; its
 * report passes the links at the new depth, which lowers its descendants' in turn, and so on
 * until nothing is marked or nothing is parked. Waiting for the idle point lets the depths
 * settle first: fetched as soon as its depth fell, a page whose depth fell four times went four
 * times, and in a crawl whose parked URLs all came within the cap by other paths every marked
 * page went for nothing (the same site at cap 14: 14,822 fetches for 10,000 pages, against
 * 10,000 before). A row in flight or queued keeps its turn (`launch` drops the validators of a
 * marked row, and a 304 of a fetch sent before its depth fell leaves it marked). Without a cap,
 * or at a new depth at the cap (its links would still be past it), nothing is marked. Returns
 * whether a URL became schedulable (only a redirect's target here can: `relinkRedirect`).
 */
export function relink(s: FrontierState, row: number, h: HostRecord, nowMs: number): boolean {
  const t = s.table;
  if (t.status[row] === UrlStatus.Redirected) return relinkRedirect(s, row, h, nowMs);
  const sl = t.slot[row]!;
  if (sl === 0 || t.crawlCount[sl] === 0 || !(h.depthCap > 0 && t.depth[row]! < h.depthCap)) return false;
  mark(s, sl);
  return false;
}

/** Marks the row at fetch-state slot `sl` for a relink round (`relinkAtIdle` looks again). */
function mark(s: FrontierState, sl: number): void {
  s.table.fpFlags[sl] = s.table.fpFlags[sl]! | FpFlag.Relink;
  s.relinkPending = true;
  s.depthVersion++;
}

/**
 * A redirect whose depth fell: its target took the redirect's depth (`markRedirected`), so it
 * takes the new one — at once when the target's row is here (`redirectTo`; a chain follows, each
 * hop's depth only falling), else (routed to another cluster slot, or spilled) by fetching the
 * redirect again, which sends the target on at the new depth. A `/a` → `/a/` redirect first met
 * deep kept `/a/` there, and everything under it, whatever path reached `/a` later.
 */
function relinkRedirect(s: FrontierState, row: number, h: HostRecord, nowMs: number): boolean {
  const t = s.table;
  const depth = t.depth[row]!;
  const to = t.redirectTo[t.slot[row]!]!;
  if (to > 0) {
    const target = to - 1;
    const th = s.hosts[t.host[target]!]!;
    // No cash moves (creditKnown takes none), so the key array is not read.
    return rediscover(s, target, { url: t.urlOf(target), host: th.name, depth, cash: 0 }, s.oneKey, 0, th, nowMs);
  }
  if (!(h.depthCap > 0 && depth <= h.depthCap)) return false;
  mark(s, t.slotFor(row));
  return false;
}

/**
 * Whether `row` waits for a relink round: marked, and Crawled or Redirected (one in flight,
 * queued or retrying is fetched at its own turn, without validators).
 */
export function awaitsRelink(t: UrlTable, row: number): boolean {
  const st = t.status[row];
  return (st === UrlStatus.Crawled || st === UrlStatus.Redirected) && (t.fpFlags[t.slot[row]!]! & FpFlag.Relink) !== 0;
}

/** A row that `awaitsRelink` queued now for its relink fetch. */
function queueRelink(s: FrontierState, row: number, nowMs: number): void {
  const t = s.table;
  // Its entry in the schedule index stays: one that comes due while it waits or is in flight is
  // passed over (advanceWheel takes only Crawled rows), and its report moves it.
  t.status[row] = UrlStatus.DueRecrawl;
  t.nextDue[row] = Math.floor(nowMs / HOUR_MS);
  enqueue(s, row);
}

/** A URL was parked past its host's depth cap (the idle point looks at the parked rows again). */
export function noteDepthPark(s: FrontierState): void {
  s.depthParked = true;
  s.depthVersion++;
}

/**
 * The partition's idle point — nothing queued, nothing in flight, nothing spilled — with rows
 * marked for a relink: the marked Crawled and Redirected rows are queued when a round is worth
 * its fetches (`relinkRoundRuns`) on this partition's counts, or — when a cluster node said the
 * cap binds in another slot (`bindsElsewhere`) — on the crawl-wide counts it passed (every
 * slot's parked and marked rows, as last published; none passed, every round runs). The rule is the measured one (200 hosts × 50 pages, OPIC order, the frontier's
 * drain; rounds as parked / marked): cap 8, 3,019 / 80 then four smaller rounds, every page
 * within the cap fetched; cap 10, seven rounds from 3,261 / 446 to 582 / 64, each releasing
 * hundreds; cap 14, 39 / 2,908 — a round of 2,908 fetches to release at most 39 URLs, skipped
 * (the crawl ends as before relinks, 9,961 of 10,000 pages, where every round took 15,513
 * fetches). Counted again only when a mark or a park came since the last count (O(rows), once
 * per change). Called at each dispatch and by a cluster node's half-second look. Returns how
 * many rows were queued.
 */
export function relinkAtIdle(s: FrontierState, nowMs: number): number {
  if (!s.relinkPending || s.queues.total !== 0 || s.inFlight !== 0 || (s.spill?.spilled ?? 0) !== 0) return 0;
  const elsewhere = s.bindsElsewhere;
  if (elsewhere !== undefined) {
    if (elsewhere !== 'unbounded' && !relinkRoundRuns(elsewhere)) return 0;
  } else {
    if (!s.depthParked || s.idleScannedVersion === s.depthVersion) return 0;
    s.idleScannedVersion = s.depthVersion;
    if (!relinkRoundRuns(relinkCounts(s))) return 0;
  }
  s.relinkPending = false;
  const t = s.table;
  let n = 0;
  for (let row = 0; row < t.rows; row++) {
    if (!awaitsRelink(t, row)) continue;
    queueRelink(s, row, nowMs);
    n++;
  }
  return n;
}

/**
 * The relink rule, over one partition's counts or a cluster crawl's sums: a round runs when some
 * URL is parked past the cap and at least as many are as the round would fetch again (the parked
 * count bounds what a round can release).
 */
export function relinkRoundRuns(c: RelinkCounts): boolean {
  return c.parked > 0 && c.parked >= c.marked;
}

/** Rows Trapped past their host's depth cap now, and marked rows a relink round would fetch. O(rows). */
export function relinkCounts(s: FrontierState): RelinkCounts {
  const t = s.table;
  let parked = 0;
  let marked = 0;
  for (let row = 0; row < t.rows; row++) {
    if (t.status[row] === UrlStatus.Trapped) {
      const cap = s.hosts[t.host[row]!]!.depthCap;
      if (cap > 0 && t.depth[row]! > cap) parked++;
    } else if (awaitsRelink(t, row)) marked++;
  }
  return { parked, marked };
}

/**
 * A Trapped row through admission again, under the rules a new URL meets (depth cap, budget,
 * patterns); its first admission spent none of the host's budget, so an admitted one spends
 * it now. Queued when Scheduled; returns whether it was.
 */
function readmit(s: FrontierState, row: number, h: HostRecord, nowMs: number): boolean {
  const t = s.table;
  const traps = s.opts.traps;
  const passes = (h.flags & HostFlags.TrapSuspect) === 0 || traps === undefined || traps.passes(t.urlOf(row), h.name, nowMs);
  if (admit(t.depth[row]!, h, passes) !== UrlStatus.Scheduled) return false;
  t.status[row] = UrlStatus.Scheduled;
  t.nextDue[row] = Math.max(t.nextDue[row]!, Math.floor(nowMs / HOUR_MS));
  enqueue(s, row);
  return true;
}

/** A rediscovery's cash for known `row` (−1: on disk, key at index `i` of `keys`). */
function creditKnown(s: FrontierState, row: number, cash: number, keys: Uint32Array, i: number): void {
  if (!s.prio || !(cash > 0)) return;
  if (row >= 0) {
    s.prio.credit(row, cash);
    reprioritize(s, row);
  } else {
    s.spill?.credit(keys, i, cash);
  }
}

/**
 * Adds discovery `d` (key at index `i` of `keys`, host `h`, known to be new) as a row:
 * admission, the trap seam, the seen filter, its cash; queued when Scheduled. Returns the row;
 * the caller inserts its key into the exact index (one insert per batch).
 */
function addDiscovered(s: FrontierState, d: Discovery, keys: KeyArray, i: number, h: HostRecord, nowMs: number): number {
  const hours = Math.floor(nowMs / HOUR_MS);
  let passes = true;
  const traps = s.opts.traps;
  if (traps) {
    const k = keys.length === 4 ? keys : keys.subarray(i * 4, i * 4 + 4);
    if (traps.observe(d.url, d.host, k, nowMs)) h.flags |= HostFlags.TrapSuspect;
    if ((h.flags & HostFlags.TrapSuspect) !== 0) passes = traps.passes(d.url, d.host, nowMs);
  }
  const depth = Math.min(d.depth, 0xffff);
  const status = admit(depth, h, passes);
  if (status === UrlStatus.Trapped && h.depthCap > 0 && depth > h.depthCap) noteDepthPark(s);
  const row = newRow(s, keys, i, d.url, h, depth, hours, status);
  s.table.nextDue[row] = hours;
  s.opts.seenFilter?.add(keys, i);
  if (s.prio) {
    s.prio.credit(row, d.cash);
    s.table.priority[row] = s.prio.priority(row, h.id, h.hostScore);
  } else {
    s.table.priority[row] = d.cash;
  }
  if (d.urgent === true) s.table.priority[row] = URGENT_PRIORITY;
  if (status === UrlStatus.Scheduled) enqueue(s, row);
  return row;
}

/**
 * The priority of an urgent discovery (`Discovery.urgent`): above any a crawl computes (OPIC cash
 * and link weights are far below it) and below f32's largest (3.4e38), so its host's queue takes
 * it first — and the host, its top row being the highest, goes first among the hosts ready. Its
 * outcome puts it back among the rest (`report`), as does a later credit to it under OPIC (another
 * link to it); under due order (`queueOrder: 'due'`) its due hour orders it first, as any row due now.
 */
export const URGENT_PRIORITY = 3e38;

/** The priority an urgent row takes back once it has had its turn (`report`; a checkpoint of a pending canary). */
export function restingPriority(s: FrontierState, row: number): number {
  const t = s.table;
  const h = s.hosts[t.host[row]!]!;
  return s.prio ? s.prio.priority(row, h.id, h.hostScore) : 1 / (t.depth[row]! + 1);
}

function newRow(s: FrontierState, keys: KeyArray, i: number, url: string, h: HostRecord, depth: number, firstSeen: number, status: number): number {
  const t = s.table;
  const row = s.spill ? s.spill.newRow() : t.addRow();
  t.key.set(keys.subarray(i * 4, i * 4 + 4), row * 4);
  t.url[row] = t.addUrl(url, h.id);
  t.status[row] = status;
  t.depth[row] = depth;
  t.firstSeen[row] = firstSeen;
  t.host[row] = h.id;
  s.queues.ensureRows(t.rows);
  s.prio?.ensureRows(t.rows);
  return row;
}

/** The record of group `name`, created (with HostKey lanes from key `i` of `keys`) on first sight. */
export function hostFor(s: FrontierState, name: string, keys: KeyArray, i: number): HostRecord {
  const id = s.dir.id(name);
  if (id !== undefined) return s.hosts[id]!;
  const h = new HostRecord(s.hosts.length, keys[i * 4]!, keys[i * 4 + 1]!, name, s.politeness.defaultIntervalMs, s.hostTimes);
  h.intervalMs = hostInterval(s.politeness, h.intervalMs, 0);
  if (s.holdFromMs >= 0) h.nextEligibleMs = s.holdFromMs + h.intervalMs;
  const parked = s.dir.takeScore(name);
  if (parked !== undefined) h.hostScore = parked;
  s.dir.add(h);
  registerHost(s, h);
  s.prio?.ensureHost(h.id);
  h.depthCap = s.admission.depthCap;
  h.urlBudget = hostUrlBudget(s, h, s.admission.urlBudget);
  return h;
}

/** A host's URL budget under the crawl's `urlBudget`: raised by the prioritizer's in-degree budget. */
function hostUrlBudget(s: FrontierState, h: HostRecord, urlBudget: number): number {
  const budget = s.prio ? s.prio.hostBudget(h.id) : 0;
  return budget > urlBudget ? budget : urlBudget;
}

/** The limits `setAdmission` takes (see there). */
export interface AdmissionLimits {
  readonly depthCap?: number;
  readonly urlBudget?: number;
}

/** Whether admission limit `a` admits more than `b` (0 = unlimited). */
function wider(a: number, b: number): boolean {
  return a !== b && (a === 0 || (b !== 0 && a > b));
}

/** `Frontier.setAdmission` (see there). */
export function setAdmission(s: FrontierState, limits: AdmissionLimits, nowMs: number): number {
  const check = (name: string, v: number | undefined): void => {
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw new InvalidArgumentError(`setAdmission: expected ${name} as an integer >= 0 (0 = unlimited), received ${String(v)}`);
  };
  check('depthCap', limits.depthCap);
  check('urlBudget', limits.urlBudget);
  checkMs('setAdmission nowMs', nowMs);
  // Hosts first seen from now on start with the new limits too.
  if (limits.depthCap !== undefined) s.admission.depthCap = limits.depthCap;
  if (limits.urlBudget !== undefined) s.admission.urlBudget = limits.urlBudget;
  const loosened = new Uint8Array(s.hosts.length);
  let any = false;
  for (const h of s.hosts) {
    const cap = limits.depthCap ?? h.depthCap;
    const budget = limits.urlBudget === undefined ? h.urlBudget : hostUrlBudget(s, h, limits.urlBudget);
    if (wider(cap, h.depthCap) || wider(budget, h.urlBudget)) loosened[h.id] = 1;
    any ||= loosened[h.id] === 1;
    h.depthCap = cap;
    h.urlBudget = budget;
  }
  if (!any) return 0;
  const t = s.table;
  let n = 0;
  for (let row = 0; row < t.rows; row++) {
    if (t.status[row] !== UrlStatus.Trapped || loosened[t.host[row]!] !== 1) continue;
    if (readmit(s, row, s.hosts[t.host[row]!]!, nowMs)) n++;
  }
  return n;
}

/** `Frontier.refuse` (see there). */
export function refuse(s: FrontierState, d: Discovery, nowMs: number): boolean {
  if (d === null || typeof d !== 'object' || typeof d.url !== 'string' || d.url === '' || typeof d.host !== 'string' || d.host === '') {
    throw new InvalidArgumentError(`refuse: expected a Discovery with a canonical URL and a host group, received ${String(d?.url)}`);
  }
  checkMs('refuse nowMs', nowMs);
  const k = s.oneKey;
  if (d.key !== undefined) k.set(d.key);
  else keyOf(d.url, d.host, k, 0);
  const filter = s.opts.seenFilter;
  if ((filter === undefined || filter.maybeContains(k, 0)) && s.index.get(k, 0) !== undefined) return false;
  const h = hostFor(s, d.host, k, 0);
  const hours = Math.floor(nowMs / HOUR_MS);
  const row = newRow(s, k, 0, d.url, h, Math.min(Math.max(0, d.depth | 0), 0xffff), hours, UrlStatus.Refused);
  s.table.nextDue[row] = hours;
  s.index.insertBatch(k, Uint32Array.of(s.payloadOf(row)));
  filter?.add(k, 0);
  if (s.prio) {
    s.prio.credit(row, d.cash > 0 ? d.cash : 0);
    s.table.priority[row] = s.prio.priority(row, h.id, h.hostScore);
  } else {
    s.table.priority[row] = d.cash;
  }
  return true;
}

/** `Frontier.reconsider` (see there). */
/** A row fetched OK as `eachCrawled` visits it. */
export interface CrawledUrl {
  readonly url: string;
  readonly contentFp: bigint | undefined;
  readonly simhash: bigint | undefined;
  /** The churn fingerprint of its main text, when the row has one. */
  readonly churnFp: bigint | undefined;
}

const lanes = (a: Uint32Array, sl: number): bigint => (BigInt(a[sl * 2 + 1]!) << 32n) | BigInt(a[sl * 2]!);

export function eachCrawled(s: FrontierState, limit: number, visit: (row: CrawledUrl) => void): number {
  const t = s.table;
  let n = 0;
  for (let row = t.rows - 1; row >= 0 && n < limit; row--) {
    const st = t.status[row]! as UrlStatus;
    if (!fetchedWithPage(st)) continue;
    const sl = t.slot[row]!;
    const flags = sl === 0 ? 0 : t.fpFlags[sl]!;
    visit({
      url: t.urlOf(row),
      contentFp: (flags & FpFlag.ContentFp) !== 0 ? lanes(t.contentFp, sl) : undefined,
      simhash: (flags & FpFlag.Simhash) !== 0 ? lanes(t.simhash, sl) : undefined,
      churnFp: (flags & FpFlag.ChurnFp) !== 0 ? lanes(t.churnFp, sl) : undefined,
    });
    n++;
  }
  return n;
}

export function reconsider(s: FrontierState, accept: (url: string, status: UrlStatus, depth: number) => boolean): number {
  const t = s.table;
  let n = 0;
  for (let row = 0; row < t.rows; row++) {
    const st = t.status[row]! as UrlStatus;
    if (st !== UrlStatus.Refused && st !== UrlStatus.Disallowed) continue;
    if (!accept(t.urlOf(row), st, t.depth[row]!)) continue;
    t.status[row] = UrlStatus.Scheduled;
    const sl = t.slot[row]!;
    if (sl !== 0) t.retries[sl] = 0;
    enqueue(s, row);
    n++;
  }
  return n;
}
