/**
 * `meguri serve`: meguri as a URLFrontier 2.6 server (src/urlfrontier) until SIGINT/SIGTERM,
 * which closes it cleanly (a final checkpoint in --data, or of every slot in --store). With
 * --redis/--crawl/--store the server is one node of a cluster; with --router it is a single
 * address in front of one.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { InvalidArgumentError } from '../errors/index.js';
import { ensureDirectory } from '../format/file.js';
import type { UrlFrontierClusterOptions } from '../urlfrontier/index.js';
import { startUrlFrontierServer } from '../urlfrontier/index.js';
import type { CommandSpec, ParsedArgs } from './args.js';
import { EXIT } from './failure.js';
import { type CliIo, SignalHub } from './io.js';

/** `meguri serve`'s flags. */
export const SERVE_SPEC: CommandSpec = {
  name: 'serve',
  summary: 'Run a URLFrontier 2.6 gRPC server (StormCrawler, scrapy-url-frontier, any gRPC client) on a meguri frontier.',
  usage: '',
  minPositionals: 0,
  maxPositionals: 0,
  flags: [
    { name: 'host', kind: 'string', arg: 'ADDR', help: 'address to listen on (default 127.0.0.1)' },
    { name: 'port', kind: 'integer', arg: 'N', min: 0, max: 65535, help: 'port (default 7071; 0 picks a free one)' },
    { name: 'data', kind: 'string', arg: 'DIR', help: 'checkpoint and journal directory (default: memory only, nothing kept)' },
    { name: 'canonicalize', kind: 'boolean', help: "canonicalize URLs with meguri's rules before they become identities" },
    { name: 'no-fsync', kind: 'boolean', help: 'ack once written, without waiting for fsync (survives kill -9, not power loss)' },
    { name: 'redis', kind: 'string', arg: 'URL', help: 'join (or create) a URLFrontier cluster coordinated by this Redis; needs --crawl and --store (or --router)' },
    { name: 'crawl', kind: 'string', arg: 'NAME', help: "with --redis: the cluster's name" },
    { name: 'store', kind: 'string', arg: 'DIR', help: "with --redis: the slots' checkpoint store every node shares (a network file system across machines)" },
    { name: 'router', kind: 'boolean', help: 'with --redis and --crawl: own no slot, give clients one address in front of the cluster' },
    { name: 'slots', kind: 'integer', arg: 'N', min: 1, max: 65536, help: 'with --redis, not --router: slots of a new cluster (default 64; recorded when the first node creates it)' },
    { name: 'advertise', kind: 'string', arg: 'HOST:PORT', help: 'with --redis, not --router: the address other nodes reach this one at (default --host:port, or 127.0.0.1:port when --host is 0.0.0.0 or ::: give it across machines)' },
  ],
  notes: [
    'Acks (PutURLs, PutDiscovered) and control calls are answered once the change is in the journal; restarting on the same --data resumes every URL, lease, delay, block, limit and the active flag.',
    'SIGINT or SIGTERM stops the server with a final checkpoint (exit code 0).',
    'Cluster: any node accepts every call; items for slots another node owns are forwarded to it and acked once it made them durable; stats and listings fan out and fail (UNAVAILABLE) rather than under-count. --data then only keeps the node\'s id across restarts.',
  ],
};

/** Runs the server until a signal (or `stop`, for embedders and tests) ends it. */
export async function serveCommand(args: ParsedArgs, io: CliIo, stop?: Promise<unknown>): Promise<number> {
  const data = args.text('data');
  const cluster = clusterOptions(args, data);
  const server = await startUrlFrontierServer({
    host: args.text('host') ?? '127.0.0.1',
    port: args.number('port') ?? 7071,
    dataDir: data === undefined || cluster !== undefined ? undefined : resolvePath(data),
    canonicalize: args.flag('canonicalize'),
    fsync: !args.flag('no-fsync'),
    log: (level, logger, message) => io.stderr.write(`${level} ${logger}: ${message}\n`),
    cluster,
  });
  const rec = server.recovery;
  const where =
    cluster?.router === true
      ? ` (router for cluster ${cluster.crawl})`
      : cluster !== undefined
        ? ` (cluster ${cluster.crawl}, node ${server.nodeId}, store ${cluster.store})`
        : data === undefined
          ? ' (memory only)'
          : ` (data ${resolvePath(data)}${rec ? `, generation ${rec.generation}, ${rec.replayedRecords} journal records replayed` : ''})`;
  io.stdout.write(`meguri serve: URLFrontier 2.6 on ${server.host}:${server.port}${where}\n`);
  const hub = SignalHub.open(io, () => io.stderr.write('meguri serve: closing…\n'));
  try {
    await new Promise<void>((resolve) => {
      hub.route(() => resolve());
      stop?.then(() => resolve());
    });
    hub.route(undefined);
    await server.close();
    io.stdout.write(`meguri serve: closed${cluster?.router === true || (cluster === undefined && data === undefined) ? '' : ' (checkpoint written)'}\n`);
    return EXIT.ok;
  } finally {
    hub.close();
  }
}

/** The cluster flags as `startUrlFrontierServer`'s `cluster` option (undefined without --redis). */
function clusterOptions(args: ParsedArgs, data: string | undefined): UrlFrontierClusterOptions | undefined {
  if (!args.has('redis')) {
    for (const f of ['crawl', 'store', 'router', 'slots', 'advertise']) {
      if (args.has(f)) throw new InvalidArgumentError(`serve: --${f} applies to a cluster: add --redis URL`);
    }
    return undefined;
  }
  const redis = args.text('redis')!;
  const crawl = args.text('crawl');
  if (crawl === undefined) throw new InvalidArgumentError('serve: --redis needs --crawl NAME (the cluster to join)');
  const slots = args.number('slots');
  const advertise = args.text('advertise');
  if (args.flag('router')) {
    // Given to a router they would do nothing: it creates no cluster and is reached by clients only.
    for (const f of ['store', 'slots', 'advertise']) if (args.has(f)) throw new InvalidArgumentError(`serve: a --router owns no slot and takes no --${f}`);
    return { redis, crawl, router: true };
  }
  const store = args.text('store');
  if (store === undefined) throw new InvalidArgumentError('serve: --redis needs --store DIR (the checkpoint store every node shares) or --router');
  return {
    redis,
    crawl,
    store: resolvePath(store),
    ...(slots === undefined ? {} : { slots }),
    ...(advertise === undefined ? {} : { advertise }),
    ...(data === undefined ? {} : { nodeId: nodeIdIn(resolvePath(data), crawl) }),
  };
}

/** The node id kept in `dir` (created on first use), so a restarted node keeps its name. */
function nodeIdIn(dir: string, crawl: string): string {
  ensureDirectory(dir);
  const path = join(dir, `urlfrontier-node-${crawl}.id`);
  if (existsSync(path)) {
    const id = readFileSync(path, 'utf8').trim();
    if (/^\S{1,200}$/.test(id)) return id;
  }
  const id = `node-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  writeFileSync(path, `${id}\n`);
  return id;
}
