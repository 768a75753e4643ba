/**
 * One slot's live state on its owner: the slot's `Frontier`, the inbox cursor its state has
 * applied through, and the applied count and digest an audit checks. Applying an entry and
 * advancing the cursor happen together in one synchronous step, and a snapshot takes the
 * partition and the cursor together, so a checkpoint always pairs a state with exactly the
 * entries it contains: recovery resets the consumer group to that cursor and every entry is
 * applied to the slot's state exactly once. The robots.txt entries of the slot's origins, when
 * the node has a robots seam, go into the same snapshot's meta (they are the robots cache's,
 * not the slot's: this file only carries them).
 */
import { type Hash, createHash } from 'node:crypto';
import { Frontier, type FrontierOptions, shiftPartitionClock, withoutClockReading } from '../frontier/index.js';
import { type PartitionImage, decodePartition, encodePartition } from '../format/index.js';
import type { ClockOffset } from './membership.js';
import type { FetchRequest } from '../model/index.js';
import { decodeLinks, decodeSeeds, type InboxEntry } from './routing.js';
import type { RobotsSnapshot } from '../fetch/robots-cache.js';
import { SLOT_FORMAT_MINOR, type SlotCheckpointMeta } from './store.js';

const HOUR_MS = 3_600_000;

/**
 * A periodic checkpoint that would write what the slot's accepted checkpoint already holds is
 * skipped, for at most this long since that one was written: a slot of a `--recrawl` crawl
 * between due hours, or one whose hosts all wait, rewrote its whole partition every period
 * (10 s by default) into the shared store for nothing. Keep in sync with the engine's
 * `IDLE_CHECKPOINT_MS` (src/engine/engine.ts), the same rule for a single process (a copy: the
 * cluster never imports the engine).
 */
export const IDLE_SLOT_CHECKPOINT_MS = HOUR_MS;

/** Folds an entry id into an order-sensitive digest (FNV-1a over the id, then mixed into the running value). */
export function foldDigest(digest: number, id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (Math.imul(digest ^ 0x9e3779b9, 0x85ebca6b) ^ h) >>> 0;
}

/** A consistent cut of a slot: the partition and the cursor it applied through. */
export interface SlotSnapshot {
  readonly partition: Uint8Array;
  readonly meta: SlotCheckpointMeta;
  /** Ids applied since the previous snapshot (acknowledged once this one is accepted). */
  readonly acks: string[];
  /**
   * A digest of what the checkpoint holds: the partition's bytes and every meta field but the
   * sequence number and the clock offset (a measurement of this node's clock, not state).
   */
  readonly stateKey: string;
}

/** Feeds every section of `image` to `h`, each framed by its length (a digest of what the image holds, not of its file bytes). */
function hashImage(h: Hash, image: PartitionImage): void {
  h.update(JSON.stringify([image.meta, image.formatMinor, image.rows, image.hosts, image.ips ?? null]));
  for (const c of image.columns) {
    const bytes = new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength);
    h.update(`${c.id}/${c.type}/${c.lanes}/${bytes.length};`).update(bytes);
  }
  for (const b of [image.arena, image.seenFilter, image.prioritizer, image.freshness, image.scheduler]) h.update(`${b.length};`).update(b);
}

export class SlotState {
  cursor: string;
  applied: number;
  digest: number;
  private seq: number;
  private acks: string[] = [];
  /** The owner is handing the slot off (or leaving): no new dispatches, and no new sends, from it. */
  moving = false;
  /** In-flight fetches of this slot (dispatched, outcome not yet in; some may still wait at the IP gate). */
  inFlight = 0;
  /** In-flight fetches whose request left (the server saw them). */
  sending = 0;
  /** Aborts the slot's sent fetches when a hand-off's drain bound passes. */
  abort = new AbortController();
  /**
   * Fetches of a moving slot whose outcome the frontier is never told: abandoned at the gate
   * unsent, or cut by the drain bound (`sent`). Their rows stay in flight, which a checkpoint
   * writes schedulable, so the next owner dispatches them; if the hand-off fails the unsent
   * ones are sent (`unsent`) and the cut ones reported as transport failures (retried).
   */
  readonly parked: { readonly req: FetchRequest; readonly sent: boolean }[] = [];
  /**
   * Fetches this node never sent while the slot stayed its own: it lost the right to dispatch
   * (its heartbeat not renewed for ttl/2, Redis unreachable) while they waited at the IP gate.
   * Nothing was heard of the URL or its host, so the frontier is told nothing (their rows stay
   * in flight, which a checkpoint writes schedulable); the node sends them once it may
   * dispatch again, before anything new (`ClusterNode` dispatch).
   */
  readonly unsent: FetchRequest[] = [];
  /** Clock (ms) of the last accepted checkpoint. */
  checkpointedAt: number;
  /**
   * The slot's accepted checkpoint (its path in the store; '' = none) and the inbox cursor it
   * was taken at. When the next one is accepted, this one becomes the slot's fallback: the inbox
   * is trimmed and the store pruned only behind it (`ClusterNode`'s commit).
   */
  accepted: { readonly rel: string; readonly cursor: string } = { rel: '', cursor: '0-0' };
  /**
   * The `stateKey` of the slot's accepted checkpoint as this owner wrote it and when (clock ms);
   * undefined until this owner's first is accepted (a slot just opened always writes one).
   */
  written: { readonly stateKey: string; readonly atMs: number } | undefined = undefined;
  /** Completions reported to the slot over the crawl's life (`SlotCheckpointMeta.counted`). */
  readonly counted: { pages: number; requests: number };

  constructor(
    readonly crawl: string,
    readonly slot: number,
    readonly epoch: number,
    readonly frontier: Frontier,
    meta: SlotCheckpointMeta | undefined,
    nowMs: number,
  ) {
    this.cursor = meta?.cursor ?? '0-0';
    this.applied = meta?.applied ?? 0;
    this.digest = meta?.digest ?? 0;
    this.counted = { pages: meta?.counted?.pages ?? 0, requests: meta?.counted?.requests ?? 0 };
    this.seq = meta !== undefined && meta.epoch === epoch ? meta.seq : 0;
    this.checkpointedAt = nowMs;
  }

  /**
   * A slot from its accepted checkpoint (or empty when it has none); `admitted` is given each
   * of the checkpoint's URLs, as `apply` gives each URL of an inbox entry.
   */
  static open(
    crawl: string,
    slot: number,
    epoch: number,
    source: { meta: SlotCheckpointMeta; partition: Uint8Array } | undefined,
    options: Partial<FrontierOptions>,
    nowMs: number,
    admitted?: (url: string) => void,
    clockShift = 0,
  ): SlotState {
    let f: Frontier;
    if (source === undefined) f = new Frontier(slot, Math.floor(nowMs / HOUR_MS), options);
    else if (clockShift === 0) f = Frontier.recover(source.partition, options, admitted);
    else f = Frontier.recover(shiftPartitionClock(decodePartition(source.partition), clockShift), options, admitted);
    return new SlotState(crawl, slot, epoch, f, source?.meta, nowMs);
  }

  /** Applies inbox entries in stream order; returns the URLs that entered as schedulable. */
  apply(entries: readonly InboxEntry[], nowMs: number, admitted?: (url: string) => void): number {
    const f = this.frontier;
    const hours = Math.floor(nowMs / HOUR_MS);
    let fresh = 0;
    for (const [id, fields] of entries) {
      let kind = '';
      let payload = '';
      for (let i = 0; i + 1 < fields.length; i += 2) {
        if (fields[i] === 'k') kind = fields[i + 1]!;
        else if (fields[i] === 'd') payload = fields[i + 1]!;
      }
      if (kind === 'l') {
        for (const d of decodeLinks(payload)) {
          admitted?.(d.url);
          if (f.discover(d, nowMs)) fresh++;
        }
      } else if (kind === 's') {
        for (const s of decodeSeeds(payload)) {
          admitted?.(s.url);
          if (f.seed(s.url, s.host, s.priority, hours, hours, 0)) fresh++;
        }
      }
      this.cursor = id;
      this.applied++;
      this.digest = foldDigest(this.digest, id);
      this.acks.push(id);
    }
    return fresh;
  }

  /**
   * Partition and cursor, taken together (synchronously), with the slot's origins' robots.txt
   * entries and the crawl record's creation time when given. With `unchanged`, null instead when
   * the snapshot would hold exactly what this owner's accepted checkpoint holds (`stateKey`) and
   * that one was written less than `maxAgeMs` before `nowMs`, and no applied entry waits to be
   * acknowledged: nothing to write (the sequence number is not spent).
   */
  snapshot(robots?: readonly RobotsSnapshot[], clock?: ClockOffset, crawlCreated?: number): SlotSnapshot;
  snapshot(robots: readonly RobotsSnapshot[] | undefined, clock: ClockOffset | undefined, crawlCreated: number | undefined, unchanged: { readonly nowMs: number; readonly maxAgeMs: number }): SlotSnapshot | null;
  snapshot(robots?: readonly RobotsSnapshot[], clock?: ClockOffset, crawlCreated?: number, unchanged?: { readonly nowMs: number; readonly maxAgeMs: number }): SlotSnapshot | null {
    const image = this.frontier.checkpoint();
    const urlBudget = this.frontier.admission.urlBudget;
    const h = createHash('sha256');
    hashImage(h, withoutClockReading(image));
    // The clock offset is a measurement, not state — but one missing (the node's first heartbeat
    // failed) is written again once known: the next owner needs it to shift the slot's clocks.
    h.update(JSON.stringify([this.crawl, this.slot, this.epoch, this.cursor, this.applied, this.digest, robots ?? [], crawlCreated ?? null, this.counted, urlBudget, clock !== undefined]));
    const stateKey = h.digest('base64');
    const w = this.written;
    // Entries applied but not yet acknowledged (a settle that failed after the accept) are
    // acknowledged, and the inbox trimmed, only by a checkpoint: one is written.
    if (unchanged !== undefined && w !== undefined && w.stateKey === stateKey && this.acks.length === 0 && unchanged.nowMs - w.atMs < unchanged.maxAgeMs) return null;
    const partition = encodePartition(image);
    const meta: SlotCheckpointMeta = {
      format: 'meguri-slot/1',
      minor: SLOT_FORMAT_MINOR,
      crawl: this.crawl,
      slot: this.slot,
      epoch: this.epoch,
      seq: ++this.seq,
      cursor: this.cursor,
      applied: this.applied,
      digest: this.digest,
      ...(robots !== undefined && robots.length > 0 ? { robots } : {}),
      ...(clock === undefined ? {} : { clockOffsetMs: clock.offsetMs, clockOffsetErrorMs: clock.errorMs }),
      ...(crawlCreated === undefined ? {} : { crawlCreated }),
      counted: { ...this.counted },
      urlBudget,
      // A moving slot dispatches nothing more (its drain is over): the next owner needs no hold.
      ...(this.moving ? { stopped: true as const } : {}),
    };
    const acks = this.acks;
    this.acks = [];
    return { partition, meta, acks, stateKey };
  }

  /** Puts back the ids of a snapshot that was not accepted (they are acknowledged with the next one). */
  unsnapshot(s: SlotSnapshot): void {
    this.acks = s.acks.concat(this.acks);
  }

  /**
   * Sent fetches whose outcome a checkpoint cut now would not hold: still out, or cut by the
   * drain. When the slot then moves on, the next owner fetches each of them again.
   */
  unreported(): number {
    let n = this.sending;
    for (const p of this.parked) if (p.sent) n++;
    return n;
  }

  /** Whether nothing is queued or in flight in the slot. */
  idle(): boolean {
    return this.inFlight === 0 && this.unsent.length === 0 && this.frontier.pending() === 0;
  }

  free(): void {
    this.frontier.free();
  }
}
