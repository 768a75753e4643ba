/**
 * `meguri cluster status --redis URL --crawl NAME [--json]`: a cluster crawl's nodes, slots
 * per node, inbox lag, pages/s and hand-offs in progress, read from its Redis (src/cluster).
 * `meguri cluster limit --redis URL --crawl NAME --store DIR [--max-pages N] [--max-requests N]
 * [--max-depth N] [--max-urls-per-host N]`: changes the crawl's limits (0 = unlimited) — the
 * recorded settings that may change after creation, since a spent budget or a binding cap would
 * otherwise end the crawl for good (a single process raises them on resume). Both copies
 * of the record change (the store's crawl.json first, then Redis's, compare-and-set; the store's
 * put back if Redis refuses): a node joins only where they agree. Running nodes take the new
 * limit within a second; nodes that stopped at the old one are started again.
 */
import { CheckpointStore, ClusterKeys, readBudgets, readCrawl, clusterStatus, formatClusterStatus } from '../cluster/index.js';
import { CRAWL_FILE } from '../cluster/store.js';
import { CHANGEABLE_LIMITS, replaceCrawlSettings, stableJson, withLimits } from '../cluster/settings.js';
import { BUDGET_LIMITS } from '../cluster/budget.js';
import { FLAG_OF } from './crawl.js';
import { join } from 'node:path';
import type { CommandSpec, ParsedArgs } from './args.js';
import { CliFailure, EXIT } from './failure.js';
import type { CliIo } from './io.js';
import { redisLabel, withRedis } from './redis.js';

export const CLUSTER_SPEC: CommandSpec = {
  name: 'cluster',
  summary: 'A cluster crawl as its Redis sees it (status: nodes, slots, inbox lag, pages/s, hand-offs), or change its limits (limit).',
  usage: 'status|limit',
  positionalHelp: 'a subcommand: status, or limit (with --store and --max-pages / --max-requests / --max-depth / --max-urls-per-host)',
  minPositionals: 1,
  maxPositionals: 1,
  flags: [
    { name: 'redis', kind: 'string', arg: 'URL', help: 'the crawl\'s Redis (redis://host:port)', required: 'which Redis the crawl runs on' },
    { name: 'crawl', kind: 'string', arg: 'NAME', help: 'the crawl\'s name', required: 'which crawl to show' },
    { name: 'json', kind: 'boolean', help: 'print one JSON object' },
    { name: 'store', kind: 'string', arg: 'DIR', help: 'limit: the crawl\'s checkpoint store (its crawl.json changes too)' },
    { name: 'max-pages', kind: 'integer', arg: 'N', min: 0, help: 'limit: the crawl\'s page limit (pages fetched OK, soft-404s included, over every node); 0 = unlimited' },
    { name: 'max-requests', kind: 'integer', arg: 'N', min: 0, help: 'limit: the crawl\'s request limit (requests of any outcome over every node); 0 = unlimited' },
    { name: 'max-depth', kind: 'integer', arg: 'N', min: 0, max: 0xffff, help: 'limit: the crawl\'s depth cap; 0 = unlimited (raised, the URLs it parked are fetched)' },
    { name: 'max-urls-per-host', kind: 'integer', arg: 'N', min: 0, help: 'limit: URLs admitted per host; 0 = unlimited (raised, the URLs it parked are fetched)' },
  ],
};

export async function clusterCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const sub = args.positionals[0];
  if (sub === 'limit') return limitCommand(args, io);
  if (sub !== 'status') throw new CliFailure('MEGURI_ERR_INVALID_ARG', `cluster: unknown subcommand ${JSON.stringify(sub)}`, EXIT.usage, 'the subcommands are `status` and `limit`');
  for (const f of ['store', 'max-pages', 'max-requests', 'max-depth', 'max-urls-per-host']) {
    if (args.has(f)) throw new CliFailure('MEGURI_ERR_INVALID_ARG', `cluster status: --${f} is for \`cluster limit\``, EXIT.usage);
  }
  const url = args.text('redis')!;
  const crawl = args.text('crawl')!;
  return withRedis(url, async (redis) => {
    const st = await clusterStatus(redis, crawl);
    if (st === undefined) throw new CliFailure('ENOENT', `no crawl ${JSON.stringify(crawl)} in ${redisLabel(url)}`, EXIT.failure, 'check --crawl; a crawl is created by the first `meguri crawl --redis … --crawl NAME`');
    io.stdout.write(args.flag('json') ? `${JSON.stringify(st)}\n` : formatClusterStatus(st));
    return EXIT.ok;
  });
}

/** Whether a recorded limit is a crawl-wide budget (removed at 0) rather than an admission limit. */
function isBudget(name: string): boolean {
  return (Object.values(BUDGET_LIMITS) as string[]).includes(name);
}

/** `meguri cluster limit` (see the module comment). */
async function limitCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const change: Partial<Record<(typeof CHANGEABLE_LIMITS)[number], number | null>> = {};
  for (const name of CHANGEABLE_LIMITS) {
    const flag = FLAG_OF[name]!.slice(2);
    // 0 removes a budget; an admission limit records 0 as unlimited (`withLimits`).
    if (args.has(flag)) change[name] = isBudget(name) ? args.number(flag) || null : args.number(flag)!;
  }
  if (Object.keys(change).length === 0) {
    throw new CliFailure('MEGURI_ERR_INVALID_ARG', 'cluster limit: give one or more of --max-pages, --max-requests, --max-depth, --max-urls-per-host (N; 0 = unlimited)', EXIT.usage);
  }
  const storeDir = args.text('store');
  if (storeDir === undefined) throw new CliFailure('MEGURI_ERR_INVALID_ARG', 'cluster limit: --store DIR is needed (the crawl\'s settings are kept there too)', EXIT.usage);
  const url = args.text('redis')!;
  const crawl = args.text('crawl')!;
  return withRedis(url, async (redis) => {
    const keys = new ClusterKeys(crawl);
    const was = await readCrawl(redis, keys);
    if (was === undefined) throw new CliFailure('ENOENT', `no crawl ${JSON.stringify(crawl)} in ${redisLabel(url)}`, EXIT.failure, 'check --crawl (a crawl Redis lost is recreated from the store by the next node that joins: change the limit after)');
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
    if (change.maxDepth !== undefined || change.maxUrlsPerHost !== undefined) {
      // A widened cap or budget gives slots that were done work again: no slot may count as
      // idle (a drained campaign) until its owner has applied the new limits and looked.
      const p = redis.pipeline();
      for (let s = 0; s < next.slots; s++) p.hset(keys.slot(s), 'idle', '');
      await p.exec();
    }
    const counts = await readBudgets(redis, keys, next.limits);
    const shown = (name: string, v: number | undefined): string => (v === undefined ? (isBudget(name) ? 'unlimited' : "each node's own") : v === 0 ? 'unlimited' : String(v));
    const changed = Object.keys(change).map((name) => `${FLAG_OF[name]} ${shown(name, was.limits[name])} → ${shown(name, next.limits[name])}`);
    const lines = [
      `crawl ${crawl}: ${changed.join(', ')}`,
      ...counts.map((b) => `  counted so far: ${b.spent} ${b.kind === 'pages' ? 'pages fetched OK' : 'requests'}`),
      '  running nodes take it within a second; start again the nodes that stopped at the old limit (their command without the limit flag, or with the new value)',
    ];
    io.stdout.write(args.flag('json') ? `${JSON.stringify({ crawl, limits: next.limits, budgets: counts })}\n` : `${lines.join('\n')}\n`);
    return EXIT.ok;
  });
}

