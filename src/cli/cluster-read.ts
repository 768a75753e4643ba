/**
 * `meguri stats` and `meguri hosts` on a cluster crawl: `--redis URL --crawl NAME --store DIR`
 * instead of a data directory. Each slot's accepted checkpoint (the slot record names it) is
 * read from the store; hosts are listed over all slots (a host group never spans two slots),
 * stats per slot and summed.
 *
 * Never: read a checkpoint the slot record does not point at (a fenced writer's files may
 * still be in the store until pruned), or write anything — unless Redis holds no record of
 * the crawl at all (it lost its data): then the store's copy of the settings gives the slot
 * count and each slot's newest checkpoint is read, the one a node restores when it joins (a
 * damaged newest is reported, where a node would skip to the one before), marked `fromStore`.
 */
import { join } from 'node:path';
import { type BudgetState, CRAWL_FILE, CheckpointStore, ClusterKeys, readBudgets, readCrawl, readSlots } from '../cluster/index.js';
import { PARTITION_FILE } from '../cluster/store.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import { redisLabel, withRedis } from './redis.js';
import { CliFailure, EXIT } from './failure.js';

/** The flags that point a reading command at a cluster crawl. */
export const CLUSTER_READ_FLAGS: readonly FlagSpec[] = [
  { name: 'redis', kind: 'string', arg: 'URL', help: "a cluster crawl's Redis (with --crawl and --store, instead of DIR)" },
  { name: 'crawl', kind: 'string', arg: 'NAME', help: 'the cluster crawl’s name' },
  { name: 'store', kind: 'string', arg: 'DIR', help: 'the cluster crawl’s checkpoint store' },
];

/** One slot's accepted checkpoint file. */
export interface SlotFile {
  readonly slot: number;
  readonly epoch: number;
  readonly owner: string;
  readonly file: string;
  /** Read from the store because Redis had no record of the crawl (see the top comment). */
  readonly fromStore?: boolean;
}

/**
 * The accepted checkpoint of every slot of the crawl `--crawl` (slots never checkpointed are
 * left out); undefined when `--redis` is not given.
 * @throws CliFailure when Redis cannot be reached, the crawl does not exist, or a flag is missing.
 */
export async function clusterSlotFiles(args: ParsedArgs): Promise<SlotFile[] | undefined> {
  if (!args.has('redis')) return undefined;
  const url = args.text('redis')!;
  const crawl = args.text('crawl');
  const store = args.text('store');
  if (crawl === undefined || store === undefined) throw new CliFailure('MEGURI_ERR_INVALID_ARG', '--redis needs --crawl NAME and --store DIR too', EXIT.usage, 'name the crawl and its checkpoint store');
  return withRedis(url, async (redis) => {
    const keys = new ClusterKeys(crawl);
    const settings = await readCrawl(redis, keys);
    if (settings === undefined) return await storeSlotFiles(url, crawl, store);
    const recs = await readSlots(redis, keys, settings.slots);
    return recs.filter((r) => r.ckpt !== '').map((r) => ({ slot: r.slot, epoch: r.epoch, owner: r.owner, file: join(store, crawl, r.ckpt, PARTITION_FILE) }));
  });
}

/** The crawl's page and request budgets as Redis counts them (none without limits, or when Redis has no record of the crawl). */
export async function clusterBudgets(args: ParsedArgs): Promise<BudgetState[]> {
  const crawl = args.text('crawl');
  if (!args.has('redis') || crawl === undefined) return [];
  return withRedis(args.text('redis')!, async (redis) => {
    const keys = new ClusterKeys(crawl);
    const settings = await readCrawl(redis, keys);
    return settings === undefined ? [] : await readBudgets(redis, keys, settings.limits);
  });
}

/** Each slot's newest checkpoint in the store, for a crawl Redis has no record of. */
async function storeSlotFiles(url: string, crawl: string, store: string): Promise<SlotFile[]> {
  const cs = new CheckpointStore(store, crawl);
  const stored = await cs.readCrawlFile();
  if (stored === undefined) throw new CliFailure('ENOENT', `no crawl ${JSON.stringify(crawl)} in ${redisLabel(url)}, nor its settings in ${join(cs.dir, CRAWL_FILE)}`, EXIT.failure, 'check --crawl and --store');
  const out: SlotFile[] = [];
  for (let slot = 0; slot < stored.slots; slot++) {
    const [newest] = await cs.checkpoints(slot);
    if (newest !== undefined) out.push({ slot, epoch: newest.epoch, owner: '', file: join(cs.dir, newest.rel, PARTITION_FILE), fromStore: true });
  }
  return out;
}
