/**
 * The crawl-wide page and request budgets of a cluster crawl: `limits.maxPages` (pages fetched
 * OK, 2xx/304 and soft-404s: `countsAsPage`) and `limits.maxRequests` (fetches of any outcome) in the crawl record, counted
 * over every node. A single process counts its own completions and stops at the limit; nodes
 * cannot, because each would stop at the limit on its own. So the budget is tokens in Redis.
 *
 * Owns: the budget hash (`ClusterKeys.budget(kind)`) and one node's tokens. Never: what a
 * dispatch is or when the node stops (node.ts asks `take`/`complete`/`reached`), nor the
 * limit's value (the crawl record's).
 *
 * The hash holds `granted` (tokens handed to nodes and not given back), `spent` (completions
 * that counted: OK pages for `pages`, every completion for `requests`) and `h:<node>` (tokens
 * node holds: granted to it, not yet spent or given back), so granted = spent + Σ h:<node>.
 * A node takes a token before it dispatches (`take`; a fetch in flight counts as if it will
 * succeed, as in a single process), and its completion either spends it or — a failure, for
 * the page budget, or a fetch that never went — returns it to the node's pool. One script
 * (`SYNC`) reports spent tokens and takes or gives back tokens in a single round trip:
 *   - it takes at most limit − granted, so the nodes together never hold more than the
 *     budget left, and no more fetches start than the limit allows;
 *   - a node keeps only what it can dispatch now (its free fetch slots while it has a URL
 *     due): tokens held by a node whose hosts all wait would starve the others;
 *   - a node that is not live (its heartbeat entry expired) takes nothing, and the coordinator
 *     gives a dead node's tokens back (`reclaimBudgets`, the liveness read inside the script);
 *     a node declared dead that still completes a fetch spends it anyway (the count stays the
 *     count of pages fetched; granted grows by it).
 *
 * What it does not promise: a node killed after fetching pages its slots' last checkpoint did
 * not record has them fetched again by the slots' next owner, and both fetches count, so a
 * crawl that lost a node may stop that many pages short of distinct pages (the same bound as
 * the re-fetches themselves, docs/CLUSTER.md); and the spends it had not told yet (they are
 * told at most every `REPORT_MS`) die with it, their tokens reclaimed as unspent, so the crawl
 * may fetch that many pages beyond the limit. The hash lives in Redis; each slot checkpoint
 * carries the completions reported to the slot (`SlotCheckpointMeta.counted`), and a slot
 * restored from the store after Redis lost its data adds them back (`restoreBudgetCounts`), so
 * the count resumes from the slots' checkpoints: the pages fetched since those checkpoints were
 * counted only in Redis, are fetched again and counted once (the crawl fetches that many more
 * than the limit), and until every slot has been restored the nodes see only the restored
 * slots' share.
 */
import type { Redis } from 'ioredis';
import type { ClusterKeys } from './keys.js';
import { NOW, Script } from './scripts.js';

/** Spends not yet told are reported at most this often (ms): `reached` waits for them. */
const REPORT_MS = 100;
/** Tokens a node no longer wants are given back once it has wanted none for this long (ms). */
const HOLD_MS = 200;

/** Which completions a budget counts: OK pages (`maxPages`) or every request (`maxRequests`). */
export type BudgetKind = 'pages' | 'requests';

/** The crawl record's limit name of each kind. */
export const BUDGET_LIMITS: Readonly<Record<BudgetKind, 'maxPages' | 'maxRequests'>> = { pages: 'maxPages', requests: 'maxRequests' };

/**
 * Reports `spend` tokens spent by node and moves its holding by `delta` (take when > 0, give
 * back when < 0). KEYS: budget, nodes. ARGV: node, spend, delta, limit.
 * Returns {moved, spent, granted}: moved is the tokens taken (≥ 0) or given back (≤ 0).
 * A node that is not live takes nothing (its spends still count).
 */
const SYNC = new Script(`${NOW}
local field = 'h:' .. ARGV[1]
local h = tonumber(redis.call('HGET', KEYS[1], field) or '0')
local granted = tonumber(redis.call('HGET', KEYS[1], 'granted') or '0')
local spent = tonumber(redis.call('HGET', KEYS[1], 'spent') or '0')
local spend = tonumber(ARGV[2])
if spend > h then
  granted = granted + spend - h
  h = spend
end
h = h - spend
spent = spent + spend
local delta = tonumber(ARGV[3])
local moved = 0
if delta > 0 then
  local e = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if e and tonumber(e) >= now then
    moved = math.max(0, math.min(delta, tonumber(ARGV[4]) - granted))
  end
elseif delta < 0 then
  moved = -math.min(-delta, h)
end
h = h + moved
granted = granted + moved
redis.call('HSET', KEYS[1], 'granted', granted, 'spent', spent)
if h > 0 then redis.call('HSET', KEYS[1], field, h) else redis.call('HDEL', KEYS[1], field) end
return {moved, spent, granted}`);

/**
 * Gives back the tokens of every node that is not live. KEYS: budget, nodes.
 * Returns the tokens given back.
 */
const RECLAIM = new Script(`${NOW}
local all = redis.call('HGETALL', KEYS[1])
local back = 0
for i = 1, #all, 2 do
  local f = all[i]
  if string.sub(f, 1, 2) == 'h:' then
    local e = redis.call('ZSCORE', KEYS[2], string.sub(f, 3))
    if not (e and tonumber(e) >= now) then
      back = back + tonumber(all[i + 1])
      redis.call('HDEL', KEYS[1], f)
    end
  end
end
if back > 0 then redis.call('HINCRBY', KEYS[1], 'granted', -back) end
return back`);

/** Gives back the tokens of nodes that are not live, in every budget of the crawl (the coordinator's round). Returns how many. */
export async function reclaimBudgets(redis: Redis, keys: ClusterKeys): Promise<number> {
  let back = 0;
  for (const kind of Object.keys(BUDGET_LIMITS) as BudgetKind[]) back += Number(await RECLAIM.run(redis, [keys.budget(kind), keys.nodes], []));
  return back;
}

/**
 * Adds a slot's counts (`SlotCheckpointMeta.counted`) back to the budgets, as spent and granted:
 * the slot was restored from the store after Redis lost its data, budgets with it. Each slot is
 * adopted once per incarnation of the crawl record (the fenced `ADOPT`), so each adds once.
 */
export async function restoreBudgetCounts(redis: Redis, keys: ClusterKeys, counted: { readonly pages: number; readonly requests: number }): Promise<void> {
  const p = redis.pipeline();
  for (const kind of Object.keys(BUDGET_LIMITS) as BudgetKind[]) {
    const n = counted[kind];
    if (n > 0) p.hincrby(keys.budget(kind), 'spent', n).hincrby(keys.budget(kind), 'granted', n);
  }
  await p.exec();
}

/** A budget's state in Redis (`meguri cluster status`, `meguri stats --redis`). */
export interface BudgetState {
  readonly kind: BudgetKind;
  readonly limit: number;
  /** Completions counted so far. */
  readonly spent: number;
  /** Tokens nodes hold now (taken for fetches in flight or about to start). */
  readonly held: number;
}

/** The budgets the crawl's recorded limits set, as Redis counts them now (none when unlimited). */
export async function readBudgets(redis: Redis, keys: ClusterKeys, limits: Readonly<Record<string, number>>): Promise<BudgetState[]> {
  const out: BudgetState[] = [];
  for (const kind of Object.keys(BUDGET_LIMITS) as BudgetKind[]) {
    const limit = limits[BUDGET_LIMITS[kind]];
    if (limit === undefined || !Number.isFinite(limit)) continue;
    const [granted, spent] = await redis.hmget(keys.budget(kind), 'granted', 'spent');
    out.push({ kind, limit, spent: Number(spent ?? 0), held: Number(granted ?? 0) - Number(spent ?? 0) });
  }
  return out;
}

/** One node's share of one crawl-wide budget. */
export class CrawlBudget {
  /** Tokens this node holds and has not dispatched. */
  private tokens = 0;
  /** Dispatched on a token, not completed. */
  private out = 0;
  /** Spent since the last sync (told to Redis at the next). */
  private unsaid = 0;
  /** Completions Redis has counted, as of the last sync. */
  private spentSeen = 0;
  /** The last sync found nothing left to take (a take is not retried before `retryAtMs`). */
  private retryAtMs = -Infinity;
  /** When the last round trip was made (spends are reported at most every `REPORT_MS`). */
  private lastSyncMs = -Infinity;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly nodeId: string,
    readonly kind: BudgetKind,
    /** The crawl's limit (moved when `meguri cluster limit` changes the record). */
    public limit: number,
  ) {}

  /** Whether a fetch may be dispatched now (a token is free here). */
  get available(): boolean {
    return this.tokens > 0;
  }

  /** Takes a token for a fetch being dispatched. False when none is free. */
  take(): boolean {
    if (this.tokens <= 0) return false;
    this.tokens--;
    this.out++;
    return true;
  }

  /**
   * A fetch dispatched on a token ended: `counted` spends its token (an OK page, or any
   * completion for the request budget); otherwise (a failure for the page budget, a fetch
   * that never went) the token returns to this node's pool.
   */
  complete(counted: boolean): void {
    if (this.out <= 0) return;
    this.out--;
    if (counted) this.unsaid++;
    else this.tokens++;
  }

  /**
   * Reports the spent tokens and brings the tokens held here to `want` — the fetches this node
   * could dispatch now — in one round trip, made only when it is worth one: tokens are taken
   * once fewer than half of `want` are left, given back once the node wanted none for
   * `HOLD_MS`, and spends reported at most every `REPORT_MS` otherwise (a round trip per
   * completion slowed a node's crawl by 12 %). A take that found the budget spent is not
   * retried for `retryMs` (the other nodes' tokens come back only as their fetches fail).
   */
  async sync(want: number, nowMs: number, retryMs: number): Promise<void> {
    want = Math.max(0, want);
    let delta = 0;
    if (want > 0 && this.tokens < Math.ceil(want / 2) && nowMs >= this.retryAtMs) delta = want - this.tokens;
    else if (want === 0 && this.tokens > 0 && nowMs - this.lastSyncMs >= HOLD_MS) delta = -this.tokens;
    if (delta === 0 && (this.unsaid === 0 || nowMs - this.lastSyncMs < REPORT_MS)) return;
    this.lastSyncMs = nowMs;
    const moved = await this.roundTrip(delta);
    // A give-back drops the surplus whatever Redis still counted for this node (after an
    // expiry the coordinator took them already): no token outlives it here.
    this.tokens = delta < 0 ? this.tokens + delta : this.tokens + moved;
    if (delta > 0) this.retryAtMs = moved < delta ? nowMs + retryMs : -Infinity;
  }

  /** One `SYNC`: tells the unsaid spends and moves this node's holding by `delta`; returns what moved. */
  private async roundTrip(delta: number): Promise<number> {
    const spend = this.unsaid;
    const [moved, spent] = (await SYNC.run(this.redis, [this.keys.budget(this.kind), this.keys.nodes], [this.nodeId, spend, delta, this.limit])) as [number, number, number];
    this.unsaid -= spend;
    this.spentSeen = Number(spent);
    return Number(moved);
  }

  /** Reads what Redis has counted (for `reached` on a node with nothing to report; after a Redis loss it may be lower). */
  async refresh(): Promise<void> {
    this.spentSeen = Number((await this.redis.hget(this.keys.budget(this.kind), 'spent')) ?? 0);
  }

  /** Gives back every token held here (leaving, or rejoining as a new node). */
  async release(): Promise<void> {
    const give = this.tokens;
    this.tokens = 0;
    if (give === 0 && this.unsaid === 0) return;
    await this.roundTrip(-give);
  }

  /**
   * Forgets the tokens held here without telling Redis (the coordinator gave them back: this
   * node's heartbeat expired), those of the fetches in flight too: their slots were dropped, and
   * their completions return nothing.
   */
  forget(): void {
    this.tokens = 0;
    this.out = 0;
    this.retryAtMs = -Infinity;
  }

  /** Whether the crawl's budget is spent (as of the last sync) and nothing of this node's is in flight or unreported. */
  reached(): boolean {
    return this.spentSeen >= this.limit && this.out === 0 && this.unsaid === 0;
  }

  /** Completions Redis has counted (as of the last sync). */
  get spent(): number {
    return this.spentSeen;
  }

  /** Tokens this node holds: free ones and those of fetches in flight. */
  get held(): number {
    return this.tokens + this.out;
  }
}
