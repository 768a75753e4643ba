/**
 * `LocalNode`: one frontier node — the store, its durability and its clock — behind the
 * operations the gRPC service needs, each answering only once its change is committed.
 *
 * This is the seam a cluster plugs into: the service (service.ts) speaks only to the
 * `FrontierNode` interface. A cluster node implements it over a LocalNode for the slots it
 * owns: a slot is a hash of (crawl, queue key), so a queue — with its delay, block, limit and
 * leases — lives whole on one node. `put` splits a batch by owner, applies the local part,
 * forwards the rest to the owners (their PutDiscovered / PutURLs with `local`) and calls
 * `done` once every owner acked, keeping the item order of the statuses; `control` goes to
 * the key's owner, or to every node for SetActive, DeleteCrawl and an empty-key SetDelay;
 * `getUrls` serves local slots only; `stats`, `listQueues`, `scanUrls`, `crawls` fan out with
 * `local` set and reject (→ the service answers INTERNAL/UNAVAILABLE) rather than under-count
 * when a node does not answer; `nodes` lists live members. Reads are promises for that reason.
 */
import type { LogLevel } from './service.js';
import type { Committer, CommitCallback } from './persist.js';
import {
  type AckStatus,
  type ControlOp,
  type Metadata,
  type Served,
  type ServeRequest,
  type StoreStats,
  type UrlFilter,
  type UrlFrontierStore,
  type UrlView,
  crawlName,
} from './store.js';

/** One item of PutURLs or PutDiscovered, decoded. */
export interface PutItem {
  readonly known: boolean;
  readonly url: string;
  readonly key: string;
  readonly crawl: string;
  readonly meta: Metadata | undefined;
  /** Known items: epoch seconds, 0 = never refetch. */
  readonly refetchSec: number;
}

/**
 * The operations of a frontier node, as the service uses them. Reads return promises so a
 * cluster node can answer them by fanning out; the hot write path takes a callback (no
 * promise per stream batch).
 */
export interface FrontierNode {
  /** Applies items in order; `done` gets one status per item once they are durable. */
  put(items: readonly PutItem[], done: (statuses: AckStatus[]) => void): void;
  getUrls(req: ServeRequest): Promise<Served[]>;
  /** Applies a control call; `done` gets the URLs removed (deletes, purges) once durable. */
  control(op: ControlOp, done: (err: Error | undefined, removed: number) => void): void;
  hasQueue(crawl: string, key: string): Promise<boolean>;
  /**
   * The reads below take the schema's `local`: with it a cluster node answers from its own slots
   * only (a monitor asking each node adds the answers); without it, for the whole cluster. A
   * single node is the whole frontier either way, and so is a router (it owns no slot).
   */
  stats(crawl: string, key: string, local?: boolean): Promise<StoreStats>;
  listQueues(crawl: string, includeInactive: boolean, local?: boolean): Promise<string[]>;
  /**
   * Calls `visit` per matching URL in storage order until it returns false; `limit` bounds
   * how many it may ask for (a cluster fetches no more than that from each slot).
   */
  scanUrls(crawl: string, filter: UrlFilter, limit: number, visit: (v: UrlView) => boolean, local?: boolean): Promise<void>;
  /** How many URLs match. */
  countUrls(crawl: string, filter: UrlFilter, local?: boolean): Promise<number>;
  status(crawl: string, url: string, key: string): Promise<UrlView | undefined>;
  crawls(local?: boolean): Promise<string[]>;
  isActive(local?: boolean): Promise<boolean>;
  /** SetLogLevel with `local` false: the level on every other node of a cluster too (a single node has none). */
  logLevelEverywhere?(prefix: string, level: LogLevel): Promise<void>;
  /** Addresses of the nodes of the cluster (this one only, single-node). */
  nodes(): Promise<string[]>;
  /** The node's clock (epoch ms). */
  now(): number;
}

/** The single-node implementation over a store and its committer. */
export class LocalNode implements FrontierNode {
  constructor(
    private readonly store: UrlFrontierStore,
    private readonly committer: Committer,
    private readonly clock: () => number,
    private readonly address: () => string,
  ) {}

  put(items: readonly PutItem[], done: (statuses: AckStatus[]) => void): void {
    const statuses: AckStatus[] = new Array(items.length);
    const now = this.clock();
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      try {
        statuses[i] = it.known
          ? this.store.putKnown(it.url, it.key, it.crawl, it.meta, it.refetchSec, now)
          : this.store.putDiscovered(it.url, it.key, it.crawl, it.meta, now);
      } catch {
        statuses[i] = 'FAIL';
      }
    }
    // Even SKIPPED waits: it may rest on an earlier item of this turn that is not yet durable.
    this.committer.afterCommit((err) => done(err === undefined ? statuses : statuses.map(() => 'FAIL')));
  }

  /** Registers a waiter for the commit of everything applied so far. */
  afterCommit(cb: CommitCallback): void {
    this.committer.afterCommit(cb);
  }

  async getUrls(req: ServeRequest): Promise<Served[]> {
    return this.store.getUrls(req, this.clock());
  }

  control(op: ControlOp, done: (err: Error | undefined, removed: number) => void): void {
    let removed: number;
    try {
      removed = this.store.control(op);
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)), 0);
      return;
    }
    this.committer.afterCommit((err) => done(err, removed));
  }

  async hasQueue(crawl: string, key: string): Promise<boolean> {
    return this.store.hasQueue(crawlName(crawl), key);
  }

  async stats(crawl: string, key: string): Promise<StoreStats> {
    return this.store.stats(crawlName(crawl), key, this.clock());
  }

  async listQueues(crawl: string, includeInactive: boolean): Promise<string[]> {
    return this.store.listQueues(crawlName(crawl), includeInactive, this.clock());
  }

  async scanUrls(crawl: string, filter: UrlFilter, _limit: number, visit: (v: UrlView) => boolean): Promise<void> {
    this.store.scanUrls(crawlName(crawl), filter, visit);
  }

  async countUrls(crawl: string, filter: UrlFilter): Promise<number> {
    let n = 0;
    this.store.scanUrls(crawlName(crawl), filter, () => {
      n++;
      return true;
    });
    return n;
  }

  async status(crawl: string, url: string, key: string): Promise<UrlView | undefined> {
    return this.store.status(crawlName(crawl), url, key);
  }

  async crawls(): Promise<string[]> {
    return this.store.crawlIds();
  }

  async isActive(): Promise<boolean> {
    return this.store.active;
  }

  async nodes(): Promise<string[]> {
    return [this.address()];
  }

  now(): number {
    return this.clock();
  }
}
