/**
 * The cluster's Lua scripts: every decision that two nodes could race on is one script, run
 * atomically by Redis on Redis's own clock (`TIME`), so no node's clock is trusted for
 * ownership or per-IP spacing.
 *
 * Slot record (hash `slot:<s>`): owner (node id, '' = none), epoch (bumped on every owner
 * change), want (the node a hand-off moves it to), ckpt (the accepted checkpoint's directory),
 * cursor (the inbox stream id that checkpoint applied through). Node table (zset `nodes`):
 * node id → expiry on the Redis clock.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script called by SHA, loaded on first NOSCRIPT. */
export class Script {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

const NOW = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * Heartbeat. KEYS: nodes. ARGV: id, ttlMs, join (1 = may register).
 * Returns the Redis time, or -1 when the node's entry had already expired (or, without join,
 * is absent): an expired node must drop every slot and join again as a new node, because the
 * coordinator may already have handed its slots on.
 */
export const HEARTBEAT = new Script(`${NOW}
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if cur and tonumber(cur) < now then redis.call('ZREM', KEYS[1], ARGV[1]); return -1 end
if (not cur) and ARGV[3] ~= '1' then return -1 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return now`);

/** Coordinator lease. KEYS: lease. ARGV: id, ttlMs. Returns 1 when held by `id` (taken or renewed). */
export const LEASE = new Script(`
local v = redis.call('GET', KEYS[1])
if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]); return 1 end
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]); return 1 end
return 0`);

/** Live node ids (expiry ≥ now); removes expired ones. KEYS: nodes. */
export const LIVE_NODES = new Script(`${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
return redis.call('ZRANGE', KEYS[1], 0, -1)`);

/**
 * Moves slot to `to` (the coordinator's decision). KEYS: slot, nodes. ARGV: to, expectedEpoch.
 * An owner that is not live (absent or expired) loses the slot at once (epoch + 1); a live
 * owner is asked to hand it off (`want`), and keeps dispatching until it releases it
 * (`ACCEPT` with a target), so two owners never dispatch together.
 * Returns 0 (raced: epoch moved), 1 (hand-off requested), 2 (assigned), 3 (already so).
 */
export const ASSIGN = new Script(`${NOW}
local epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
if epoch ~= tonumber(ARGV[2]) then return 0 end
local owner = redis.call('HGET', KEYS[1], 'owner') or ''
if owner == ARGV[1] then
  redis.call('HSET', KEYS[1], 'want', '')
  return 3
end
local alive = false
if owner ~= '' then
  local e = redis.call('ZSCORE', KEYS[2], owner)
  alive = e and tonumber(e) >= now
end
if alive and ARGV[1] ~= '' then
  redis.call('HSET', KEYS[1], 'want', ARGV[1], 'wantAt', now)
  return 1
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', epoch + 1, 'want', '', 'since', now)
return 2`);

/**
 * Fenced checkpoint acceptance, optionally releasing the slot to its `want`.
 * KEYS: slot. ARGV: epoch, node id, ckpt dir, cursor, release (1/0), applied count.
 * Returns 0 when refused (the record's owner or epoch is not the writer's: a stale writer),
 * 1 accepted, 2 accepted and handed to `want` (epoch + 1).
 */
export const ACCEPT = new Script(`${NOW}
local epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
local owner = redis.call('HGET', KEYS[1], 'owner') or ''
if epoch ~= tonumber(ARGV[1]) or owner ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'ckpt', ARGV[3], 'cursor', ARGV[4], 'applied', ARGV[6], 'ckptAt', now)
local want = redis.call('HGET', KEYS[1], 'want') or ''
if ARGV[5] == '1' and want ~= '' then
  redis.call('HSET', KEYS[1], 'owner', want, 'epoch', epoch + 1, 'want', '', 'since', now)
  return 2
end
return 1`);

/**
 * The cross-process per-IP gate, take half. KEYS: gate (hash: next, holder, until).
 * ARGV: holder token, lockMs. A start to the IP holds the gate from its take until its
 * request is seen leaving (`IP_RELEASE`), because what the server sees is when bytes leave,
 * which can lag the take by a connect and a busy event loop. Returns 0 (taken; held until
 * release, or lockMs if the holder dies) or the wait in ms, on the Redis clock.
 */
export const IP_TAKE = new Script(`${NOW}
local h = redis.call('HGET', KEYS[1], 'holder') or ''
if h ~= '' then
  local u = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
  if u > now then return math.max(1, math.min(u - now, 10)) end
end
local nxt = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
if nxt > now then return nxt - now end
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'until', now + tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + 60000)
return 0`);

/**
 * The gate's release half. KEYS: gate. ARGV: holder token, intervalMs.
 * The request left (or ended without leaving): the next start may take the gate intervalMs
 * from now on the Redis clock — a moment no earlier than the request's bytes left.
 */
export const IP_RELEASE = new Script(`${NOW}
local nxt = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
local want = now + tonumber(ARGV[2])
if want > nxt then redis.call('HSET', KEYS[1], 'next', want) end
if (redis.call('HGET', KEYS[1], 'holder') or '') == ARGV[1] then redis.call('HSET', KEYS[1], 'holder', '') end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + 60000)
return 1`);

/**
 * Registers a node as fetching from an IP and says whether another live node does too.
 * KEYS: ipUsers, gate. ARGV: node id, ttlMs, guardMs.
 * When this registration makes the IP shared, the gate's next start is pushed to now + guardMs,
 * so the node that had it alone (and spaced it locally) learns of the sharing — its verdict
 * lasts at most ttlMs, within guardMs — before anyone passes the gate. Returns live users.
 */
export const IP_REGISTER = new Script(`${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
local had = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
local n = redis.call('ZCARD', KEYS[1])
if n > 1 and not had then
  local nxt = tonumber(redis.call('HGET', KEYS[2], 'next') or '0')
  local g = now + tonumber(ARGV[3])
  if g > nxt then redis.call('HSET', KEYS[2], 'next', g); redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]) + 60000) end
end
return n`);

/**
 * Accepts a written checkpoint of `slot` at `epoch` by `nodeId` (fenced), optionally releasing
 * the slot to its `want`. Returns 0 refused (stale writer), 1 accepted, 2 accepted and released.
 */
export async function acceptCheckpoint(
  redis: Redis,
  slotKey: string,
  a: { readonly epoch: number; readonly nodeId: string; readonly ckpt: string; readonly cursor: string; readonly applied: number; readonly release: boolean },
): Promise<0 | 1 | 2> {
  const r = Number(await ACCEPT.run(redis, [slotKey], [a.epoch, a.nodeId, a.ckpt, a.cursor, a.release ? 1 : 0, a.applied]));
  return r === 1 || r === 2 ? r : 0;
}
