/**
 * `LocalNode`: one frontier node — the store, its durability and its clock — behind the
 * operations the gRPC service needs, each answering only once its change is committed.
 *
 * This is the seam a cluster plugs into: the service (service.ts) speaks only to the
 * `FrontierNode` interface, so a cluster node can implement it by routing each item to the
 * node owning its slot (forwarding and waiting for the owner's commit before acking) and by
 * fanning listings and stats out across nodes, without touching the service or the store.
 */
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

/** The operations of a frontier node, as the service uses them. */
export interface FrontierNode {
  /** Applies items in order; `done` gets one status per item once they are durable. */
  put(items: readonly PutItem[], done: (statuses: AckStatus[]) => void): void;
  getUrls(req: ServeRequest): Served[];
  /** Applies a control call; `done` gets the URLs removed (deletes, purges) once durable. */
  control(op: ControlOp, done: (err: Error | undefined, removed: number) => void): void;
  hasQueue(crawl: string, key: string): boolean;
  stats(crawl: string, key: string): StoreStats;
  listQueues(crawl: string, includeInactive: boolean): string[];
  scanUrls(crawl: string, filter: UrlFilter, visit: (v: UrlView) => boolean): void;
  status(crawl: string, url: string, key: string): UrlView | undefined;
  crawls(): string[];
  readonly active: boolean;
  /** Addresses of the nodes of the cluster (this one only, single-node). */
  nodes(): string[];
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

  getUrls(req: ServeRequest): Served[] {
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

  hasQueue(crawl: string, key: string): boolean {
    return this.store.hasQueue(crawlName(crawl), key);
  }

  stats(crawl: string, key: string): StoreStats {
    return this.store.stats(crawlName(crawl), key, this.clock());
  }

  listQueues(crawl: string, includeInactive: boolean): string[] {
    return this.store.listQueues(crawlName(crawl), includeInactive, this.clock());
  }

  scanUrls(crawl: string, filter: UrlFilter, visit: (v: UrlView) => boolean): void {
    this.store.scanUrls(crawlName(crawl), filter, visit);
  }

  status(crawl: string, url: string, key: string): UrlView | undefined {
    return this.store.status(crawlName(crawl), url, key);
  }

  crawls(): string[] {
    return [...this.store.crawls.keys()];
  }

  get active(): boolean {
    return this.store.active;
  }

  nodes(): string[] {
    return [this.address()];
  }

  now(): number {
    return this.clock();
  }
}
