/**
 * `meguri cluster status --redis URL --crawl NAME [--json]`: a cluster crawl's nodes, slots
 * per node, inbox lag, pages/s and hand-offs in progress, read from its Redis (src/cluster).
 */
import { Redis } from 'ioredis';
import { clusterStatus, formatClusterStatus } from '../cluster/index.js';
import type { CommandSpec, ParsedArgs } from './args.js';
import { CliFailure, EXIT } from './failure.js';
import type { CliIo } from './io.js';

export const CLUSTER_SPEC: CommandSpec = {
  name: 'cluster',
  summary: 'A cluster crawl as its Redis sees it: nodes, slots per node, inbox lag, pages/s, hand-offs.',
  usage: 'status',
  positionalHelp: 'a subcommand (status)',
  minPositionals: 1,
  maxPositionals: 1,
  flags: [
    { name: 'redis', kind: 'string', arg: 'URL', help: 'the crawl\'s Redis (redis://host:port)', required: 'which Redis the crawl runs on' },
    { name: 'crawl', kind: 'string', arg: 'NAME', help: 'the crawl\'s name', required: 'which crawl to show' },
    { name: 'json', kind: 'boolean', help: 'print one JSON object' },
  ],
};

export async function clusterCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const sub = args.positionals[0];
  if (sub !== 'status') throw new CliFailure('MEGURI_ERR_INVALID_ARG', `cluster: unknown subcommand ${JSON.stringify(sub)}`, EXIT.usage, 'the only subcommand is `status`');
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
