/**
 * `meguri cluster status --redis URL --crawl NAME [--json]`: a cluster crawl's nodes, slots
 * per node, inbox lag, pages/s and hand-offs in progress, read from its Redis (src/cluster).
 * `meguri cluster limit --redis URL --crawl NAME --store DIR [--max-pages N] [--max-requests N]`:
 * changes the crawl's page or request limit (0 = unlimited) — the one recorded setting that
 * may change after creation, since a spent limit otherwise ends the crawl for good. Both copies
 * of the record change (the store's crawl.json first, then Redis's, compare-and-set; the store's
 * put back if Redis refuses): a node joins only where they agree. Running nodes take the new
 * limit within a second; nodes that stopped at the old one are started again.
 */
import { Redis } from 'ioredis';
import { CheckpointStore, ClusterKeys, readBudgets, readCrawl, clusterStatus, formatClusterStatus } from '../cluster/index.js';
import { CRAWL_FILE } from '../cluster/store.js';
import { replaceCrawlSettings, stableJson, withLimits } from '../cluster/settings.js';
import { join } from 'node:path';
import type { CommandSpec, ParsedArgs } from './args.js';
import { CliFailure, EXIT } from './failure.js';
import type { CliIo } from './io.js';

export const CLUSTER_SPEC: CommandSpec = {
  name: 'cluster',
  summary: 'A cluster crawl as its Redis sees it (status: nodes, slots, inbox lag, pages/s, hand-offs), or change its page/request limit (limit).',
  usage: 'status|limit',
  positionalHelp: 'a subcommand: status, or limit (with --store and --max-pages / --max-requests)',
  minPositionals: 1,
  maxPositionals: 1,
  flags: [
    { name: 'redis', kind: 'string', arg: 'URL', help: 'the crawl\'s Redis (redis://host:port)', required: 'which Redis the crawl runs on' },
    { name: 'crawl', kind: 'string', arg: 'NAME', help: 'the crawl\'s name', required: 'which crawl to show' },
    { name: 'json', kind: 'boolean', help: 'print one JSON object' },
    { name: 'store', kind: 'string', arg: 'DIR', help: 'limit: the crawl\'s checkpoint store (its crawl.json changes too)' },
    { name: 'max-pages', kind: 'integer', arg: 'N', min: 0, help: 'limit: the crawl\'s page limit (pages fetched OK over every node); 0 = unlimited' },
    { name: 'max-requests', kind: 'integer', arg: 'N', min: 0, help: 'limit: the crawl\'s request limit (requests of any outcome over every node); 0 = unlimited' },
  ],
};

export async function clusterCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const sub = args.positionals[0];
  if (sub === 'limit') return limitCommand(args, io);
  if (sub !== 'status') throw new CliFailure('MEGURI_ERR_INVALID_ARG', `cluster: unknown subcommand ${JSON.stringify(sub)}`, EXIT.usage, 'the subcommands are `status` and `limit`');
  for (const f of ['store', 'max-pages', 'max-requests']) {
    if (args.has(f)) throw new CliFailure('MEGURI_ERR_INVALID_ARG', `cluster status: --${f} is for \`cluster limit\``, EXIT.usage);
  }
  const url = args.text('redis')!;
  const crawl = args.text('crawl')!;
  const redis = await connectRedis(url);
  try {
    const st = await clusterStatus(redis, crawl);
    if (st === undefined) throw new CliFailure('ENOENT', `no crawl ${JSON.stringify(crawl)} in ${url}`, EXIT.failure, 'check --crawl; a crawl is created by the first `meguri crawl --redis … --crawl NAME`');
    io.stdout.write(args.flag('json') ? `${JSON.stringify(st)}\n` : formatClusterStatus(st));
    return EXIT.ok;
  } finally {
    redis.disconnect();
  }
}

/** `meguri cluster limit` (see the module comment). */
async function limitCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const change: { maxPages?: number | null; maxRequests?: number | null } = {};
  if (args.has('max-pages')) change.maxPages = args.number('max-pages') || null;
  if (args.has('max-requests')) change.maxRequests = args.number('max-requests') || null;
  if (Object.keys(change).length === 0) throw new CliFailure('MEGURI_ERR_INVALID_ARG', 'cluster limit: give --max-pages N and/or --max-requests N (0 = unlimited)', EXIT.usage);
  const storeDir = args.text('store');
  if (storeDir === undefined) throw new CliFailure('MEGURI_ERR_INVALID_ARG', 'cluster limit: --store DIR is needed (the crawl\'s settings are kept there too)', EXIT.usage);
  const url = args.text('redis')!;
  const crawl = args.text('crawl')!;
  const redis = await connectRedis(url);
  try {
    const keys = new ClusterKeys(crawl);
    const was = await readCrawl(redis, keys);
    if (was === undefined) throw new CliFailure('ENOENT', `no crawl ${JSON.stringify(crawl)} in ${url}`, EXIT.failure, 'check --crawl (a crawl Redis lost is recreated from the store by the next node that joins: change the limit after)');
    const store = new CheckpointStore(storeDir, crawl);
    const file = join(store.dir, CRAWL_FILE);
    const stored = await store.readCrawlFile();
    if (stored === undefined || stableJson(stored) !== stableJson(was)) {
      throw new CliFailure('MEGURI_ERR_INVALID_STATE', `${file} does not hold crawl ${JSON.stringify(crawl)}'s settings as Redis records them`, EXIT.failure, "is --store this crawl's checkpoint store?");
    }
    const next = withLimits(was, change);
    await store.writeCrawlFile(next);
    if (!(await replaceCrawlSettings(redis, keys, was, next))) {
      await store.writeCrawlFile(was);
      throw new CliFailure('MEGURI_ERR_INVALID_STATE', `crawl ${JSON.stringify(crawl)}: its record changed meanwhile; nothing was changed`, EXIT.failure, 'run it again');
    }
    const counts = await readBudgets(redis, keys, next.limits);
    const text = (name: 'maxPages' | 'maxRequests', flag: string): string => {
      const from = was.limits[name];
      const to = next.limits[name];
      return `${flag} ${from ?? 'unlimited'} → ${to ?? 'unlimited'}`;
    };
    const lines = [
      `crawl ${crawl}: ${[change.maxPages !== undefined ? text('maxPages', '--max-pages') : '', change.maxRequests !== undefined ? text('maxRequests', '--max-requests') : ''].filter(Boolean).join(', ')}`,
      ...counts.map((b) => `  counted so far: ${b.spent} ${b.kind === 'pages' ? 'pages fetched OK' : 'requests'}`),
      '  running nodes take it within a second; start again the nodes that stopped at the old limit (their command without the limit flag, or with the new value)',
    ];
    io.stdout.write(args.flag('json') ? `${JSON.stringify({ crawl, limits: next.limits, budgets: counts })}\n` : `${lines.join('\n')}\n`);
    return EXIT.ok;
  } finally {
    redis.disconnect();
  }
}

/**
 * A connection for a read command: a few quick tries, then a CLI failure naming the address
 * (the shared connect step of `cluster status` and `stats`/`hosts --redis`).
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: (n) => (n > 2 ? null : 200), lazyConnect: true });
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new CliFailure('ECONNREFUSED', `cannot reach Redis at ${url}: ${(err as Error).message}`, EXIT.failure, 'check --redis and that redis-server runs');
  }
  return redis;
}
