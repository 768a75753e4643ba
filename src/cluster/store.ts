/**
 * The checkpoint store seam: a directory (local disk, or a network file system every node
 * mounts) holding each slot's checkpoints as `<crawl>/slot-<s>/e<epoch>-<seq>/`, one directory
 * per write with the slot's `.meguri` partition (readable by `meguri inspect`) and
 * `cluster.json` (the inbox cursor the state applied through, the applied count and digest,
 * and — format minor 1 — the robots.txt entries of the slot's origins).
 *
 * A write goes to a temporary directory, is fsynced and renamed into place, so a reader sees a
 * whole checkpoint or none. Writing is not accepting: only the slot record's `ckpt` pointer,
 * set by the fenced `ACCEPT` script, says which checkpoint is the slot's state; a stale
 * writer's directory is never pointed at and is pruned later.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isDiskFull } from '../disk/io.js';
import { CorruptPartitionError, DiskFullError } from '../errors/index.js';
import { type RobotsSnapshot, robotsSnapshotProblem } from '../fetch/robots-cache.js';
import { CheckpointStoreError } from './errors.js';
import type { Redis } from 'ioredis';
import type { ClusterKeys } from './keys.js';
import { type CrawlSettings, checkCrawlSettings, joinCrawlRecord } from './settings.js';

/**
 * The format minor this build writes. Minor 1 added `robots`, minor 2 `crawlCreated`, minor 3
 * `counted`, minor 4 `urlBudget`, minor 5 `stopped`; a minor is additive: a build
 * reads every minor of its major (a checkpoint without `minor` is minor 0, and carries no
 * robots.txt entries: the next owner asks its origins again), and an older build reading a
 * newer minor ignores the fields it does not know — nodes of both builds share a crawl.
 */
export const SLOT_FORMAT_MINOR = 5;

/** What travels with a slot's partition. */
export interface SlotCheckpointMeta {
  readonly format: 'meguri-slot/1';
  /** Format minor (absent: 0, written before robots.txt entries travelled with a slot). */
  readonly minor?: number;
  readonly crawl: string;
  readonly slot: number;
  readonly epoch: number;
  readonly seq: number;
  /** The last inbox entry id applied to this state ('0-0' = none). */
  readonly cursor: string;
  /** Inbox entries applied to this state over its life. */
  readonly applied: number;
  /** Order-sensitive digest of the applied entry ids (`foldDigest`). */
  readonly digest: number;
  /**
   * The robots.txt entries of the slot's origins at the snapshot (minor ≥ 1): fresh rules and
   * 4xx answers with their expiry, unreachable ones with retry time, failures in a row and
   * Retry-After hold — the single-process checkpoint's `RobotsSnapshot`s. The next owner takes
   * them instead of asking again; an answer heard after the snapshot is not in them (asked again).
   */
  readonly robots?: readonly RobotsSnapshot[];
  /**
   * The writer's clock against Redis's when it took the snapshot (`Heartbeat.clockOffset`:
   * Redis's minus the writer's, ms, and the reading's error bound); absent when unmeasured or
   * written by an older build. The next owner moves the checkpoint's clock readings onto its
   * own clock by the difference (`clockShiftMs`).
   */
  readonly clockOffsetMs?: number;
  readonly clockOffsetErrorMs?: number;
  /**
   * The crawl record's creation time (ms, Redis's clock; `readCrawlCreated`) the checkpoint was
   * written under (minor ≥ 2). A record whose time differs was created again since — Redis lost
   * its data — and the checkpoint is from before: a slot whose record names no checkpoint is
   * restored from it (`ClusterNode`). One with the record's own time and not accepted is a write
   * that crashed before its acceptance, and is never opened.
   */
  readonly crawlCreated?: number;
  /**
   * Completions the slot's owners reported over the crawl's life up to this checkpoint (minor ≥
   * 3): `pages` fetched OK and `requests` of any outcome — what the crawl-wide budgets count
   * (budget.ts). A slot restored after Redis lost its data adds them back to the budgets, which
   * lived in Redis only. Absent: 0 (an older build's checkpoint).
   */
  readonly counted?: { readonly pages: number; readonly requests: number };
  /**
   * The URL budget per host (`maxUrlsPerHost`, 0 = unlimited) the slot's hosts were admitted
   * under (minor ≥ 4; `Frontier.admission`). A slot opened under a crawl record whose budget
   * differs — `meguri cluster limit --max-urls-per-host` while no node held the slot — applies
   * the record's to its hosts (`setAdmission`). Absent (an older build's checkpoint): kept as is.
   */
  readonly urlBudget?: number;
  /**
   * Written after its owner stopped dispatching the slot — a hand-off or a leave, past the drain
   * (minor ≥ 5): every start the slot made is in it. Absent (a periodic checkpoint, the one a
   * killed node leaves behind, or an older build's), the next owner holds every host of the slot
   * one interval from the moment it opens it (`Frontier.holdEveryHost`): fetches made after the
   * checkpoint are not in it.
   */
  readonly stopped?: true;
}

export const PARTITION_FILE = 'partition.meguri';
export const META_FILE = 'cluster.json';
/**
 * The crawl's settings, beside its slots (`<crawl>/crawl.json`): the copy Redis's crawl record
 * is rebuilt from when Redis lost its data, so the slots keep their count and grouping.
 */
export const CRAWL_FILE = 'crawl.json';

/** A checkpoint directory's name: `e<epoch>-<seq>`, both zero-padded to 9 digits (names sort as numbers). */
const CHECKPOINT_NAME = /^e(\d{9})-(\d{9})$/;

/**
 * Writes and fsyncs a file through the thread pool. A node checkpoints many slots at once (a
 * round, a node leaving, ⌊S/N⌋ slots handed to a joiner); synchronous fsyncs would hold its event
 * loop — and every other slot's fetches — for as long as the disk takes, four times per slot.
 */
async function writeDurably(path: string, data: Uint8Array | string): Promise<void> {
  const fh = await open(path, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * How the store writes one file: given the path, the bytes and the real durable write
 * (`writeDurably`), which it calls — or fails as a full device would (tests).
 */
export type StoreFileWriter = (path: string, data: Uint8Array | string, write: (path: string, data: Uint8Array | string) => Promise<void>) => Promise<void>;

const realWriter: StoreFileWriter = (path, data, write) => write(path, data);
let fileWriter: StoreFileWriter = realWriter;

/**
 * Internal test seam, as src/disk's `setDiskIo`: the writer every store in the process writes
 * its files through (`undefined` restores the real one), so a test can fail a checkpoint write
 * with ENOSPC at a chosen file. Not exported from the package.
 */
export function setStoreFileWriter(writer: StoreFileWriter | undefined): void {
  fileWriter = writer ?? realWriter;
}

async function fsyncDir(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * What a failed store operation means for the node (`ClusterNode`'s `isFatal` reads the class):
 * a full device or quota is `DiskFullError` naming `path` — the node's run ends with it, as a full
 * disk ends a single-process crawl, instead of retrying a write that cannot succeed while the
 * slots' inboxes grow in Redis; any other file-system error is `CheckpointStoreError` (retried: a
 * network store's hiccup may pass). Our own errors pass through.
 */
function storeFailure(op: 'read' | 'write', path: string, err: unknown): Error {
  if (err instanceof CorruptPartitionError || err instanceof DiskFullError || err instanceof CheckpointStoreError) return err;
  if (isDiskFull(err)) return new DiskFullError(path, `the checkpoint store's device or quota is full (${op})`, { cause: err });
  return new CheckpointStoreError(op, path, err);
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

/** A crawl's checkpoints under `root`. */
export class CheckpointStore {
  readonly dir: string;
  constructor(root: string, readonly crawl: string) {
    this.dir = join(root, crawl);
  }

  /** The slot's directory, relative to the crawl's. */
  slotDir(slot: number): string {
    return `slot-${pad(slot, 5)}`;
  }

  /**
   * Writes one checkpoint; returns its path relative to the crawl's directory (what the slot
   * record stores). A failed write removes its temporary directory (on a full device the partial
   * files would only hold more of the space the next attempt needs).
   * @throws DiskFullError when the device or quota is full (ENOSPC, EDQUOT), naming the file.
   * @throws CheckpointStoreError on any other file-system error.
   */
  async write(meta: SlotCheckpointMeta, partition: Uint8Array): Promise<string> {
    const slotPath = join(this.dir, this.slotDir(meta.slot));
    const name = `e${pad(meta.epoch, 9)}-${pad(meta.seq, 9)}`;
    const tmp = join(slotPath, `.tmp-${name}-${randomBytes(4).toString('hex')}`);
    let at = slotPath;
    try {
      await mkdir(slotPath, { recursive: true });
      await mkdir(tmp);
      const files: [string, Uint8Array | string][] = [
        [join(tmp, PARTITION_FILE), partition],
        [join(tmp, META_FILE), `${JSON.stringify(meta)}\n`],
      ];
      // Both settled before the temporary directory can be removed: no write lands after it.
      const results = await Promise.allSettled(files.map(([path, data]) => fileWriter(path, data, writeDurably)));
      const failed = results.findIndex((r) => r.status === 'rejected');
      if (failed >= 0) {
        at = files[failed]![0];
        throw (results[failed] as PromiseRejectedResult).reason;
      }
      at = tmp;
      await fsyncDir(tmp);
      at = join(slotPath, name);
      await rm(at, { recursive: true, force: true });
      await rename(tmp, at);
      at = slotPath;
      await fsyncDir(slotPath);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true }).catch(() => {});
      throw storeFailure('write', at, err);
    }
    return `${this.slotDir(meta.slot)}/${name}`;
  }

  /**
   * Reads an accepted checkpoint.
   * @throws CorruptPartitionError when its `cluster.json` is not JSON, of another format or crawl,
   *   or carries a malformed robots.txt entry (the partition's own checks run when it is opened).
   * @throws CheckpointStoreError when a file cannot be read (missing, a network store's error).
   */
  async read(rel: string): Promise<{ meta: SlotCheckpointMeta; partition: Uint8Array }> {
    const at = join(this.dir, rel);
    const metaPath = join(at, META_FILE);
    const text = await readFile(metaPath, 'utf8').catch((err: unknown) => {
      throw storeFailure('read', metaPath, err);
    });
    const damaged = (what: string): CorruptPartitionError => new CorruptPartitionError(`slot checkpoint ${metaPath}`, what);
    let meta: SlotCheckpointMeta;
    try {
      meta = JSON.parse(text) as SlotCheckpointMeta;
    } catch (err) {
      throw damaged(`not JSON (${(err as Error).message})`);
    }
    if (typeof meta !== 'object' || meta === null || meta.format !== 'meguri-slot/1' || meta.crawl !== this.crawl) {
      throw damaged(`expected format meguri-slot/1 of crawl ${this.crawl}, found ${String(meta?.format)} of ${String(meta?.crawl)}`);
    }
    const robots: unknown = meta.robots;
    if (robots !== undefined) {
      // Checked field by field before an entry can hold a host back or let a URL through.
      if (!Array.isArray(robots)) throw damaged('robots is not an array');
      robots.forEach((r: unknown, i) => {
        const problem = robotsSnapshotProblem(r);
        if (problem !== undefined) throw damaged(`robots[${i}] ${problem}`);
      });
    }
    const counted: unknown = meta.counted;
    if (counted !== undefined) {
      const c = counted as Record<string, unknown>;
      const count = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
      if (typeof c !== 'object' || c === null || !count(c['pages']) || !count(c['requests'])) throw damaged('counted is not { pages, requests } as counts');
    }
    const budget: unknown = meta.urlBudget;
    if (budget !== undefined && !(Number.isSafeInteger(budget) && (budget as number) >= 0)) throw damaged('urlBudget is not a count');
    if (meta.stopped !== undefined && meta.stopped !== true) throw damaged('stopped is not true');
    const partPath = join(at, PARTITION_FILE);
    const partition = await readFile(partPath).catch((err: unknown) => {
      throw storeFailure('read', partPath, err);
    });
    return { meta, partition: new Uint8Array(partition) };
  }

  /**
   * The slot's checkpoint directories in the store, newest first (paths relative to the crawl's
   * directory, as a slot record names them) — accepted or not: after Redis lost its records the
   * store is all there is. Temporaries and foreign names are left out.
   */
  async checkpoints(slot: number): Promise<{ rel: string; epoch: number }[]> {
    const names = await readdir(join(this.dir, this.slotDir(slot))).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [] as string[];
      throw storeFailure('read', join(this.dir, this.slotDir(slot)), err);
    });
    return names
      .filter((n) => CHECKPOINT_NAME.test(n))
      .sort()
      .reverse()
      .map((n) => ({ rel: `${this.slotDir(slot)}/${n}`, epoch: Number(CHECKPOINT_NAME.exec(n)![1]) }));
  }

  /**
   * The crawl's settings as the store keeps them (`CRAWL_FILE`), or undefined when it has none.
   * @throws CorruptPartitionError when the file is not the crawl's settings.
   * @throws CheckpointStoreError when it cannot be read.
   */
  async readCrawlFile(): Promise<CrawlSettings | undefined> {
    const v = await this.readRecordFile(CRAWL_FILE, 'meguri-crawl/1');
    if (v === undefined) return undefined;
    const damaged = (what: string): CorruptPartitionError => new CorruptPartitionError(`crawl record ${join(this.dir, CRAWL_FILE)}`, what);
    if (typeof v['settings'] !== 'object' || v['settings'] === null) throw damaged('has no settings');
    try {
      checkCrawlSettings(v['settings'] as Partial<CrawlSettings>);
    } catch (err) {
      throw damaged((err as Error).message);
    }
    return v['settings'] as CrawlSettings;
  }

  /**
   * Keeps the crawl's settings in the store: written when a node finds none there, so a crawl
   * created by an older build gets one too.
   * @throws DiskFullError, CheckpointStoreError as `write`.
   */
  async writeCrawlFile(settings: CrawlSettings): Promise<void> {
    await this.writeRecordFile(CRAWL_FILE, 'meguri-crawl/1', { settings });
  }

  /**
   * A small JSON record of the crawl's directory (`<crawl>/<name>`, `{ format, crawl, …body }`),
   * or undefined when there is none: what the store keeps of the crawl besides its slots.
   * @throws CorruptPartitionError when it is not JSON, or of another format or crawl.
   * @throws CheckpointStoreError when it cannot be read.
   */
  async readRecordFile(name: string, format: string): Promise<Record<string, unknown> | undefined> {
    const path = join(this.dir, name);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw storeFailure('read', path, err);
    }
    const damaged = (what: string): CorruptPartitionError => new CorruptPartitionError(`crawl record ${path}`, what);
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw damaged(`not JSON (${(err as Error).message})`);
    }
    if (typeof v !== 'object' || v === null || v['format'] !== format || v['crawl'] !== this.crawl) {
      throw damaged(`expected format ${format} of crawl ${this.crawl}, found ${String(v?.['format'])} of ${String(v?.['crawl'])}`);
    }
    return v;
  }

  /**
   * Writes `readRecordFile`'s record durably (temporary file, fsync, rename, directory fsync).
   * @throws DiskFullError, CheckpointStoreError as `write`.
   */
  async writeRecordFile(name: string, format: string, body: Record<string, unknown>): Promise<void> {
    const path = join(this.dir, name);
    const tmp = join(this.dir, `.tmp-${name}-${randomBytes(4).toString('hex')}`);
    let at = tmp;
    try {
      await mkdir(this.dir, { recursive: true });
      await fileWriter(tmp, `${JSON.stringify({ format, crawl: this.crawl, ...body })}\n`, writeDurably);
      at = path;
      await rename(tmp, path);
      at = this.dir;
      await fsyncDir(this.dir);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => {});
      throw storeFailure('write', at, err);
    }
  }

  /** Removes a slot's checkpoints older than `keep` (same or lower epoch and seq) and stale temporaries. */
  async prune(slot: number, keep: string): Promise<void> {
    const slotPath = join(this.dir, this.slotDir(slot));
    const keepName = keep.slice(keep.lastIndexOf('/') + 1);
    for (const name of await readdir(slotPath).catch(() => [] as string[])) {
      const old = name.startsWith('e') && name < keepName;
      const tmp = name.startsWith('.tmp-') && name.slice(5, 5 + keepName.length) < keepName;
      if (old || tmp) await rm(join(slotPath, name), { recursive: true, force: true });
    }
  }
}

/**
 * Joins the crawl with its settings kept in Redis and in the store alike: the store's copy is
 * what a lost Redis record is rebuilt from (`restored`: say so), and a store without one gets
 * it from the record (a crawl an older build created, or a new one). Used by `ClusterNode` and
 * the URLFrontier cluster.
 * @throws CrawlSettingsMismatchError, InvalidStateError as `joinCrawlRecord`; the store's errors as `readCrawlFile`.
 */
export async function joinStoredCrawl(
  redis: Redis,
  keys: ClusterKeys,
  store: CheckpointStore,
  given: Partial<CrawlSettings>,
): Promise<{ readonly settings: CrawlSettings; readonly createdAt: number; readonly restored: string | undefined }> {
  const stored = await store.readCrawlFile();
  const file = join(store.dir, CRAWL_FILE);
  const joined = await joinCrawlRecord(redis, keys, given, stored, file);
  if (stored === undefined) await store.writeCrawlFile(joined.settings);
  return { settings: joined.settings, createdAt: joined.createdAt, restored: stored !== undefined && joined.created ? file : undefined };
}
