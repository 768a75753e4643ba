/**
 * `SlotHost`: the slots of a URLFrontier cluster that one serve node owns — each a whole
 * `UrlFrontierStore` with its own checkpoint + journal directory in the shared store — and the
 * peer operations answered from them.
 *
 * Owns: a slot's life on this node (open → serve → hand off or drop) and the rule that only a
 * current owner changes a slot. Never: routing (cluster.ts decides which node an item goes
 * to) or the slot map (the coordinator in src/cluster decides who owns what).
 *
 * Durability and hand-over. Slot s at epoch e lives in `<store>/<crawl>/urlfrontier/
 * slot-<s>/e<e>/`, written only by the owner of epoch e (a `FrontierLog`: every OK ack waits
 * for its journal write). Opening the slot at epoch e loads the directory the slot record's
 * `ckpt` names (the previous owner's, read without writing to it), makes that state the first
 * checkpoint of its own directory, and points `ckpt` at it with the fenced ACCEPT script of
 * src/cluster — so the record always names the directory of the newest owner that may have
 * acked anything, whether the previous owner handed the slot over (final checkpoint, ACCEPT
 * with release) or was killed (its journal holds every acked item). A stale owner cannot
 * add to what the next one reads: it refuses and FAILs calls once its heartbeat is ttl/2 old,
 * while the slot moves only after the heartbeat expired (the engine's dispatch rule).
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { type ClusterKeys, Heartbeat, type SlotRecord, acceptCheckpoint } from '../cluster/index.js';
import { LocalNode, type PutItem } from './node.js';
import { notOwner } from './peer.js';
import { type CheckpointFallback, FrontierLog, type LogSettings, loadFrontierDir } from './persist.js';
import { type AckStatus, type ControlOp, type Served, type ServeRequest, type StoreSettings, type UrlFilter, type UrlView, UrlFrontierStore, crawlName } from './store.js';

/** What a SlotHost needs. */
export interface SlotHostSettings {
  readonly redis: Redis;
  readonly keys: ClusterKeys;
  readonly crawl: string;
  /** Shared checkpoint store root (`--store`). */
  readonly storeDir: string;
  readonly nodeId: string;
  readonly heartbeatTtlMs: number;
  readonly store: StoreSettings;
  readonly fsync: boolean;
  readonly checkpointBytes: number;
  readonly checkpointEveryMs: number;
  /** The frontier clock (epoch ms; leases, due dates). */
  readonly clock: () => number;
  /** A monotonic clock (ms) for heartbeat ages. */
  readonly mono: () => number;
  readonly warn: (message: string) => void;
}

/** One slot open on this node. */
interface OwnedSlot {
  readonly slot: number;
  readonly epoch: number;
  readonly store: UrlFrontierStore;
  readonly log: FrontierLog;
  readonly node: LocalNode;
  /** Handing over or closing: no more changes. */
  moving: boolean;
}

/** A view as it crosses the wire (JSON has no Infinity: done = -1). */
export type WireView = Omit<UrlView, 'dueMs'> & { readonly dueMs: number };
export const toWire = (v: UrlView): WireView => ({ ...v, dueMs: v.dueMs === Number.POSITIVE_INFINITY ? -1 : v.dueMs });
export const fromWire = (v: WireView): UrlView => ({ ...v, dueMs: v.dueMs === -1 ? Number.POSITIVE_INFINITY : v.dueMs });

const pad = (n: number, w: number): string => String(n).padStart(w, '0');
/** A slot failing the same way is warned of again after this long (ms), with the attempts since. */
const REPEAT_WARNING_MS = 60_000;

export class SlotHost {
  private readonly slots = new Map<number, OwnedSlot>();
  /** Slots being opened or handed over (not reconciled meanwhile). */
  private readonly busy = new Map<number, Promise<void>>();
  private hb: Heartbeat;
  /** Slots whose last open or hand-over failed: the warning given, when, and attempts since. */
  private readonly failing = new Map<number, { message: string; sinceMs: number; repeats: number }>();
  private closed = false;
  private cursor = 0;

  constructor(private readonly s: SlotHostSettings) {
    this.hb = new Heartbeat(s.redis, s.keys, s.nodeId, s.heartbeatTtlMs, s.mono);
  }

  /** Renews the heartbeat; an expired entry drops every slot and joins again. */
  async beat(): Promise<void> {
    if (await this.hb.beat()) return;
    if (!this.hb.expired) return;
    this.s.warn(`node ${this.s.nodeId}: heartbeat expired; dropping ${this.slots.size} slot(s) and joining again`);
    for (const o of [...this.slots.values()]) this.drop(o);
    this.hb = new Heartbeat(this.s.redis, this.s.keys, this.s.nodeId, this.s.heartbeatTtlMs, this.s.mono);
    await this.hb.beat();
  }

  /** Whether this node may change its slots now (its heartbeat is younger than ttl/2). */
  private leaseValid(): boolean {
    return this.hb.canDispatch();
  }

  /** Slots open here. */
  owned(): number[] {
    return [...this.slots.keys()].sort((a, b) => a - b);
  }

  /** Brings the open slots in line with the slot records: opens, drops, hands over. */
  reconcile(records: readonly SlotRecord[]): void {
    if (this.closed) return;
    const lost: number[] = [];
    for (const r of records) {
      if (this.busy.has(r.slot)) continue;
      const mine = this.slots.get(r.slot);
      if (mine !== undefined && (r.owner !== this.s.nodeId || r.epoch !== mine.epoch)) {
        this.drop(mine); // moved on without us (we were presumed dead): never checkpointed as the slot's state
        lost.push(r.slot);
      }
      if (r.owner !== this.s.nodeId) continue;
      const cur = this.slots.get(r.slot);
      if (cur === undefined) this.track(r.slot, this.open(r));
      else if (r.want !== '' && !cur.moving) this.track(r.slot, this.handoff(cur));
    }
    if (lost.length > 0) {
      // Said, or the log showed slots vanish (and "heartbeat expired; dropping 0 slot(s)" after).
      this.s.warn(
        `node ${this.s.nodeId}: slot(s) ${lost.join(', ')} no longer name this node (it was presumed gone, or Redis lost its data): ` +
          'dropped; what this node acked is in their journals, which the next owner reads',
      );
    }
  }

  private track(slot: number, p: Promise<void>): void {
    const done = p
      .then(
        () => {
          this.failing.delete(slot);
        },
        (err: unknown) => this.failed(slot, `slot ${slot}: ${err instanceof Error ? err.message : String(err)}`),
      )
      .finally(() => this.busy.delete(slot));
    this.busy.set(slot, done);
  }

  /**
   * Warns of a slot that failed to open or hand over. Every reconcile tries it again, so the
   * same failure is said once per `REPEAT_WARNING_MS` with the count since, not once per tick.
   */
  private failed(slot: number, message: string): void {
    const now = this.s.mono();
    const f = this.failing.get(slot);
    if (f !== undefined && f.message === message) {
      if (now - f.sinceMs < REPEAT_WARNING_MS) {
        f.repeats++;
        return;
      }
      this.s.warn(`${message} (still failing: ${f.repeats + 1} attempts in the last ${Math.round((now - f.sinceMs) / 1000)} s)`);
    } else {
      this.s.warn(message);
    }
    this.failing.set(slot, { message, sinceMs: now, repeats: 0 });
  }

  private rel(slot: number, epoch: number): string {
    return `urlfrontier/slot-${pad(slot, 5)}/e${pad(epoch, 9)}`;
  }

  private abs(rel: string): string {
    return join(this.s.storeDir, this.s.crawl, rel);
  }

  private logSettings(dir: string): LogSettings {
    return { dir, fsync: this.s.fsync, checkpointBytes: this.s.checkpointBytes, checkpointEveryMs: this.s.checkpointEveryMs, now: this.s.clock };
  }

  private async open(r: SlotRecord): Promise<void> {
    const rel = this.rel(r.slot, r.epoch);
    const fresh = (): UrlFrontierStore => new UrlFrontierStore(this.s.store);
    let source = r.ckpt.startsWith('urlfrontier/') ? r.ckpt : '';
    let resumed = false;
    if (source === '') {
      // No record of a checkpoint, yet the store may hold the slot (Redis lost its data, or a
      // cluster restarted under the same name): resume the newest directory, never wipe it.
      const dir = `urlfrontier/slot-${pad(r.slot, 5)}`;
      const newest = (await readdir(this.abs(dir)).catch(() => [] as string[])).filter((n) => /^e\d{9}$/.test(n)).sort().pop();
      if (newest !== undefined) {
        source = `${dir}/${newest}`;
        resumed = true;
        this.s.warn(`slot ${r.slot}: its record names no checkpoint, but ${source} exists in the store; resuming from it in ${this.s.heartbeatTtlMs / 1000} s`);
        // The record that named the slot's owner is gone, so nothing says that owner stopped:
        // one cut off from Redis (it has not seen the loss) acks writes into its directory until
        // its heartbeat is TTL/2 old, and its last renewal was before the loss, which was before
        // now. Read the directory a TTL from now — the margin the normal move has — or those
        // acks would be lost (and a recovery in place would share the journal with it).
        await new Promise((resolve) => setTimeout(resolve, this.s.heartbeatTtlMs));
        if (this.closed || !(await this.stillNamed(r))) return;
      }
    }
    let store: UrlFrontierStore;
    let log: FrontierLog;
    const fellBack = (f: CheckpointFallback): void =>
      this.s.warn(`slot ${r.slot}: the checkpoint in ${source} is damaged (${f.reason}); loaded the previous one and replayed its journals (${f.records} records)`);
    if (source === rel) {
      // Ours already (reopened after a failed hand-over, or resumed): recover in place.
      store = fresh();
      const opened = FrontierLog.open(store, this.logSettings(this.abs(rel)));
      log = opened.log;
      if (opened.recovery.fallback !== undefined) fellBack(opened.recovery.fallback);
    } else {
      store = source === '' ? fresh() : loadFrontierDir(this.abs(source), fresh, fellBack);
      log = FrontierLog.adopt(store, this.logSettings(this.abs(rel)));
    }
    // Resumed without a record: the epochs restarted, so every other directory (higher-numbered
    // ones included) is from before and would be mistaken for the newest next time. Nobody
    // else can open this slot before our ACCEPT (the record names us), so removing them is safe.
    if (resumed) await this.prune(r.slot, r.epoch, true);
    let res: number;
    try {
      res = await acceptCheckpoint(this.s.redis, this.s.keys.slot(r.slot), { epoch: r.epoch, nodeId: this.s.nodeId, ckpt: rel, cursor: '0-0', applied: 0, release: false });
    } catch (err) {
      await log.close().catch(() => undefined);
      throw err;
    }
    if (res === 0 || this.closed) {
      await log.close().catch(() => undefined);
      return; // the slot moved on while we opened it
    }
    const node = new LocalNode(store, log, this.s.clock, () => this.s.nodeId);
    this.slots.set(r.slot, { slot: r.slot, epoch: r.epoch, store, log, node, moving: false });
    void this.prune(r.slot, r.epoch);
  }

  /** Whether slot `r.slot`'s record still names this node at `r.epoch`. */
  private async stillNamed(r: SlotRecord): Promise<boolean> {
    const [owner, epoch] = await this.s.redis.hmget(this.s.keys.slot(r.slot), 'owner', 'epoch');
    return owner === this.s.nodeId && Number(epoch) === r.epoch;
  }

  /** Removes the slot's directories of earlier epochs (their state is in ours now), or with `all` every other one. */
  private async prune(slot: number, epoch: number, all = false): Promise<void> {
    const dir = this.abs(`urlfrontier/slot-${pad(slot, 5)}`);
    const keep = `e${pad(epoch, 9)}`;
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (name.startsWith('e') && (name < keep || (all && name !== keep))) await rm(join(dir, name), { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private drop(o: OwnedSlot): void {
    this.slots.delete(o.slot);
    o.moving = true;
    void o.log.close().catch(() => undefined);
  }

  /** Hand-over: no more changes, everything applied durable, final checkpoint, release to `want`. */
  private async handoff(o: OwnedSlot): Promise<void> {
    o.moving = true;
    try {
      await new Promise<void>((resolve) => o.log.afterCommit(() => resolve()));
      await o.log.close();
      await acceptCheckpoint(this.s.redis, this.s.keys.slot(o.slot), {
        epoch: o.epoch,
        nodeId: this.s.nodeId,
        ckpt: this.rel(o.slot, o.epoch),
        cursor: '0-0',
        applied: 0,
        release: true,
      });
    } finally {
      // Released, refused or failed: the closed log serves no more; if the slot is still ours
      // the next reconcile reopens it from its own directory.
      this.slots.delete(o.slot);
    }
  }

  /** Waits for what is under way, closes every slot (final checkpoints) and leaves the node table. */
  /**
   * Closes every slot (final checkpoints) and leaves the node table. `bounded` limits the waits
   * on Redis (an open or hand-over in progress, the leave): an open that completes after it
   * finds the host closed and closes its slot itself.
   */
  async close(bounded: <T>(p: Promise<T>) => Promise<T | undefined> = (p) => p): Promise<void> {
    this.closed = true;
    await bounded(Promise.all(this.busy.values()));
    await Promise.all(
      [...this.slots.values()].map(async (o) => {
        o.moving = true;
        await new Promise<void>((resolve) => o.log.afterCommit(() => resolve()));
        await o.log.close().catch((err: unknown) => this.s.warn(`slot ${o.slot}: final checkpoint: ${String(err)}`));
      }),
    );
    this.slots.clear();
    await bounded(this.hb.leave().catch(() => undefined));
  }

  /** A slot this node may change now, or a not-owner error (the sender retries elsewhere). */
  private async writable(slot: number): Promise<OwnedSlot> {
    await this.busy.get(slot);
    const o = this.slots.get(slot);
    if (o === undefined) throw notOwner(slot, `not open on node ${this.s.nodeId}`);
    if (o.moving) throw notOwner(slot, 'moving to another node');
    if (!this.leaseValid()) throw notOwner(slot, `node ${this.s.nodeId} cannot renew its heartbeat`);
    return o;
  }

  // ---- operations (the peer protocol's `op`s; cluster.ts calls them directly for this node) ----

  /** Applies items of one slot; resolves with their statuses once durable (and still owned). */
  async put(slot: number, items: readonly PutItem[]): Promise<AckStatus[]> {
    const o = await this.writable(slot);
    const statuses = await new Promise<AckStatus[]>((resolve) => o.node.put(items, resolve));
    // Durable, but acked OK only while the slot cannot have moved yet (see the top comment).
    if (!this.leaseValid() || this.slots.get(slot) !== o) throw notOwner(slot, 'lost while applying; retry');
    return statuses;
  }

  /** A control call on one slot, or on every slot here (`slot` -1); returns URLs removed and the slots it reached. */
  async control(slot: number, op: ControlOp): Promise<{ removed: number; slots: number[] }> {
    const targets = slot >= 0 ? [await this.writable(slot)] : await Promise.all(this.owned().map((s) => this.writable(s)));
    let removed = 0;
    await Promise.all(
      targets.map(
        (o) =>
          new Promise<void>((resolve, reject) =>
            o.node.control(op, (err, n) => {
              if (err) reject(err);
              else {
                removed += n;
                resolve();
              }
            }),
          ),
      ),
    );
    // Durable; answered only while no slot can have moved yet (as for puts).
    for (const o of targets) if (!this.leaseValid() || this.slots.get(o.slot) !== o) throw notOwner(o.slot, 'lost while applying; retry');
    return { removed, slots: targets.map((o) => o.slot) };
  }

  /** GetURLs over this node's slots, rotating the starting slot across calls. */
  getUrls(req: ServeRequest): Served[] {
    const out: Served[] = [];
    if (!this.leaseValid()) return out;
    const list = [...this.slots.values()].filter((o) => !o.moving).sort((a, b) => a.slot - b.slot);
    let queuesLeft = req.maxQueues > 0 ? req.maxQueues : Number.POSITIVE_INFINITY;
    const now = this.s.clock();
    const n = list.length;
    let i = 0;
    for (; i < n && queuesLeft > 0; i++) {
      const o = list[(this.cursor + i) % n]!;
      const got = o.store.getUrls({ ...req, maxQueues: Number.isFinite(queuesLeft) ? queuesLeft : 0 }, now);
      if (got.length === 0) continue;
      queuesLeft -= new Set(got.map((g) => `${g.crawl}\n${g.key}`)).size;
      for (const g of got) out.push(g);
    }
    if (n > 0) this.cursor = (this.cursor + i) % n;
    return out;
  }

  /** The open slots and a fold over their stores (reads answer from every open slot, moving ones too). */
  read<T>(fn: (store: UrlFrontierStore, slot: number) => T): { slots: number[]; values: T[] } {
    const list = [...this.slots.values()].sort((a, b) => a.slot - b.slot);
    return { slots: list.map((o) => o.slot), values: list.map((o) => fn(o.store, o.slot)) };
  }

  /** Reads of one slot's store (routed to its owner). */
  async readSlot<T>(slot: number, fn: (store: UrlFrontierStore) => T): Promise<T> {
    await this.busy.get(slot);
    const o = this.slots.get(slot);
    if (o === undefined) throw notOwner(slot, `not open on node ${this.s.nodeId}`);
    return fn(o.store);
  }

  /** Per open slot: its first `limit` URLs of `crawl` matching `filter` or, with `limit` 0, their count. */
  scan(crawl: string, filter: UrlFilter, limit: number): { slots: number[]; values: { views: WireView[]; count: number }[] } {
    return this.read((store) => {
      const views: WireView[] = [];
      let count = 0;
      store.scanUrls(crawlName(crawl), filter, (v) => {
        count++;
        if (limit === 0) return true;
        views.push(toWire(v));
        return views.length < limit;
      });
      return { views, count };
    });
  }
}
