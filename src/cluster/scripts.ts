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

/** Lua prelude: `now`, Redis's clock in ms (every script that decides by time reads it). */
export const NOW = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

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
 * The checkpoint it replaces is kept as the slot's previous one (`prevCkpt`, `prevCursor`,
 * `prevApplied`), with `prevFor` naming the checkpoint it precedes: a build that does not keep
 * it leaves `prevFor` behind, and a reader then knows the previous one is not the fallback
 * (`readSlots`).
 */
export const ACCEPT = new Script(`${NOW}
local epoch = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
local owner = redis.call('HGET', KEYS[1], 'owner') or ''
if epoch ~= tonumber(ARGV[1]) or owner ~= ARGV[2] then return 0 end
local cur = redis.call('HMGET', KEYS[1], 'ckpt', 'cursor', 'applied')
if cur[1] and cur[1] ~= '' and cur[1] ~= ARGV[3] then
  redis.call('HSET', KEYS[1], 'prevCkpt', cur[1], 'prevCursor', cur[2] or '0-0', 'prevApplied', cur[3] or '0', 'prevFor', ARGV[3])
end
redis.call('HSET', KEYS[1], 'ckpt', ARGV[3], 'cursor', ARGV[4], 'applied', ARGV[6], 'ckptAt', now)
local want = redis.call('HGET', KEYS[1], 'want') or ''
if ARGV[5] == '1' and want ~= '' then
  redis.call('HSET', KEYS[1], 'owner', want, 'epoch', epoch + 1, 'want', '', 'since', now)
  return 2
end
return 1`);

/**
 * Fenced fallback to the slot's previous checkpoint, when its current one is damaged.
 * KEYS: slot. ARGV: epoch, node id, the damaged ckpt dir.
 * Returns 1 when the record now points at the previous checkpoint (its cursor and applied count
 * with it; the previous fields cleared: there is no fallback behind a fallback), 0 when refused:
 * the writer is not the owner at that epoch, the record no longer points at the damaged one, or
 * the previous one is not the one that preceded it.
 */
export const FALLBACK = new Script(`${NOW}
local r = redis.call('HMGET', KEYS[1], 'epoch', 'owner', 'ckpt', 'prevFor', 'prevCkpt', 'prevCursor', 'prevApplied')
if tonumber(r[1] or '0') ~= tonumber(ARGV[1]) or (r[2] or '') ~= ARGV[2] then return 0 end
if r[3] ~= ARGV[3] or r[4] ~= ARGV[3] or not r[5] or r[5] == '' then return 0 end
redis.call('HSET', KEYS[1], 'ckpt', r[5], 'cursor', r[6] or '0-0', 'applied', r[7] or '0', 'ckptAt', now)
redis.call('HDEL', KEYS[1], 'prevCkpt', 'prevCursor', 'prevApplied', 'prevFor')
return 1`);

/**
 * Fenced adoption of a checkpoint found in the store for a slot whose record names none (Redis
 * lost its data, or the crawl's keys were removed under a surviving store), or names one the
 * store no longer holds (Redis came back from an older snapshot, after pruning removed it).
 * KEYS: slot. ARGV: epoch, node id, new epoch, ckpt dir, applied count, and optionally the
 * checkpoint the record must still name ('' when absent) and the inbox cursor to set ('0-0'
 * when absent).
 * The record is moved to the new epoch — past every epoch in the slot's store, so the owner's
 * own checkpoints sort after the ones from before the loss and are never written over them —
 * and points at the adopted checkpoint with the inbox cursor at 0-0 (the stream it was taken
 * from is gone; every entry now in the inbox came after it) or at the cursor given (after a
 * rollback, `rollForward`: the older of the adopted checkpoint's and the record's). Returns 1 when done,
 * 0 when refused: the writer is not the owner at that epoch, or the record names another
 * checkpoint now.
 */
export const ADOPT = new Script(`${NOW}
local r = redis.call('HMGET', KEYS[1], 'epoch', 'owner', 'ckpt')
if tonumber(r[1] or '0') ~= tonumber(ARGV[1]) or (r[2] or '') ~= ARGV[2] then return 0 end
if (r[3] or '') ~= (ARGV[6] or '') then return 0 end
redis.call('HSET', KEYS[1], 'epoch', ARGV[3], 'ckpt', ARGV[4], 'cursor', ARGV[7] or '0-0', 'applied', ARGV[5], 'ckptAt', now)
redis.call('HDEL', KEYS[1], 'prevCkpt', 'prevCursor', 'prevApplied', 'prevFor')
return 1`);

/**
 * The callers' views of one IP's interval, kept in the gate hash as `v:<node>` =
 * "<intervalMs>:<expiresAt>" (Redis clock). Each node reports its own current interval for the
 * IP (the largest of its slots' views) with every take and registration; the gate spaces
 * starts by the largest live report, so a node that saw the machine push back (429s, a latency
 * rise) slows every node down, not only itself. A report lives `keepMs` (the caller passes
 * its IP table's idle-forget horizon): a node that stopped fetching from the IP stops counting
 * then, and one whose view narrowed overwrites its own report at its next take.
 * Sets `eff` (the largest live interval, ms; 0 without any).
 */
const VIEWS = `
redis.call('HSET', KEYS[1], 'v:' .. ARGV[3], ARGV[4] .. ':' .. (now + tonumber(ARGV[5])))
local eff = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == 'v:' then
    local iv, exp = string.match(all[i + 1], '^([%d%.]+):(%d+)$')
    if (not exp) or tonumber(exp) < now then redis.call('HDEL', KEYS[1], all[i])
    elseif tonumber(iv) > eff then eff = tonumber(iv) end
  end
end`;

/**
 * The cross-process per-IP gate, take half. KEYS: gate (hash: last, next, holder, until, and
 * the callers' views `v:<node>`). ARGV: holder token, lockMs, node id, the node's interval for
 * the IP (ms), keepMs (how long that report counts).
 * A start to the IP holds the gate from its take until its request is seen leaving
 * (`IP_RELEASE`), because what the server sees is when bytes leave, which can lag the take by
 * a connect and a busy event loop. The next start may go once the last one left `eff` ago —
 * `eff` the largest live view, evaluated now, so a view that rose after the last release still
 * binds — and not before `next` (the sharing guard). Returns 0 (taken; held until release, or
 * lockMs if the holder dies) or the wait in ms, on the Redis clock.
 */
export const IP_TAKE = new Script(`${NOW}${VIEWS}
local h = redis.call('HGET', KEYS[1], 'holder') or ''
if h ~= '' then
  local u = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
  if u > now then return math.max(1, math.min(u - now, 10)) end
end
local at = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '')
if last and last + eff > at then at = last + eff end
if at > now then return math.ceil(at - now) end
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'until', now + tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[2]), tonumber(ARGV[5])) + 60000)
return 0`);

/**
 * Records a node's view of an IP's interval between takes (it rose: a slot's frontier widened
 * the IP after a 429 or a latency rise), so the other nodes' next takes are spaced by it at
 * once rather than after this node's next take. KEYS: gate. ARGV: (unused), (unused), node id,
 * intervalMs, keepMs. Returns the largest live view.
 */
export const IP_VIEW = new Script(`${NOW}${VIEWS}
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]) + 60000)
return eff`);

/**
 * The gate's release half. KEYS: gate. ARGV: holder token, intervalMs, keepMs.
 * The request left (or ended without leaving) now on the Redis clock — a moment no earlier
 * than its bytes left: `last` moves here, and the next take measures the largest live view
 * from it. `next` is raised to now + intervalMs as well, for a node still running the earlier
 * gate (which reads only `next`).
 */
export const IP_RELEASE = new Script(`${NOW}
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
if now > last then redis.call('HSET', KEYS[1], 'last', now) end
local nxt = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
local want = now + tonumber(ARGV[2])
if want > nxt then redis.call('HSET', KEYS[1], 'next', want) end
if (redis.call('HGET', KEYS[1], 'holder') or '') == ARGV[1] then redis.call('HSET', KEYS[1], 'holder', '') end
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[2]), tonumber(ARGV[3] or '0')) + 60000)
return 1`);

/**
 * Registers a node as fetching from an IP and says whether another live node does too.
 * KEYS: ipUsers, gate. ARGV: ttlMs (how long the registration counts), guardMs, node id, the
 * node's interval for the IP, keepMs, verdictMs.
 * A registration lasts as long as the node's view of the IP does (at least a minute, more for
 * a widened IP), not merely two verdicts: a node whose raised interval spaces its starts
 * further apart than that would otherwise drop out between them, and two such nodes would
 * each believe they were alone.
 * When this registration makes the IP shared, the gate's next start is pushed to
 * now + verdictMs + max(guardMs, the largest live view), so the node that had it alone (and
 * spaced it locally) learns of the sharing — its verdict lasts at most verdictMs — and its
 * last lone start is one of its own intervals behind before anyone passes the gate. The
 * node's view is recorded like a take's, so a lone node's raised interval is known the moment
 * another joins. Returns live users.
 */
export const IP_REGISTER = new Script(`${NOW}${VIEWS.replaceAll('KEYS[1]', 'KEYS[2]')}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
local had = redis.call('ZSCORE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
local n = redis.call('ZCARD', KEYS[1])
if n > 1 and not had then
  local nxt = tonumber(redis.call('HGET', KEYS[2], 'next') or '0')
  local g = now + tonumber(ARGV[6]) + math.max(tonumber(ARGV[2]), eff)
  if g > nxt then redis.call('HSET', KEYS[2], 'next', g) end
end
redis.call('PEXPIRE', KEYS[2], math.max(tonumber(ARGV[2]), tonumber(ARGV[5])) + 60000)
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
