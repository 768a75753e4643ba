/**
 * Membership and ownership: a node's heartbeat, and the coordinator duty any node may hold.
 *
 * Heartbeat: the node's entry in the node table expires `ttlMs` after each renewal on the
 * Redis clock. The node counts a renewal from the moment it *sent* it, and stops dispatching
 * once its last renewal is `ttlMs / 2` old: Redis set the expiry no earlier than the send, so
 * the node stops at least `ttlMs / 2` before anyone can take its slots (clock-rate drift
 * between a node and Redis is far below 2×). An entry that expired is never revived: the node
 * drops its slots and joins again.
 *
 * Each renewal's reply is the Redis clock's `now`, so it also measures how far this node's
 * clock is from Redis's (`Heartbeat.clockOffset`): the reply was read between the send and the
 * answer, so the offset is now − (sent + answered)/2 within half the round trip (plus the 1 ms
 * Redis floors to). Host politeness windows and Retry-After holds travel between nodes in slot
 * checkpoints as readings on the writer's clock: the checkpoint carries the writer's offset, and
 * the next owner moves the readings onto its own clock by the difference (`clockShiftMs`), so a
 * skew between nodes does not let a moved host be fetched early. `meguri cluster status` shows
 * the offsets.
 *
 * Coordinator: whoever holds the lease reads the live nodes and the slot records and moves
 * slots toward `balance()` — an orphan at once (epoch + 1), a live owner's slot by asking for a
 * hand-off, which the owner completes by releasing the slot with its final checkpoint.
 */
import type { Redis } from 'ioredis';
import { balance } from './balance.js';
import type { ClusterKeys } from './keys.js';
import { ASSIGN, HEARTBEAT, LEASE, LIVE_NODES } from './scripts.js';

/** One slot record as read from Redis. */
export interface SlotRecord {
  readonly slot: number;
  readonly owner: string;
  readonly epoch: number;
  readonly want: string;
  readonly ckpt: string;
  readonly cursor: string;
  readonly applied: number;
  /**
   * The checkpoint accepted before `ckpt`, with the inbox cursor and applied count it was taken
   * at: the fallback when `ckpt` is damaged (the inbox is trimmed only behind it). Undefined when
   * there is none, or when the record's previous fields do not precede `ckpt` (an older build
   * accepted it without keeping them).
   */
  readonly prev: { readonly ckpt: string; readonly cursor: string; readonly applied: number } | undefined;
}

const FIELDS = ['owner', 'epoch', 'want', 'ckpt', 'cursor', 'applied', 'prevCkpt', 'prevCursor', 'prevApplied', 'prevFor'] as const;

/** Reads slot records [0, slots) in one pipeline. */
export async function readSlots(redis: Redis, keys: ClusterKeys, slots: number): Promise<SlotRecord[]> {
  const p = redis.pipeline();
  for (let s = 0; s < slots; s++) p.hmget(keys.slot(s), ...FIELDS);
  const res = (await p.exec()) ?? [];
  return res.map(([err, v], s) => {
    if (err) throw err;
    const [owner, epoch, want, ckpt, cursor, applied, prevCkpt, prevCursor, prevApplied, prevFor] = v as (string | null)[];
    const prev = prevCkpt && ckpt && prevFor === ckpt ? { ckpt: prevCkpt, cursor: prevCursor ?? '0-0', applied: Number(prevApplied ?? 0) } : undefined;
    return { slot: s, owner: owner ?? '', epoch: Number(epoch ?? 0), want: want ?? '', ckpt: ckpt ?? '', cursor: cursor ?? '0-0', applied: Number(applied ?? 0), prev };
  });
}

/** Live node ids. */
export async function liveNodes(redis: Redis, keys: ClusterKeys): Promise<string[]> {
  return (await LIVE_NODES.run(redis, [keys.nodes], [])) as string[];
}

/** Renewals whose clock readings are kept; the offset is the one read over the shortest round trip among them. */
export const CLOCK_SAMPLES = 8;

/** Redis's clock minus a node's, as its heartbeat measured it. */
export interface ClockOffset {
  /** Redis's clock minus the node's, ms. */
  readonly offsetMs: number;
  /** Bound on the error of `offsetMs`, ms: half the round trip it was read over, plus 1 (Redis's ms floor). */
  readonly errorMs: number;
}

/**
 * How far to move a checkpoint's clock readings onto this node's clock: a reading x on the
 * writer's clock is x + (writer's offset − this node's offset) here, both offsets being
 * Redis's clock minus the node's. 0 (leave them) when either offset is unknown — a checkpoint of
 * an older build, a node not yet renewed — or when the difference is within the two readings'
 * error bounds (nodes on one clock: moving by noise would only blur the windows). Whole ms.
 */
export function clockShiftMs(writer: { readonly clockOffsetMs?: number; readonly clockOffsetErrorMs?: number } | undefined, reader: ClockOffset | undefined): number {
  const w = writer?.clockOffsetMs;
  if (reader === undefined || typeof w !== 'number' || !Number.isFinite(w)) return 0;
  const we = writer?.clockOffsetErrorMs;
  const bound = (typeof we === 'number' && Number.isFinite(we) && we > 0 ? we : 0) + reader.errorMs;
  const d = w - reader.offsetMs;
  return Math.abs(d) > bound ? Math.round(d) : 0;
}

/** A node's heartbeat and dispatch permission. */
export class Heartbeat {
  /** Local clock (ms) at which the last successful renewal was sent; −∞ before the first. */
  private okSentAt = -Infinity;
  /** The last `CLOCK_SAMPLES` renewals' clock readings. */
  private readonly clockSamples: ClockOffset[] = [];
  private joined = false;
  /** Set when the node's entry expired: it must drop its slots and rejoin. */
  expired = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    readonly nodeId: string,
    readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Renews (or first registers) the entry. Returns false when it failed or had expired. */
  async beat(): Promise<boolean> {
    const sentAt = this.now();
    let r: number;
    try {
      r = Number(await HEARTBEAT.run(this.redis, [this.keys.nodes], [this.nodeId, this.ttlMs, this.joined ? 0 : 1]));
    } catch {
      return false;
    }
    if (r < 0) {
      this.expired = true;
      return false;
    }
    this.joined = true;
    if (sentAt > this.okSentAt) this.okSentAt = sentAt;
    const answeredAt = this.now();
    if (r > 0 && answeredAt >= sentAt) {
      this.clockSamples.push({ offsetMs: r - (sentAt + answeredAt) / 2, errorMs: (answeredAt - sentAt) / 2 + 1 });
      if (this.clockSamples.length > CLOCK_SAMPLES) this.clockSamples.shift();
    }
    return true;
  }

  /**
   * How far Redis's clock is ahead of this node's (negative: behind), from the kept renewal
   * read over the shortest round trip (a slow round trip only widens the bound, it does not
   * move the truth); undefined before the first renewal.
   */
  clockOffset(): ClockOffset | undefined {
    let best: ClockOffset | undefined;
    for (const c of this.clockSamples) if (best === undefined || c.errorMs < best.errorMs) best = c;
    return best;
  }

  /** Whether the node may dispatch now: its last renewal is younger than ttl/2. */
  canDispatch(): boolean {
    return !this.expired && this.now() - this.okSentAt < this.ttlMs / 2;
  }

  /** Ms since the last successful renewal was sent. */
  age(): number {
    return this.now() - this.okSentAt;
  }

  /** Leaves the node table (a graceful stop, after the node released its slots). */
  async leave(): Promise<void> {
    await this.redis.zrem(this.keys.nodes, this.nodeId);
  }
}

/** What one coordinator round did. */
export interface CoordinateResult {
  readonly leader: boolean;
  readonly assigned: number;
  readonly handoffsRequested: number;
}

/**
 * One coordinator round for node `nodeId`: takes or renews the lease (`leaseMs`) and, if
 * held, moves slots toward the balanced map.
 */
export async function coordinate(redis: Redis, keys: ClusterKeys, nodeId: string, slots: number, leaseMs: number): Promise<CoordinateResult> {
  const held = Number(await LEASE.run(redis, [keys.lease], [nodeId, leaseMs])) === 1;
  if (!held) return { leader: false, assigned: 0, handoffsRequested: 0 };
  const live = await liveNodes(redis, keys);
  if (live.length === 0) return { leader: true, assigned: 0, handoffsRequested: 0 };
  const recs = await readSlots(redis, keys, slots);
  const target = balance(
    recs.map((r) => r.owner),
    live,
  );
  let assigned = 0;
  let handoffsRequested = 0;
  for (const r of recs) {
    const to = target[r.slot]!;
    if (to === r.owner && r.want === '') continue;
    // A hand-off already requested from a live owner: wait for it to release the slot.
    if (to !== r.owner && r.want === to && live.includes(r.owner)) continue;
    const res = Number(await ASSIGN.run(redis, [keys.slot(r.slot), keys.nodes], [to, r.epoch]));
    if (res === 2) assigned++;
    if (res === 1) handoffsRequested++;
  }
  return { leader: true, assigned, handoffsRequested };
}
