/**
 * Whether a cluster crawl is drained as Redis records it: the one rule that a node's campaign
 * end (`ClusterNode` crawlDone) and `meguri cluster status` share. Drained means every slot is
 * owned and marked idle at its current epoch, its idle cursor is at or past the last entry its
 * inbox ever received, and the crawl's relink counts call for no further round. It reads Redis
 * only: a node adds its own checks (its slots idle, nothing in flight, no seeds being sent)
 * before it asks, and it publishes its slots' idle marks and relink counts first.
 */
import type { Redis } from 'ioredis';
import { type RelinkCounts, relinkRoundRuns } from '../frontier/index.js';
import type { ClusterKeys } from './keys.js';
import { compareIds } from './routing.js';

/** What `readDrained` found. */
export interface DrainedReading {
  readonly drained: boolean;
  /** Whether some slot has parked a URL past the depth cap (the crawl's depth-binds flag). */
  readonly depthBinds: boolean;
}

/**
 * The crawl's relink counts: the sums of every slot's `"parked marked"` field (keys
 * `relinkCounts`); a field that does not parse is left out (the counts only time relink rounds).
 */
export function sumRelinkCounts(fields: Record<string, string>): RelinkCounts {
  let parked = 0;
  let marked = 0;
  for (const v of Object.values(fields)) {
    const m = /^(\d{1,15}) (\d{1,15})$/.exec(v);
    if (m === null) continue;
    parked += Number(m[1]);
    marked += Number(m[2]);
  }
  return { parked, marked };
}

/** Reads the slots' idle marks, their inboxes' last ids, the depth-binds flag and the relink counts in one round trip. */
export async function readDrained(redis: Redis, keys: ClusterKeys, slots: number): Promise<DrainedReading> {
  const p = redis.pipeline();
  for (let s = 0; s < slots; s++) p.hmget(keys.slot(s), 'owner', 'idle', 'idleCursor', 'epoch');
  for (let s = 0; s < slots; s++) p.xinfo('STREAM', keys.inbox(s));
  // Read after the idle marks: a node sets the flag before it marks the slot that parked a URL
  // idle, and writes its slots' relink counts before their idle marks, so a slot read idle
  // here shows them — marked pages some slot's next idle point fetches again
  // (`relinkRoundRuns` on the sums: the crawl is not drained until that round has run).
  p.get(keys.depthBinds);
  p.hgetall(keys.relinkCounts);
  const res = (await p.exec()) ?? [];
  const depthBinds = res[2 * slots]?.[1] != null;
  const counts = sumRelinkCounts((res[2 * slots + 1]?.[1] ?? {}) as Record<string, string>);
  const reading = (drained: boolean): DrainedReading => ({ drained, depthBinds });
  if (counts.marked > 0 && relinkRoundRuns(counts)) return reading(false);
  for (let s = 0; s < slots; s++) {
    const [owner, idle, cursor, epoch] = res[s]![1] as (string | null)[];
    if (!owner || idle !== `${epoch}`) return reading(false);
    const info = res[slots + s]!;
    if (info[0] !== null) continue; // no stream: nothing was ever sent to the slot
    const arr = info[1] as unknown[];
    const last = String(arr[arr.indexOf('last-generated-id') + 1]);
    if (last !== '0-0' && (!cursor || compareIds(cursor, last) < 0)) return reading(false);
  }
  return reading(true);
}
