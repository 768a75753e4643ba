/**
 * `meguri stats` and `meguri hosts` on a cluster crawl: `--redis URL --crawl NAME --store DIR`
 * instead of a data directory. Each slot's accepted checkpoint (the slot record names it) is
 * read from the store; hosts are listed over all slots (a host group never spans two slots),
 * stats per slot and summed.
 *
 * Never: read a checkpoint the slot record does not point at (a fenced writer's files may
 * still be in the store until pruned), or write anything.
 */
import { join } from 'node:path';
import { ClusterKeys, readCrawl, readSlots } from '../cluster/index.js';
import { PARTITION_FILE } from '../cluster/store.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import { connectRedis } from './cluster.js';
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
  const redis = await connectRedis(url);
  try {
    const keys = new ClusterKeys(crawl);
    const settings = await readCrawl(redis, keys);
    if (settings === undefined) throw new CliFailure('ENOENT', `no crawl ${JSON.stringify(crawl)} in ${url}`, EXIT.failure, 'check --crawl');
    const recs = await readSlots(redis, keys, settings.slots);
    return recs.filter((r) => r.ckpt !== '').map((r) => ({ slot: r.slot, epoch: r.epoch, owner: r.owner, file: join(store, crawl, r.ckpt, PARTITION_FILE) }));
  } finally {
    redis.disconnect();
  }
}
