/**
 * Checkpoint and restore: the frontier's state to and from a `.meguri` partition image
 * (DESIGN §9.5, §10).
 *
 * A checkpoint writes URL rows in URLKey order (a URL in flight written back as schedulable),
 * hosts in HostKey order with their live politeness windows (host ids in the file are those
 * positions), the compacted arena, and the prioritizer, freshness and scheduler sections.
 * Restore rebuilds every derived structure from that alone — the key index, the row queues,
 * the schedule index, the per-IP windows and the banks — so a recovered frontier makes the
 * same decisions as the one that was checkpointed.
 */
import { CorruptPartitionError, InvalidArgumentError } from '../errors/index.js';
import { type ColumnBlock, type FieldKind, type PartitionImage, FORMAT_MINOR, decodePartition, encodePartition, fieldProblem, shiftHostClocks } from '../format/index.js';
import { UrlStatus } from '../model/index.js';
import { blockImageOf, pendingCanaryDue, restoreBlocks } from './blocks.js';
import { restingPriority } from './intake.js';
import { registerHost, restoreBanks } from './banks.js';
import { keyIndexOfRows } from './deps.js';
import { HostRecord, hostKeyBefore } from './hosts.js';
import { type RunSource, mergeRuns } from './rowruns.js';
import type { SpillMeta } from './spill.js';
import type { FrontierState } from './state.js';
import { ColumnId, FpFlag, UrlTable } from './table.js';

/** Scheduler counters that live outside the URL and host records. */
interface SchedulerState {
  clockMs: number;
  wheelHour: number;
  dispatches: number;
  parkedScores: [string, number][];
}

/** Statuses whose row waits in a host queue. */
export function isQueuedStatus(st: number): boolean {
  return st === UrlStatus.Scheduled || st === UrlStatus.DueRecrawl || st === UrlStatus.RetryWait;
}

/** `Frontier.checkpoint` (see there). */
export function checkpoint(s: FrontierState): PartitionImage {
  // A full image carries the URLs spilled to disk too: they come back for the copy (spill.ts).
  const spill = s.spill;
  if (spill !== undefined && spill.spilled > 0) return spill.withAllResident(() => image(s));
  return image(s);
}

/**
 * `Frontier.checkpointIncremental`: with the disk tier, the resident rows changed since the
 * last checkpoint written as new row runs (rowruns.ts), the tier's files made durable and its
 * manifest committed, then an image with no rows naming that manifest (settings `spill`);
 * without it, `checkpoint`.
 */
export function checkpointIncremental(s: FrontierState): PartitionImage {
  const spill = s.spill;
  if (spill === undefined) return checkpoint(s);
  const plan = spill.runs.plan(s, () => s.index.exportSorted().payloads);
  const meta = spill.commit(plan, (rows) => encodePartition(runImage(s, rows)));
  return image(s, meta, new Uint32Array(0));
}

/** A row run: the rows `order` lists (in key order) as a `.meguri` image without hosts. */
function runImage(s: FrontierState, order: Uint32Array): PartitionImage {
  const blocks = rowBlocks(s, order);
  // Host ids mean nothing outside this process: a run's rows find their hosts by HostKey.
  blocks.columns.find((c) => c.id === ColumnId.Host)!.data.fill(0);
  return {
    meta: { partitionId: s.partitionId, createdHours: s.createdHours, canonPolicyVersion: s.opts.canonPolicyVersion, settings: { rowRun: true } },
    formatMinor: FORMAT_MINOR,
    rows: order.length,
    columns: blocks.columns,
    hosts: [],
    arena: blocks.arena,
    seenFilter: new Uint8Array(0),
    prioritizer: new Uint8Array(0),
    freshness: new Uint8Array(0),
    scheduler: new Uint8Array(0),
  };
}

/**
 * The file columns of the rows `order` lists (a URL in flight written back as schedulable),
 * the prioritizer's row columns after them, and the compacted arena; host ids as in memory.
 */
function rowBlocks(s: FrontierState, order: Uint32Array): { columns: ColumnBlock[]; arena: Uint8Array } {
  const { columns, arena } = s.table.exportRows(order);
  const status = columns.find((c) => c.id === ColumnId.Status)!.data;
  const crawls = columns.find((c) => c.id === ColumnId.CrawlCount)!.data;
  const nextDue = columns.find((c) => c.id === ColumnId.NextDue)!.data;
  const priority = columns.find((c) => c.id === ColumnId.Priority)!.data;
  for (let i = 0; i < status.length; i++) {
    // A host's canary (blocks.ts), asked or in flight, is the page at rest it was: restored as a
    // recrawl, a block still up would end it gone. Its due hour and priority as they were.
    const due = status[i] === UrlStatus.DueRecrawl || status[i] === UrlStatus.InFlight ? pendingCanaryDue(s, order[i]!) : undefined;
    if (due !== undefined) {
      status[i] = UrlStatus.Crawled;
      nextDue[i] = due;
      priority[i] = restingPriority(s, order[i]!);
    } else if (status[i] === UrlStatus.InFlight) status[i] = crawls[i] === 0 ? UrlStatus.Scheduled : UrlStatus.DueRecrawl;
  }
  const blocks: ColumnBlock[] = [...columns];
  if (s.prio) {
    const { cash, history, rank } = s.prio.rowColumns();
    const permute = (src: Float32Array): Float32Array => {
      const out = new Float32Array(order.length);
      // As bits: a NaN's payload is kept.
      const o32 = new Uint32Array(out.buffer);
      const s32 = new Uint32Array(src.buffer, src.byteOffset, src.length);
      for (let i = 0; i < order.length; i++) o32[i] = s32[order[i]!]!;
      return out;
    };
    blocks.push({ id: ColumnId.Cash, type: 'f32', lanes: 1, data: permute(cash) });
    blocks.push({ id: ColumnId.History, type: 'f32', lanes: 1, data: permute(history) });
    blocks.push({ id: ColumnId.Rank, type: 'f32', lanes: 1, data: permute(rank) });
  }
  return { columns: blocks, arena };
}

function image(s: FrontierState, spill?: SpillMeta, rows?: Uint32Array): PartitionImage {
  // The resident rows only: spilled URLs' keys are not in the row index (an incremental
  // image's manifest has them; a full one loaded them back first). An incremental image
  // passes no rows: they are in its row runs.
  const order = rows ?? s.index.exportSorted().payloads;
  const { columns: blocks, arena } = rowBlocks(s, order);
  const hosts = s.hosts;
  const hostOrder = hosts.map((h) => h.id).sort((a, b) => (hostKeyBefore(hosts[a]!, hosts[b]!) ? -1 : 1));
  const prioritizer: Uint8Array = s.prio ? s.prio.encodeHosts(hostOrder) : new Uint8Array(0);
  // Host ids in the file are positions in HostKey order; remap the host column.
  const hostRemap = new Uint32Array(hosts.length);
  hostOrder.forEach((id, pos) => {
    hostRemap[id] = pos;
  });
  const hostCol = blocks.find((c) => c.id === ColumnId.Host)!.data;
  for (let i = 0; i < hostCol.length; i++) hostCol[i] = hostRemap[hostCol[i]!]!;
  const fresh = s.opts.freshness;
  const freshness =
    fresh !== undefined && typeof fresh === 'object' && fresh.exportState ? fresh.exportState(Uint32Array.from(hostOrder)) : new Uint8Array(0);
  const sched: SchedulerState = {
    clockMs: s.clockMs,
    wheelHour: s.wheelHour,
    dispatches: s.dispatches,
    parkedScores: s.dir.parkedScores(),
  };
  return {
    meta: {
      partitionId: s.partitionId,
      createdHours: s.createdHours,
      canonPolicyVersion: s.opts.canonPolicyVersion,
      settings: { grouping: s.opts.grouping, scheduleIndex: s.opts.scheduleIndex, prioritizer: s.prio !== undefined, ...(spill === undefined ? {} : { spill }) },
    },
    formatMinor: FORMAT_MINOR,
    rows: order.length,
    columns: blocks,
    hosts: hostOrder.map((id) => {
      const img = hosts[id]!.toImage();
      const block = blockImageOf(s, hosts[id]!);
      return block === undefined ? img : { ...img, block };
    }),
    arena,
    seenFilter: s.opts.seenFilter?.serialize() ?? new Uint8Array(0),
    prioritizer,
    freshness,
    scheduler: encodeScheduler(sched),
    // Addresses' own windows and intervals; no section at all when no host has an address,
    // so such a partition is byte for byte what a minor-0 writer made.
    ips: hosts.some((h) => h.ip !== '') ? s.ips.export() : undefined,
  };
}

/** Loads `image` into the empty state `s` (see `Frontier.recover`). */
export function restore(s: FrontierState, image: PartitionImage): void {
  const sched = parseScheduler(image.scheduler);
  s.clockMs = sched.clockMs;
  s.wheelHour = Math.max(sched.wheelHour, s.createdHours);
  s.dispatches = sched.dispatches;
  for (const [name, score] of sched.parkedScores) s.dir.parkScore(name, score);
  const spill = image.meta.settings['spill'] as SpillMeta | undefined;
  if (spill !== undefined && s.spill === undefined) {
    throw new InvalidArgumentError(`Frontier.recover: this checkpoint keeps ${String(spill.spilled)} URLs in its disk tier (${String(spill.dir)}): recover it with memoryBudget and storeDir`);
  }
  // Hosts first: the rows of a disk tier's row runs find their hosts by HostKey.
  const hostCount = image.hosts.length;
  const wasActive: boolean[] = [];
  image.hosts.forEach((img, id) => {
    if (s.dir.id(img.name) !== undefined) throw new CorruptPartitionError('hosts', `host ${JSON.stringify(img.name)} appears twice`);
    const { host, wasActive: act } = HostRecord.fromImage(id, img, s.hostTimes);
    s.dir.add(host);
    registerHost(s, host);
    wasActive.push(act);
  });
  let { rows, columns, arena } = image;
  let runOf: Uint32Array | undefined;
  if (spill !== undefined) {
    // The tier's manifest: spilled keys and extents, and the row runs holding the resident rows.
    s.spill!.resume(spill, s.opts.diskReadOnly);
    const merged = resumeRuns(s, image);
    if (merged !== undefined) ({ rows, columns, arena, runOf } = merged);
  }
  const t = UrlTable.fromColumns(rows, columns, arena, s.opts.freshness !== undefined);
  if (s.opts.freshness !== undefined) fillFreshnessColumns(t, columns);
  // Swap the validated table's columns into this frontier's table object.
  Object.assign(s.table, t);
  const tk = s.table.key;
  for (let r = 0; r < rows; r++) {
    const hid = s.table.host[r]!;
    const h = s.hosts[hid];
    if (h === undefined) throw new CorruptPartitionError('urls', `row ${r} names host ${hid}, only ${hostCount} hosts`);
    if (tk[r * 4] !== h.hostKeyLo || tk[r * 4 + 1] !== h.hostKeyHi) {
      throw new CorruptPartitionError('urls', `row ${r} key's HostKey does not match host ${JSON.stringify(h.name)}`);
    }
    if (s.table.status[r] === UrlStatus.InFlight) {
      s.table.status[r] = s.table.crawlCount[s.table.slot[r]!] === 0 ? UrlStatus.Scheduled : UrlStatus.DueRecrawl;
    } else if (s.table.status[r] === UrlStatus.Trapped && h.depthCap > 0 && s.table.depth[r]! > h.depthCap) {
      s.depthParked = true;
    }
    const sl = s.table.slot[r]!;
    if (sl !== 0 && (s.table.fpFlags[sl]! & FpFlag.Relink) !== 0) s.relinkPending = true;
  }
  s.depthVersion++;
  // The file's arena is plain: URLs take their shared origins again (≈ 22 bytes per URL less).
  s.table.shareOrigins();
  s.index.free();
  s.spill?.resetRows();
  s.index = keyIndexOfRows(s.table, rows, s.spill?.keys);
  s.queues.ensureRows(rows);
  if (s.prio) {
    const col = (id: number): Float32Array => {
      const c = columns.find((x) => x.id === id);
      if (c === undefined) return new Float32Array(rows);
      if (c.type !== 'f32' || c.lanes !== 1) throw new CorruptPartitionError('urls', `prioritizer column ${id} is ${c.type}×${c.lanes}, expected f32×1`);
      return c.data as Float32Array;
    };
    s.prio.restoreRows(rows, col(ColumnId.Cash), col(ColumnId.History), col(ColumnId.Rank));
    s.prio.restoreHosts(image.prioritizer, hostCount);
  }
  const fresh = s.opts.freshness;
  if (fresh !== undefined && typeof fresh === 'object' && fresh.importState && image.freshness.length > 0) {
    fresh.importState(image.freshness);
  }
  // Each row's run and digest as read, before the queues re-time any row (a row changed by
  // the restore itself is written again at the next checkpoint).
  if (s.spill !== undefined) s.spill.runs.adopt(s, s.spill.resumedRuns, runOf ?? new Uint32Array(rows));
  loadQueues(s, rows);
  // A host whose whole queue was on disk at the checkpoint gets its best extent back.
  if (s.spill !== undefined) for (const h of s.hosts) if (s.queues.size(h.id) === 0) s.spill.topUp(h.id);
  if (image.ips !== undefined) {
    s.ips.import(image.ips);
  } else {
    // A partition from before addresses had state of their own (minor 0): each address is
    // held as that writer's rule held it, from its hosts' last spends — never earlier.
    for (const h of s.hosts) {
      if (h.ip !== '' && h.ipSpendMs >= 0) s.ips.holdUntil(h.ip, h.ipSpendMs + Math.max(s.politeness.ipFloorMs, h.ipSpendIntervalMs));
    }
  }
  restoreBanks(s, wasActive);
  // Last: a pending canary is queued again, as it was asked live.
  restoreBlocks(s, image.hosts);
}

/**
 * The resident rows of a checkpoint with row runs: the runs its manifest names merged (newest
 * record of each key; keys now spilled skipped), with the image's own rows, if any, newest (a
 * checkpoint from before row runs carries them there). Undefined when there are no runs.
 */
function resumeRuns(s: FrontierState, image: PartitionImage): { rows: number; columns: ColumnBlock[]; arena: Uint8Array; runOf: Uint32Array } | undefined {
  const spill = s.spill!;
  if (spill.resumedRuns.length === 0) return undefined;
  const sources: RunSource[] = spill.readRuns((bytes) => {
    const run = decodePartition(bytes);
    if (run.meta.settings['rowRun'] !== true) throw new CorruptPartitionError('meta', 'not a row run');
    return run;
  }).map((run, i) => ({ id: spill.resumedRuns[i]!.id, rows: run.rows, columns: run.columns, arena: run.arena }));
  sources.forEach((src, i) => {
    if (src.rows !== spill.resumedRuns[i]!.rows) throw new CorruptPartitionError('spill', `row run ${src.id} holds ${src.rows} rows, its manifest says ${spill.resumedRuns[i]!.rows}`);
  });
  if (image.rows > 0) sources.push({ id: 0, rows: image.rows, columns: image.columns, arena: image.arena });
  const byKey = new Map<string, number>();
  for (const h of s.hosts) byKey.set(`${h.hostKeyLo}:${h.hostKeyHi}`, h.id);
  // The image's own rows name hosts by position; a run's by HostKey (both resolve the same).
  return mergeRuns(sources, (k, i) => spill.keys.hasKey(k, i), (lo, hi) => byKey.get(`${lo}:${hi}`) ?? -1);
}

/** Schedule index and queues from the restored rows (in key order, so each host's rows are contiguous). */
function loadQueues(s: FrontierState, rows: number): void {
  const status = s.table.status;
  const nextDue = s.table.nextDue;
  const deferIds: number[] = [];
  const deferTicks: number[] = [];
  // Gather a host's queued rows and load its heap in one pass.
  const batch = new Uint32Array(rows);
  let batchHost = -1;
  let batchLen = 0;
  const hostOf = s.table.host;
  for (let r = 0; r < rows; r++) {
    const st = status[r]!;
    let queue = false;
    if (s.wheel && (st === UrlStatus.Crawled || st === UrlStatus.Scheduled) && nextDue[r]! > s.wheelHour) {
      deferIds.push(r);
      deferTicks.push(nextDue[r]!);
    } else if (s.wheel && st === UrlStatus.Crawled) {
      status[r] = UrlStatus.DueRecrawl;
      queue = true;
    } else if (isQueuedStatus(st)) {
      queue = true;
    }
    if (!queue) continue;
    const h = hostOf[r]!;
    if (h !== batchHost) {
      if (batchLen > 0) s.queues.pushAll(batchHost, batch, batchLen);
      batchHost = h;
      batchLen = 0;
    }
    batch[batchLen++] = r;
  }
  if (batchLen > 0) s.queues.pushAll(batchHost, batch, batchLen);
  if (s.wheel && deferIds.length > 0) {
    s.wheel.advance(s.wheelHour);
    s.wheel.scheduleBatch(Uint32Array.from(deferIds), Uint32Array.from(deferTicks));
  }
}

/**
 * A partition written without the freshness columns (freshness was off, or an older writer)
 * gets defaults: the first fetch is dated at the first-seen hour (or the only fetch), and a
 * URL already fetched has no trusted Last-Modified history (its exposure was never measured).
 */
function fillFreshnessColumns(t: UrlTable, columns: readonly ColumnBlock[]): void {
  const has = (id: number): boolean => columns.some((c) => c.id === id);
  // Fetch state is by slot; a row without one was never fetched, and its defaults are zeros.
  if (!has(ColumnId.FirstCrawled)) {
    for (let r = 0; r < t.rows; r++) {
      const sl = t.slot[r]!;
      if (sl === 0) continue;
      const n = t.crawlCount[sl]!;
      t.firstCrawled[sl] = n === 0 ? 0 : n === 1 ? t.lastCrawled[sl]! : Math.min(t.firstSeen[r]!, t.lastCrawled[sl]!);
    }
  }
  if (!has(ColumnId.LmHours)) {
    for (let r = 0; r < t.rows; r++) {
      const sl = t.slot[r]!;
      if (sl !== 0) t.lmHours[sl] = t.crawlCount[sl] === 0 ? 0 : -1;
    }
  }
  // Before minor 6 no first-fetch age was kept: the column stays zero ("none"), and such a URL's
  // Last-Modified estimate counts only the changes seen after its first fetch, as before.
  // Before minor 4 the estimator kept only counts and the span: its interval statistics are
  // unknown (NaN) for a URL already fetched, and the hook rebuilds them from the counts at the
  // URL's next fetch (src/freshness `seedIntervals`).
  if (!has(ColumnId.UnchangedHours) || !has(ColumnId.ChangedLogHours)) {
    for (let r = 0; r < t.rows; r++) {
      const sl = t.slot[r]!;
      if (sl === 0) continue;
      const unknown = t.crawlCount[sl]! > 1 ? Number.NaN : 0;
      t.unchangedHours[sl] = unknown;
      t.changedLogHours[sl] = unknown;
    }
  }
}

/**
 * A partition image with every clock reading a frontier keeps moved by `deltaMs`: the host and
 * address windows (`shiftHostClocks`) and the scheduler's clock. For a partition written on
 * another machine's clock (a cluster slot moving between nodes whose clocks differ by Δ); the
 * URL rows (whole hours) and the freshness state (hours) stay. Returns a new image.
 */
export function shiftPartitionClock(image: PartitionImage, deltaMs: number): PartitionImage {
  if (deltaMs === 0) return image;
  const shifted = shiftHostClocks(image, deltaMs);
  if (image.scheduler.length === 0) return shifted;
  const sched = parseScheduler(image.scheduler);
  // The scheduler's clock readings are its `time` fields, as the loader checks them.
  for (const [field, kind] of SCHEDULER_NUMBERS) if (kind === 'time' && sched[field] > 0) sched[field] += deltaMs;
  return { ...shifted, scheduler: encodeScheduler(sched) };
}

/**
 * `image` with its scheduler's clock reading set to 0. Two checkpoints of a frontier nothing
 * happened to differ only there — every `next()` call advances the clock, dispatching or not —
 * so what a checkpoint holds is compared on this form (a cluster's idle slots skip a checkpoint
 * that would hold what the last one does: src/cluster/slot.ts). An older reading loses nothing:
 * the clock only ever moves forward from it.
 */
export function withoutClockReading(image: PartitionImage): PartitionImage {
  if (image.scheduler.length === 0) return image;
  return { ...image, scheduler: encodeScheduler({ ...parseScheduler(image.scheduler), clockMs: 0 }) };
}

/** The scheduler section's bytes (UTF-8 JSON; `parseScheduler` reads them back). */
function encodeScheduler(sched: SchedulerState): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(sched));
}

/** How each scheduler counter is checked on load (kinds: src/format `fieldProblem`). */
const SCHEDULER_NUMBERS: readonly (readonly [keyof Omit<SchedulerState, 'parkedScores'>, FieldKind])[] = [
  ['clockMs', 'time'],
  ['wheelHour', 'count'],
  ['dispatches', 'count'],
];

function parseScheduler(blob: Uint8Array): SchedulerState {
  if (blob.length === 0) return { clockMs: 0, wheelHour: 0, dispatches: 0, parkedScores: [] };
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(blob));
  } catch {
    throw new CorruptPartitionError('scheduler', 'state is not valid UTF-8 JSON');
  }
  const o = v as Record<string, unknown> | null;
  if (o === null || typeof o !== 'object') throw new CorruptPartitionError('scheduler', 'state is not a JSON object');
  for (const [field, kind] of SCHEDULER_NUMBERS) {
    const problem = fieldProblem(o[field], kind);
    if (problem !== undefined) throw new CorruptPartitionError('scheduler', `field ${field} ${problem}`);
  }
  const parked = o['parkedScores'];
  if (!Array.isArray(parked)) throw new CorruptPartitionError('scheduler', 'field parkedScores is not an array');
  parked.forEach((p: unknown, i) => {
    if (!Array.isArray(p) || typeof p[0] !== 'string' || fieldProblem(p[1], 'real') !== undefined) {
      throw new CorruptPartitionError('scheduler', `field parkedScores[${i}] is not a [host, finite score] pair`);
    }
  });
  return o as unknown as SchedulerState;
}
