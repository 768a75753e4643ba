/**
 * Link routing over Redis Streams: the entry codec, the sender's outbox with its durability
 * barrier, and the owner's inbox plumbing (consumer group at a cursor, acknowledgment and
 * trimming after a checkpoint).
 *
 * One stream entry carries one page's links for one target slot (or a batch of seeds):
 * fields `k` (kind: `l` links, `s` seeds) and `d` (records, one a line, tab-separated). A
 * canonical URL and a host group never hold a tab or a newline (canonicalization
 * percent-encodes them), so the records need no escaping.
 *
 * Sender barrier: a slot's checkpoint is written only after every XADD issued before its
 * snapshot is durable — the XADD replies have arrived, then `WAIT` on replicas, or nothing
 * more when Redis runs AOF with `appendfsync always` (a reply then means fsynced). A crash
 * before that re-dispatches the page from the previous checkpoint, so links may be sent
 * twice (admission dedups them by URLKey), never lost.
 */
import type { Redis } from 'ioredis';
import type { Discovery } from '../model/index.js';
import { DurabilityError } from './errors.js';
import { INBOX_GROUP, type ClusterKeys } from './keys.js';

/** How the sender barrier makes XADDs durable before a checkpoint. */
export type Durability = 'none' | 'aof' | { readonly replicas: number; readonly timeoutMs: number };

/** A seed as routed to its owning slot. */
export interface RoutedSeed {
  readonly url: string;
  readonly host: string;
  readonly priority: number;
}

/** Encodes one page's links to one slot. */
export function encodeLinks(links: readonly Discovery[]): string {
  let s = '';
  for (let i = 0; i < links.length; i++) {
    const d = links[i]!;
    if (i > 0) s += '\n';
    s += `${d.url}\t${d.host}\t${d.depth}\t${d.cash}\t${d.fromHost ?? ''}`;
  }
  return s;
}

/** Decodes `encodeLinks`' output. */
export function decodeLinks(payload: string): Discovery[] {
  const out: Discovery[] = [];
  for (const line of payload.split('\n')) {
    if (line === '') continue;
    const [url, host, depth, cash, from] = line.split('\t');
    out.push({ url: url!, host: host!, depth: Number(depth), cash: Number(cash), fromHost: from === '' || from === undefined ? undefined : from });
  }
  return out;
}

export function encodeSeeds(seeds: readonly RoutedSeed[]): string {
  return seeds.map((s) => `${s.url}\t${s.host}\t${s.priority}`).join('\n');
}

export function decodeSeeds(payload: string): RoutedSeed[] {
  return payload
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [url, host, p] = l.split('\t');
      return { url: url!, host: host!, priority: Number(p) };
    });
}

/** Checks that Redis is configured for the chosen durability; throws DurabilityError naming what it found. */
export async function checkDurability(redis: Redis, durability: Durability): Promise<void> {
  if (durability !== 'aof') return;
  const [, aof] = (await redis.config('GET', 'appendonly')) as string[];
  const [, fsync] = (await redis.config('GET', 'appendfsync')) as string[];
  if (aof !== 'yes' || fsync !== 'always') {
    throw new DurabilityError(
      `durability 'aof' needs Redis with appendonly yes and appendfsync always; found appendonly ${String(aof)}, appendfsync ${String(fsync)}`,
    );
  }
}

/**
 * Refuses a Redis that may evict the crawl's keys. With a memory limit (`maxmemory` > 0) an
 * `allkeys-*` policy drops any key under memory pressure, and the routed-link streams and slot
 * records carry no TTL: links would vanish from an inbox and a slot would open empty, with
 * nothing to say so. `volatile-*` policies evict only keys with a TTL (heartbeats, IP-gate
 * holds: a node taken for dead, a hand-off, no loss) and `noeviction`, Redis's default, none. A
 * Redis that refuses CONFIG (managed services often rename it) is not checked.
 */
export async function checkEviction(redis: Redis): Promise<void> {
  let policy: string | undefined;
  let maxmemory: string | undefined;
  try {
    [, policy] = (await redis.config('GET', 'maxmemory-policy')) as string[];
    [, maxmemory] = (await redis.config('GET', 'maxmemory')) as string[];
  } catch {
    return;
  }
  if (policy !== undefined && policy.startsWith('allkeys-') && Number(maxmemory) > 0) {
    throw new DurabilityError(
      `Redis evicts keys under memory pressure (maxmemory-policy ${policy}, maxmemory ${maxmemory} bytes): it would silently drop the crawl's link streams and slot records; set maxmemory-policy noeviction (or a volatile-* policy), or maxmemory 0`,
    );
  }
}

interface Pending {
  readonly key: string;
  readonly kind: string;
  readonly payload: string;
}

/** The sender's queue of entries to XADD, flushed in pipelines. */
export class Outbox {
  private queue: Pending[] = [];
  private chain: Promise<void> = Promise.resolve();
  /** Entries queued / acknowledged by Redis, over the node's life. */
  queued = 0;
  sent = 0;
  /** Links carried by sent entries. */
  links = 0;
  /** Failed flush attempts (Redis unreachable); entries stay queued and are retried. */
  failures = 0;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly durability: Durability,
  ) {}

  get size(): number {
    return this.queue.length;
  }

  /** Queues one entry for slot `slot`'s inbox. */
  push(slot: number, kind: 'l' | 's', payload: string, count = 1): void {
    this.queue.push({ key: this.keys.inbox(slot), kind, payload });
    this.queued++;
    this.links += count;
  }

  /**
   * Sends everything queued so far in one pipeline and, with `durable`, passes the barrier.
   * Calls are serialized, so a flush resolves only after every entry queued before it is in
   * Redis. On an error the unsent entries go back to the head of the queue and it rethrows.
   */
  flush(durable = false): Promise<void> {
    const run = this.chain.then(() => this.flushNow(durable));
    this.chain = run.catch(() => {});
    return run;
  }

  private async flushNow(durable: boolean): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    if (batch.length > 0) {
      const p = this.redis.pipeline();
      for (const e of batch) p.xadd(e.key, '*', 'k', e.kind, 'd', e.payload);
      let res: [Error | null, unknown][] | null;
      try {
        res = await p.exec();
      } catch (err) {
        this.failures++;
        this.queue = batch.concat(this.queue);
        throw err;
      }
      const failed = batch.filter((_, i) => res?.[i]?.[0] != null);
      this.sent += batch.length - failed.length;
      if (failed.length > 0) {
        this.failures++;
        this.queue = failed.concat(this.queue);
        throw res!.find((r) => r[0] != null)![0]!;
      }
    }
    if (durable && typeof this.durability === 'object') {
      const { replicas, timeoutMs } = this.durability;
      const acked = Number(await this.redis.call('WAIT', replicas, timeoutMs));
      if (acked < replicas) throw new DurabilityError(`WAIT: ${acked} of ${replicas} replica(s) acknowledged within ${timeoutMs} ms`);
    }
  }
}

/** Ids per XACK / XPENDING call. */
const ACK_BATCH = 1000;

/** An inbox entry as read: id and fields. */
export type InboxEntry = [id: string, fields: string[]];

/**
 * Points slot `slot`'s consumer group at `cursor` (creating stream and group as needed), and
 * acknowledges what is still pending up to `cursor`: entries an earlier owner read and applied
 * but died before acknowledging (kill -9 between acceptance and XACK). The checkpoint opened
 * from holds them; left pending they would stay in the dead consumer's list for good. Entries
 * after `cursor` need nothing: the group reads them again from `cursor`.
 *
 * Then it deletes every consumer of the group but `reader` (the new owner): each node that ever
 * read a slot stayed a consumer of its group for good — a cluster whose nodes restart under new
 * ids grew S consumers per restart in Redis's memory. Deleting one drops its pending entries;
 * those up to `cursor` are acknowledged above, and those after it are delivered again, since
 * the group's position is now `cursor`.
 */
export async function resetInbox(redis: Redis, keys: ClusterKeys, slot: number, cursor: string, reader: string): Promise<void> {
  const key = keys.inbox(slot);
  try {
    await redis.xgroup('CREATE', key, INBOX_GROUP, cursor, 'MKSTREAM');
  } catch (err) {
    if (!(err instanceof Error) || !err.message.includes('BUSYGROUP')) throw err;
  }
  await redis.xgroup('SETID', key, INBOX_GROUP, cursor);
  if (cursor !== '0-0') {
    for (;;) {
      const pending = (await redis.xpending(key, INBOX_GROUP, '-', cursor, ACK_BATCH)) as [string, ...unknown[]][];
      if (pending.length > 0) await redis.xack(key, INBOX_GROUP, ...pending.map(([id]) => id));
      if (pending.length < ACK_BATCH) break;
    }
  }
  const consumers = (await redis.xinfo('CONSUMERS', key, INBOX_GROUP)) as unknown[][];
  const departed = consumers.map(consumerName).filter((name) => name !== reader);
  if (departed.length === 0) return;
  const p = redis.pipeline();
  for (const name of departed) p.xgroup('DELCONSUMER', key, INBOX_GROUP, name);
  for (const [err] of (await p.exec()) ?? []) if (err !== null) throw err;
}

/** The `name` field of one XINFO CONSUMERS reply entry (a flat field/value list). */
function consumerName(fields: unknown[]): string {
  const at = fields.indexOf('name');
  return String(fields[at + 1]);
}

/**
 * After a checkpoint is accepted: acknowledges the ids it applied and trims the stream below
 * `trimBelow` — the cursor of the checkpoint it replaced, the slot's fallback (`ClusterNode`
 * keeps the entries since then so a damaged checkpoint can be replaced by its predecessor).
 */
export async function settleInbox(redis: Redis, keys: ClusterKeys, slot: number, ids: readonly string[], trimBelow: string): Promise<void> {
  const key = keys.inbox(slot);
  const p = redis.pipeline();
  for (let i = 0; i < ids.length; i += ACK_BATCH) p.xack(key, INBOX_GROUP, ...ids.slice(i, i + ACK_BATCH));
  if (trimBelow !== '0-0') p.xtrim(key, 'MINID', trimBelow);
  await p.exec();
}

/** Compares stream ids `a` and `b` ("ms-seq"). */
export function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-');
  const [bm, bs] = b.split('-');
  return Number(am) - Number(bm) || Number(as) - Number(bs);
}
