/**
 * `ClusterFrontier`: the `FrontierNode` of a serve node in a URLFrontier cluster (with a
 * `SlotHost`: it owns slots) or of a router (without: it only routes). Slot of an item =
 * `slotOf(crawlID, queue key)` among the crawl's S slots (src/cluster), so a queue — its URLs,
 * delay, block, limit and leases — lives whole in one slot.
 *
 * Owns: where each call goes. Writes and single-queue control calls go to the slot's owner
 * (this node directly, others over the peer protocol, peer.ts) and are answered once the owner
 * made them durable; a refused or unanswered forward is retried on a fresh slot map until
 * `forwardTimeoutMs`, then FAILed. Reads and crawl-wide control calls go to every live node,
 * and each answer names the slots it covers: unless together they cover every slot exactly
 * once, the call fails with UNAVAILABLE instead of returning a partial sum. Never: a slot's
 * state (slots.ts) or who owns a slot (the coordinator, src/cluster/membership.ts).
 *
 * Membership runs on a timer: heartbeat every ttl/4, a coordinator round every
 * min(1 s, ttl/4) (whoever holds the lease moves slots), and a re-read of the slot records,
 * live nodes and their advertised peer addresses every `pollMs`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { CheckpointStore, ClusterKeys, type SlotRecord, checkEviction, coordinate, crawlSalt, joinStoredCrawl, liveNodes, readCrawl, readSlots, settleBefore, slotOf } from '../cluster/index.js';
import { CorruptPartitionError, InvalidStateError } from '../errors/index.js';
import type { FrontierNode, PutItem } from './node.js';
import type { LogLevel } from './service.js';
import { PeerPool, StatusError, retryable } from './peer.js';
import { SlotHost, type WireView, fromWire, toWire } from './slots.js';
import {
  type AckStatus,
  type ControlOp,
  type Served,
  type ServeRequest,
  type StoreSettings,
  type StoreStats,
  type UrlFilter,
  type UrlView,
  crawlName,
  resolveItem,
} from './store.js';

/** The URLFrontier cluster's own record in the store, beside `crawl.json`: its `canonicalize`. */
const URLFRONTIER_FILE = 'urlfrontier.json';

/** Cluster settings of `startUrlFrontierServer` (`cluster` option). */
export interface UrlFrontierClusterOptions {
  /** Redis URL. */
  readonly redis: string;
  /** The cluster's name (its Redis keys and store directory). */
  readonly crawl: string;
  /** Shared checkpoint store directory (every node mounts the same); not needed by a router. */
  readonly store?: string;
  /** Route only: own no slot, forward every call (`meguri serve --router`). */
  readonly router?: boolean;
  /** Slots of a new cluster (recorded when the first node creates it). Default 64. */
  readonly slots?: number;
  /** Heartbeat TTL, ms. Default 10 000. */
  readonly heartbeatTtlMs?: number;
  /** Re-read of the slot map, ms. Default 200. */
  readonly pollMs?: number;
  /** Deadline of one peer call, ms. Default 5 000. */
  readonly peerTimeoutMs?: number;
  /** How long a forward is retried while its slot has no live owner, ms. Default 3 × heartbeatTtlMs. */
  readonly forwardTimeoutMs?: number;
  /** Address other nodes reach this one at. Default host:port. */
  readonly advertise?: string;
  /** Node id. Default host-pid-random. */
  readonly nodeId?: string;
}

/** What the server hands the cluster node. */
export interface ClusterContext {
  readonly store: StoreSettings;
  readonly fsync: boolean;
  readonly checkpointBytes: number;
  readonly checkpointEveryMs: number;
  readonly clock: () => number;
  readonly maxMessageBytes: number;
  readonly warn: (message: string) => void;
  /** Informational lines (Redis answering again). Default: none. */
  readonly info?: (message: string) => void;
  /** Sets this node's log level for a logger prefix (a peer's SetLogLevel with `local` false). */
  readonly setLogLevel?: (prefix: string, level: LogLevel) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mono = (): number => performance.now();

const unavailable = (message: string): StatusError => new StatusError(grpc.status.UNAVAILABLE, message);

/** Forwarding calls in flight to one node before further puts wait and go together. */
const PUT_WINDOW = 2;
/** While Redis keeps failing, how often the failure is said again (ms). */
const REPEAT_FAILURE_MS = 60_000;

interface PendingPut {
  readonly slot: number;
  readonly items: readonly PutItem[];
  readonly resolve: (statuses: AckStatus[]) => void;
  readonly reject: (err: unknown) => void;
}

interface Covered<T> {
  readonly slots: number[];
  readonly values: T[];
}

export class ClusterFrontier implements FrontierNode {
  readonly keys: ClusterKeys;
  readonly nodeId: string;
  private readonly redis: Redis;
  private readonly pool: PeerPool;
  private host: SlotHost | undefined;
  private S = 0;
  private records: SlotRecord[] = [];
  private live: string[] = [];
  private addresses = new Map<string, string>();
  private readonly salts = new Map<string, Uint32Array>();
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private lastBeat = -Infinity;
  private lastCoord = -Infinity;
  private rr = 0;
  /** Advertised nodes that were not live at the coordinator's last round. */
  private notLive = new Set<string>();
  /** The address this node advertises to its peers (a serve node; set in `start`). */
  private advertised: string | undefined;
  /** The store, for records Redis lost (a serve node). */
  private store: CheckpointStore | undefined;
  /** Since when (monotonic ms) the membership ticks have failed, and when that was last said. */
  private failingSince: number | undefined;
  private failingSaidAt = 0;
  /** The connection's last error (ECONNREFUSED …): what a failed command's own message hides. */
  private lastRedisError: string | undefined;
  /** Forwarded puts per destination node: calls in flight and groups waiting for the next. */
  private readonly outgoing = new Map<string, { inFlight: number; queue: PendingPut[]; scheduled: boolean }>();
  private stopped = false;
  private readonly ttl: number;
  private readonly pollMs: number;
  private readonly peerTimeoutMs: number;
  private readonly forwardTimeoutMs: number;

  constructor(
    private readonly o: UrlFrontierClusterOptions,
    private readonly ctx: ClusterContext,
  ) {
    this.keys = new ClusterKeys(o.crawl);
    this.nodeId = o.nodeId ?? `${hostname().slice(0, 60)}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.ttl = o.heartbeatTtlMs ?? 10_000;
    this.pollMs = o.pollMs ?? 200;
    this.peerTimeoutMs = o.peerTimeoutMs ?? 5_000;
    this.forwardTimeoutMs = o.forwardTimeoutMs ?? 3 * this.ttl;
    this.redis = new Redis(o.redis, { maxRetriesPerRequest: 2, lazyConnect: true });
    this.redis.on('error', (err: unknown) => {
      this.lastRedisError = err instanceof Error ? err.message : String(err);
    });
    this.pool = new PeerPool(ctx.maxMessageBytes);
  }

  /** Redis hash: node id → the address its peer service listens on. */
  /**
   * Every node must resolve items alike, or they would route one URL to two slots: the first node
   * records its `canonicalize` in Redis and in the store (`URLFRONTIER_FILE`), every other must
   * match. The store's copy is what a lost Redis record is set from — not the flag of whichever
   * node comes back first, which would key URLs another way than the slots' checkpoints do.
   * @throws InvalidStateError when this node's flag differs from the recorded one, or Redis and
   *   the store disagree.
   */
  private async joinCanonicalize(store: CheckpointStore): Promise<void> {
    const canon = String(this.ctx.store.canonicalize);
    const kept = await store.readRecordFile(URLFRONTIER_FILE, 'meguri-urlfrontier/1');
    const keptCanon = kept?.['canonicalize'];
    if (kept !== undefined && keptCanon !== 'true' && keptCanon !== 'false') {
      throw new CorruptPartitionError(`crawl record ${join(store.dir, URLFRONTIER_FILE)}`, `canonicalize is ${JSON.stringify(keptCanon)}, not "true" or "false"`);
    }
    await this.redis.hsetnx(this.keys.crawlRecord, 'urlfrontier.canonicalize', (keptCanon as string | undefined) ?? canon);
    const recorded = await this.redis.hget(this.keys.crawlRecord, 'urlfrontier.canonicalize');
    if (keptCanon !== undefined && recorded !== keptCanon) {
      throw new InvalidStateError(`URLFrontier cluster ${JSON.stringify(this.o.crawl)}: Redis records canonicalize ${recorded}, ${join(store.dir, URLFRONTIER_FILE)} ${String(keptCanon)}; is --store this cluster's own?`);
    }
    if (recorded !== canon) throw new InvalidStateError(`URLFrontier cluster ${JSON.stringify(this.o.crawl)} runs with canonicalize ${recorded}; this node was given ${canon}`);
    if (kept === undefined) await store.writeRecordFile(URLFRONTIER_FILE, 'meguri-urlfrontier/1', { canonicalize: canon });
  }

  private get peersKey(): string {
    return `${this.keys.nodes}:urlfrontier`;
  }

  /**
   * Joins the crawl's records in Redis — its settings (created from the store's `crawl.json`
   * when Redis has none) and its canonicalize — and returns the slot count.
   */
  private async joinRecords(given: { slots?: number }): Promise<number> {
    const store = this.store!;
    const joined = await joinStoredCrawl(this.redis, this.keys, store, given);
    if (joined.restored !== undefined) this.ctx.warn(`Redis had no record of URLFrontier cluster ${JSON.stringify(this.o.crawl)}: its settings were restored from ${joined.restored}`);
    await this.joinCanonicalize(store);
    return joined.settings.slots;
  }

  /**
   * A serve node whose address is gone from Redis — Redis restarted without its data, or the
   * coordinator forgot the node while its heartbeat had expired (a stall, a partition) — puts
   * the crawl's records back from the store and advertises again. Until then no peer could
   * forward to it and every stats or listing call failed UNAVAILABLE, for as long as it ran.
   */
  private async readvertise(): Promise<void> {
    if (this.advertised === undefined || this.addresses.get(this.nodeId) === this.advertised) return;
    // Not live (its heartbeat entry went with Redis's data and is re-made once it expires here):
    // nothing is routed to it, and the coordinator would forget the address again.
    if (!this.live.includes(this.nodeId)) return;
    await this.joinRecords({ slots: this.S });
    await this.redis.hset(this.peersKey, this.nodeId, this.advertised);
    this.addresses.set(this.nodeId, this.advertised);
    this.ctx.warn(`node ${this.nodeId}: its address was gone from Redis (Redis lost its data, or this node was presumed gone); advertised ${this.advertised} again`);
  }

  /** Joins the cluster (creating it if needed) as a node, or attaches as a router; starts the membership timer. */
  async start(advertise: string): Promise<void> {
    try {
      await this.redis.connect();
      if (this.o.router === true) {
        const settings = await readCrawl(this.redis, this.keys);
        if (settings === undefined) throw new InvalidStateError(`URLFrontier cluster ${JSON.stringify(this.o.crawl)} does not exist in Redis yet: start a node (meguri serve --redis … --crawl … --store …) first`);
        this.S = settings.slots;
      } else {
        if (this.o.store === undefined) throw new InvalidStateError('a URLFrontier cluster node needs a store directory (--store)');
        await checkEviction(this.redis);
        // The slot count is kept in the store too: a Redis that lost its data gets it back from
        // there, not from this node's flags (another count would move every URL's slot).
        const store = new CheckpointStore(this.o.store, this.o.crawl);
        this.store = store;
        this.advertised = this.o.advertise ?? advertise;
        this.S = await this.joinRecords(this.o.slots === undefined ? {} : { slots: this.o.slots });
        await this.redis.hset(this.peersKey, this.nodeId, this.advertised);
        this.host = new SlotHost({
          redis: this.redis,
          keys: this.keys,
          crawl: this.o.crawl,
          storeDir: this.o.store,
          nodeId: this.nodeId,
          heartbeatTtlMs: this.ttl,
          store: this.ctx.store,
          fsync: this.ctx.fsync,
          checkpointBytes: this.ctx.checkpointBytes,
          checkpointEveryMs: this.ctx.checkpointEveryMs,
          clock: this.ctx.clock,
          mono,
          warn: this.ctx.warn,
        });
        await this.host.beat();
        this.lastBeat = mono();
      }
      await this.tick();
    } catch (err) {
      this.redis.disconnect();
      this.pool.close();
      throw err;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().then(
        () => this.tickSucceeded(),
        (err: unknown) => this.tickFailed(err),
      );
      void this.ticking.then(() => this.schedule());
    }, this.pollMs);
  }

  /**
   * A failed membership tick (Redis down or refusing) is said once, then once a minute with how
   * long it has lasted — not on every tick, five times a second — and its end once.
   */
  private tickFailed(err: unknown): void {
    const now = mono();
    const message = err instanceof Error ? err.message : String(err);
    // ioredis fails a command queued through reconnects with "Reached the max retries per
    // request limit …", which names no cause; the connection's own error does.
    const why = /max retries per request/i.test(message) && this.lastRedisError !== undefined ? this.lastRedisError : message;
    if (this.failingSince === undefined) {
      this.failingSince = now;
      this.failingSaidAt = now;
      this.ctx.warn(
        `cluster: Redis did not answer (${why}); retrying every ${this.pollMs} ms` +
          (this.host === undefined ? '' : `; this node's slots refuse changes once its heartbeat is ${this.ttl / 2000} s old, and move to other nodes after ${this.ttl / 1000} s`),
      );
    } else if (now - this.failingSaidAt >= REPEAT_FAILURE_MS) {
      this.failingSaidAt = now;
      this.ctx.warn(`cluster: Redis still not answering after ${Math.round((now - this.failingSince) / 1000)} s (${why})`);
    }
  }

  private tickSucceeded(): void {
    if (this.failingSince === undefined) return;
    this.ctx.info?.(`cluster: Redis answering again after ${Math.max(1, Math.round((mono() - this.failingSince) / 1000))} s`);
    this.failingSince = undefined;
    this.lastRedisError = undefined;
  }

  private async tick(): Promise<void> {
    const now = mono();
    if (this.host !== undefined) {
      if (now - this.lastBeat >= this.ttl / 4) {
        this.lastBeat = now;
        await this.host.beat();
      }
      if (now - this.lastCoord >= Math.min(1_000, this.ttl / 4)) {
        this.lastCoord = now;
        const round = await coordinate(this.redis, this.keys, this.nodeId, this.S, this.ttl);
        if (round.leader) await this.forgetAddresses();
      }
    }
    await this.refresh();
    await this.readvertise();
    this.host?.reconcile(this.records);
  }

  /**
   * The coordinator drops the advertised addresses of nodes that were not live in two rounds
   * running (node ids are new per process, so the hash would only grow); two rounds, because a
   * starting node advertises just before its first heartbeat.
   */
  private async forgetAddresses(): Promise<void> {
    const gone = [...this.addresses.keys()].filter((id) => !this.live.includes(id));
    const twice = gone.filter((id) => this.notLive.has(id));
    this.notLive = new Set(gone);
    if (twice.length > 0) await this.redis.hdel(this.peersKey, ...twice);
  }

  /** Re-reads slot records, live nodes and addresses (concurrent callers share one read). */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const [records, live, addresses] = await Promise.all([readSlots(this.redis, this.keys, this.S), liveNodes(this.redis, this.keys), this.redis.hgetall(this.peersKey)]);
        this.records = records;
        this.live = live;
        this.addresses = new Map(Object.entries(addresses));
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /**
   * A retry loop's re-read of the slot map, waited for no later than `deadline` (monotonic ms)
   * and never failing: over a link to Redis that is down or frozen a command neither answers
   * nor fails, and a call waiting on it outlived its own deadline — a put to a node cut off
   * from Redis was never acked, for as long as the cut lasted. The read goes on in the
   * background (the next caller shares it).
   */
  private async refreshBefore(deadline: number): Promise<boolean> {
    return (await settleBefore(this.refresh().then(() => true), deadline)) === true;
  }

  /** Stops the timer, closes the slots (final checkpoints; they move to the other nodes) and leaves. */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // Each wait on Redis is bounded by one TTL from here: over a frozen link a command neither
    // answers nor fails, and the server never exited (measured: still closing after 20 s). A
    // node that leaves without Redis is a node killed: its slots move once its heartbeat
    // expires, from its journals, which the slots' final checkpoints below have closed.
    const deadline = mono() + this.ttl;
    const bounded = <T>(p: Promise<T>): Promise<T | undefined> => settleBefore(p, deadline);
    await bounded(this.ticking);
    try {
      await this.host?.close(bounded);
      if (this.host !== undefined) await bounded(this.redis.hdel(this.peersKey, this.nodeId));
    } finally {
      this.pool.close();
      this.redis.disconnect();
    }
  }

  // ---- routing ----

  private slotOf(crawl: string, key: string): number {
    let salt = this.salts.get(crawl);
    if (salt === undefined) {
      if (this.salts.size > 10_000) this.salts.clear();
      salt = crawlSalt(crawl);
      this.salts.set(crawl, salt);
    }
    return slotOf(crawl, key, this.S, salt);
  }

  /** Runs `op` on node `id`: this node's host directly, another over the peer protocol. */
  private async on<T>(id: string, op: string, args: Record<string, unknown>): Promise<T> {
    if (id === this.nodeId && this.host !== undefined) return (await this.local(op, args)) as T;
    const address = this.addresses.get(id);
    if (address === undefined) throw unavailable(`node ${id} has not advertised an address`);
    return this.pool.call<T>(address, op, args, this.peerTimeoutMs);
  }

  /** Answers a peer call from this node's slots (the server registers it as the peer handler). */
  readonly local = async (op: string, a: Record<string, unknown>): Promise<unknown> => {
    if (op === 'logLevel') {
      this.ctx.setLogLevel?.(a['prefix'] as string, a['level'] as LogLevel);
      return {};
    }
    const h = this.host;
    if (h === undefined) throw new StatusError(grpc.status.FAILED_PRECONDITION, 'a router owns no slot');
    const crawl = a['crawl'] as string;
    const key = a['key'] as string;
    switch (op) {
      case 'put': {
        // Groups of items, one per slot, each answered on its own (one may have moved).
        const groups = a['groups'] as { slot: number; items: PutItem[] }[];
        const settled = await Promise.allSettled(groups.map((g) => h.put(g.slot, g.items)));
        return {
          results: settled.map((r) =>
            r.status === 'fulfilled'
              ? { statuses: r.value }
              : { code: (r.reason as { grpcCode?: number }).grpcCode ?? grpc.status.INTERNAL, error: r.reason instanceof Error ? r.reason.message : String(r.reason) },
          ),
        };
      }
      case 'control':
        return h.control(a['slot'] as number, a['op'] as ControlOp);
      case 'getUrls':
        return { served: h.getUrls(a['req'] as ServeRequest) };
      case 'hasQueue':
        return { has: await h.readSlot(a['slot'] as number, (s) => s.hasQueue(crawlName(crawl), key)) };
      case 'stats':
        return h.read((s) => s.stats(crawlName(crawl), key, this.ctx.clock()));
      case 'listQueues':
        return h.read((s) => s.listQueues(crawlName(crawl), a['includeInactive'] === true, this.ctx.clock()));
      case 'scan':
        return h.scan(crawl, a['filter'] as UrlFilter, a['limit'] as number);
      case 'status':
        return h.read((s) => {
          const v = s.status(crawlName(crawl), a['url'] as string, key);
          return v === undefined ? null : toWire(v);
        });
      case 'crawls':
        return h.read((s) => s.crawlIds());
      case 'active':
        return h.read((s) => s.active);
      default:
        throw new StatusError(grpc.status.UNIMPLEMENTED, `unknown peer operation ${JSON.stringify(op)}`);
    }
  };

  /**
   * Sends one slot's items to node `id`. Groups for one node travel together: those gathered
   * in one event-loop turn, and those that arrive while `PUT_WINDOW` calls to it are in flight
   * (sent when one returns). A stream's turn often carries one or two items, and one peer call
   * per turn and slot cost more than the items (measured: ~1 k forwarded items/s with two
   * nodes and a same-process client, one call per 1.3 items).
   */
  private sendPut(id: string, slot: number, items: readonly PutItem[]): Promise<AckStatus[]> {
    if (id === this.nodeId && this.host !== undefined) return this.host.put(slot, items);
    return new Promise((resolve, reject) => {
      let lane = this.outgoing.get(id);
      if (lane === undefined) this.outgoing.set(id, (lane = { inFlight: 0, queue: [], scheduled: false }));
      lane.queue.push({ slot, items, resolve, reject });
      if (lane.inFlight < PUT_WINDOW && !lane.scheduled) {
        lane.scheduled = true;
        setImmediate(() => this.flushPuts(id));
      }
    });
  }

  private flushPuts(id: string): void {
    const lane = this.outgoing.get(id);
    if (lane === undefined) return;
    lane.scheduled = false;
    if (lane.queue.length === 0 || lane.inFlight >= PUT_WINDOW) return;
    const batch = lane.queue;
    lane.queue = [];
    lane.inFlight++;
    type Result = { statuses: AckStatus[] } | { code: number; error: string };
    this.on<{ results: Result[] }>(id, 'put', { groups: batch.map((g) => ({ slot: g.slot, items: g.items })) })
      .then(
        (res) =>
          batch.forEach((g, i) => {
            const r = res.results[i];
            if (r !== undefined && 'statuses' in r) g.resolve(r.statuses);
            else g.reject(new StatusError(r?.code ?? grpc.status.INTERNAL, r?.error ?? 'no answer for this slot'));
          }),
        (err: unknown) => {
          for (const g of batch) g.reject(err);
        },
      )
      .finally(() => {
        lane.inFlight--;
        if (lane.queue.length > 0) this.flushPuts(id);
        else if (lane.inFlight === 0) this.outgoing.delete(id);
      });
  }

  /** Runs `op` at the owner of `slot`, retrying on a fresh slot map while the slot moves or has no live owner. */
  private async toOwner<T>(slot: number, op: string, args: Record<string, unknown>, timeoutMs = this.forwardTimeoutMs): Promise<T> {
    const deadline = mono() + timeoutMs;
    for (;;) {
      const owner = this.records[slot]?.owner ?? '';
      try {
        if (owner === '' || !this.live.includes(owner)) throw unavailable(`slot ${slot} has no live owner`);
        if (op === 'put') return { statuses: await this.sendPut(owner, slot, args['items'] as PutItem[]) } as T;
        return await this.on<T>(owner, op, { ...args, slot });
      } catch (err) {
        if (!retryable(err) || mono() >= deadline || this.stopped) throw err;
        await sleep(Math.min(this.pollMs, 50));
        await this.refreshBefore(deadline);
      }
    }
  }

  /**
   * Runs `op` on every live node and checks the answers cover every slot exactly once; a node
   * that does not answer fails the call (UNAVAILABLE), and so does a slot nobody answered for
   * after a short wait (it is between owners).
   */
  private async fanOut<T>(op: string, args: Record<string, unknown>, local = false): Promise<T[]> {
    // The schema's `local`: this node's own slots, whatever the others hold (a router, owning
    // none, answers for the cluster as it always does).
    if (local && this.host !== undefined) return ((await this.local(op, args)) as Covered<T>).values;
    const deadline = mono() + Math.min(this.forwardTimeoutMs, this.ttl);
    for (;;) {
      const nodes = [...this.live];
      if (nodes.length === 0) throw unavailable(`no live node in cluster ${JSON.stringify(this.o.crawl)}`);
      const answers = await Promise.all(
        nodes.map((n) =>
          this.on<Covered<T>>(n, op, args).catch((err: unknown) => {
            throw unavailable(
              `node ${n} (${this.addresses.get(n) ?? 'no address'}) did not answer (${err instanceof Error ? err.message : String(err)}); ` +
                'refusing to answer from the other nodes only, which would under-count',
            );
          }),
        ),
      );
      const seen = new Uint8Array(this.S);
      for (const a of answers) for (const s of a.slots) seen[s]!++;
      const missing: number[] = [];
      for (let s = 0; s < this.S; s++) if (seen[s] !== 1) missing.push(s);
      if (missing.length === 0) return answers.flatMap((a) => a.values);
      if (mono() >= deadline || this.stopped) {
        throw unavailable(`slot(s) ${missing.slice(0, 8).join(', ')}${missing.length > 8 ? ', …' : ''} of ${this.S} have no serving owner (one is down or moving); retry`);
      }
      await sleep(Math.min(this.pollMs, 50));
      await this.refreshBefore(deadline);
    }
  }

  // ---- FrontierNode ----

  put(items: readonly PutItem[], done: (statuses: AckStatus[]) => void): void {
    const statuses: AckStatus[] = new Array(items.length);
    const groups = new Map<number, number[]>();
    const canon = this.ctx.store.canonicalize;
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      const r = resolveItem(it.url, it.key, it.crawl, canon);
      if (r === undefined) {
        statuses[i] = 'SKIPPED';
        continue;
      }
      const s = this.slotOf(r.crawl, r.key);
      let g = groups.get(s);
      if (g === undefined) groups.set(s, (g = []));
      g.push(i);
    }
    const pending = [...groups].map(async ([slot, idx]) => {
      try {
        const res = await this.toOwner<{ statuses: AckStatus[] }>(slot, 'put', { items: idx.map((i) => items[i]) });
        idx.forEach((i, j) => (statuses[i] = res.statuses[j] ?? 'FAIL'));
      } catch (err) {
        this.ctx.warn(`put to slot ${slot}: ${err instanceof Error ? err.message : String(err)}; ${idx.length} item(s) answered FAIL`);
        for (const i of idx) statuses[i] = 'FAIL';
      }
    });
    if (pending.length === 0) setImmediate(() => done(statuses));
    else void Promise.all(pending).then(() => done(statuses));
  }

  async getUrls(req: ServeRequest): Promise<Served[]> {
    if (req.key !== '' && req.crawl !== undefined) {
      // One queue: its owner serves it, wherever the call came in.
      const slot = this.slotOf(crawlName(req.crawl), req.key);
      if (this.host === undefined || this.records[slot]?.owner !== this.nodeId) {
        // A crawler polls GetURLs again anyway: wait for a moving queue no longer than one peer call.
        return (await this.toOwner<{ served: Served[] }>(slot, 'getUrls', { req }, this.peerTimeoutMs).catch(() => ({ served: [] }))).served;
      }
    }
    // A node serves its own slots, except for one queue of any crawl: a queue of that name in
    // each crawl has a slot of its own, on any node.
    const namedInAnyCrawl = req.key !== '' && req.crawl === undefined;
    if (this.host !== undefined && !namedInAnyCrawl) return this.host.getUrls(req);
    // A router, or a queue named in any crawl: ask the nodes in turn (this one first) until
    // max_queues queues produced URLs.
    const out: Served[] = [];
    let left = req.maxQueues > 0 ? req.maxQueues : Number.POSITIVE_INFINITY;
    const nodes = this.host === undefined ? [...this.live] : [this.nodeId, ...this.live.filter((n) => n !== this.nodeId)];
    const start = this.host === undefined ? this.rr++ : 0;
    for (let i = 0; i < nodes.length && left > 0; i++) {
      const n = nodes[(start + i) % nodes.length]!;
      const got = await this.on<{ served: Served[] }>(n, 'getUrls', { req: { ...req, maxQueues: Number.isFinite(left) ? left : 0 } }).catch(() => ({ served: [] as Served[] }));
      left -= new Set(got.served.map((g) => `${g.crawl}\n${g.key}`)).size;
      for (const g of got.served) out.push(g);
    }
    return out;
  }

  control(op: ControlOp, done: (err: Error | undefined, removed: number) => void): void {
    const oneQueue = (op.kind === 'delay' || op.kind === 'purge') ? op.key !== '' : op.kind === 'block' || op.kind === 'limit' || op.kind === 'deleteQueue';
    const run = oneQueue
      ? this.toOwner<{ removed: number }>(this.slotOf((op as { crawl: string }).crawl, (op as { key: string }).key), 'control', { op }).then((r) => r.removed)
      : this.broadcast(op);
    run.then(
      (removed) => done(undefined, removed),
      (err: unknown) => done(err instanceof Error ? err : new Error(String(err)), 0),
    );
  }

  /**
   * A crawl-wide control call: every live node applies it to all its slots, and together they
   * must reach every slot. An attempt that misses a slot (an owner down, a slot moving) is
   * repeated; what the nodes removed adds up over the attempts, since a repeat finds the URLs an
   * earlier attempt removed already gone — summing only the last attempt undercounted (a
   * DeleteCrawl of 50 URLs answered 10 when a slot moved between the two).
   */
  private async broadcast(op: ControlOp): Promise<number> {
    const deadline = mono() + this.forwardTimeoutMs;
    let removed = 0;
    for (;;) {
      const nodes = [...this.live];
      const answers = await Promise.allSettled(nodes.map((n) => this.on<{ removed: number; slots: number[] }>(n, 'control', { op, slot: -1 })));
      const seen = new Uint8Array(this.S);
      let failure: unknown;
      for (const a of answers) {
        if (a.status === 'rejected') {
          failure ??= a.reason;
          continue;
        }
        removed += a.value.removed;
        for (const sl of a.value.slots) seen[sl] = 1;
      }
      if (seen.every((v) => v === 1)) return removed;
      const err = failure ?? unavailable(`${op.kind} reached ${seen.reduce((t, v) => t + v, 0)} of ${this.S} slots (an owner is down or a slot is moving); it is safe to repeat`);
      if (!retryable(err) || mono() >= deadline || this.stopped) throw err;
      await sleep(Math.min(this.pollMs, 50));
      await this.refreshBefore(deadline);
    }
  }

  async hasQueue(crawl: string, key: string): Promise<boolean> {
    return (await this.toOwner<{ has: boolean }>(this.slotOf(crawlName(crawl), key), 'hasQueue', { crawl, key })).has;
  }

  async stats(crawl: string, key: string, local = false): Promise<StoreStats> {
    const parts = await this.fanOut<StoreStats>('stats', { crawl, key }, local);
    const sum = (f: (s: StoreStats) => number): number => parts.reduce((t, s) => t + f(s), 0);
    return {
      size: sum((s) => s.size),
      inProcess: sum((s) => s.inProcess),
      completed: sum((s) => s.completed),
      activeQueues: sum((s) => s.activeQueues),
      numberOfQueues: sum((s) => s.numberOfQueues),
      crawlID: crawlName(crawl),
    };
  }

  async listQueues(crawl: string, includeInactive: boolean, local = false): Promise<string[]> {
    return (await this.fanOut<string[]>('listQueues', { crawl, includeInactive }, local)).flat();
  }

  async scanUrls(crawl: string, filter: UrlFilter, limit: number, visit: (v: UrlView) => boolean, local = false): Promise<void> {
    const parts = await this.fanOut<{ views: WireView[] }>('scan', { crawl, filter, limit: Math.max(1, limit) }, local);
    for (const p of parts) for (const v of p.views) if (!visit(fromWire(v))) return;
  }

  async countUrls(crawl: string, filter: UrlFilter, local = false): Promise<number> {
    return (await this.fanOut<{ count: number }>('scan', { crawl, filter, limit: 0 }, local)).reduce((t, p) => t + p.count, 0);
  }

  async status(crawl: string, url: string, key: string): Promise<UrlView | undefined> {
    const found = (await this.fanOut<WireView | null>('status', { crawl, url, key })).find((v) => v !== null);
    return found === undefined || found === null ? undefined : fromWire(found);
  }

  async crawls(local = false): Promise<string[]> {
    return [...new Set((await this.fanOut<string[]>('crawls', {}, local)).flat())];
  }

  async isActive(local = false): Promise<boolean> {
    return (await this.fanOut<boolean>('active', {}, local)).every((a) => a);
  }

  /**
   * SetLogLevel with `local` false: every other live node sets it too (this one already has).
   * A node that does not answer within the peer timeout is named in the UNAVAILABLE error.
   */
  async logLevelEverywhere(prefix: string, level: LogLevel): Promise<void> {
    const others = this.live.filter((id) => id !== this.nodeId);
    const answers = await Promise.allSettled(others.map((id) => this.on<object>(id, 'logLevel', { prefix, level })));
    const missed = others.filter((_, i) => answers[i]!.status === 'rejected');
    if (missed.length > 0) throw unavailable(`SetLogLevel did not reach node(s) ${missed.join(', ')}; it is safe to repeat`);
  }

  async nodes(): Promise<string[]> {
    if (!(await this.refreshBefore(mono() + this.peerTimeoutMs))) throw unavailable(`Redis did not answer within ${this.peerTimeoutMs} ms: the live nodes are unknown`);
    return this.live.map((id) => this.addresses.get(id) ?? id);
  }

  now(): number {
    return this.ctx.clock();
  }
}
