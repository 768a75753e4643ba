/**
 * `startUrlFrontierServer`: a URLFrontier 2.6 server on @grpc/grpc-js — single-node (options
 * validated first, then recovery from `dataDir`, then the listening socket) or a cluster node
 * / router (`cluster`: the socket first, since the node advertises its port, then joining the
 * cluster); a failed start releases whatever it had acquired.
 */
import * as grpc from '@grpc/grpc-js';
import {
  booleanField,
  customField,
  defineOptions,
  functionField,
  numberField,
  stringField,
} from '../options/index.js';
import { MAX_RECORD_BYTES } from '../journal/index.js';
import { ClusterFrontier, type UrlFrontierClusterOptions } from './cluster.js';
import { type FrontierNode, LocalNode } from './node.js';
import { PEER_SERVICE, peerHandlers } from './peer.js';
import { type Committer, FrontierLog, MemoryCommitter, type Recovery } from './persist.js';
import { urlFrontierService } from './schema.js';
import { type LogLevel, type LogSink, LogLevels, urlFrontierHandlers } from './service.js';
import { UrlFrontierStore } from './store.js';

/** Options of `startUrlFrontierServer`. */
export interface UrlFrontierServerOptions {
  /** Address to listen on. Default `127.0.0.1`. */
  host: string;
  /** Port; 0 picks a free one (read it back from `port`). Default 7071. */
  port: number;
  /**
   * Directory for the checkpoint and journal; without it the frontier lives in memory only.
   * A restart on the same directory resumes every URL, lease and control setting acked.
   */
  dataDir: string | undefined;
  /** fsync before acknowledging (survives power loss; kill -9 is survived either way). Default true. */
  fsync: boolean;
  /** Clock in epoch milliseconds (tests inject one). Default `Date.now`. */
  clock: () => number;
  /** Delay between two servings of a queue before SetDelay says otherwise, ms. Default 1000 (the reference's 1 s). */
  defaultDelayMs: number;
  /** Lease when GetURLs asks for delay_requestable 0, ms. Default 30 000 (the reference's 30 s). */
  defaultLeaseMs: number;
  /** Canonicalize URLs with meguri's rules (src/url) before they become identities. Default false. */
  canonicalize: boolean;
  /** Checkpoint when the journal passes this many bytes. Default 64 MiB. */
  checkpointBytes: number;
  /** Checkpoint at least this often while changes arrive, ms. Default 300 000. */
  checkpointEveryMs: number;
  /**
   * Items of one DiscoveredBatch above which the batch is refused: PutDiscovered ends with
   * RESOURCE_EXHAUSTED, nothing of that batch applied. Default 100 000.
   */
  maxBatchItems: number;
  /** Largest gRPC message accepted, bytes. Default 64 MiB. */
  maxMessageBytes: number;
  /**
   * Largest journal record written, bytes (65 536 – 64 MiB; default and most: the journal's
   * own 64 MiB). An item over a quarter of it (16 MiB by default) is acked SKIPPED, without
   * `dataDir` too; a GetURLs serving is journaled in pieces of an eighth. Only tests have a
   * reason to lower it: they reach those limits with little data. Single node only (a
   * cluster's slots keep the default).
   */
  maxJournalRecordBytes: number;
  /** Where log lines go (level, logger, message), filtered by SetLogLevel (INFO by default). Default: stderr. */
  log: LogSink;
  /**
   * Join a cluster instead of running alone: `{ redis, crawl, store }` (a node owning slots,
   * their state in the shared `store`), or `{ redis, crawl, router: true }` (one address in
   * front of the cluster). `dataDir` is not used then.
   */
  cluster: UrlFrontierClusterOptions | undefined;
}

/** A running server. */
export interface UrlFrontierServer {
  /** The port it listens on. */
  readonly port: number;
  /** The address it listens on. */
  readonly host: string;
  /** What recovery found in `dataDir` (undefined in memory-only and cluster mode). */
  readonly recovery: Recovery | undefined;
  /** This node's id in its cluster (undefined single-node). */
  readonly nodeId: string | undefined;
  /** Stops accepting calls, finishes streams briefly, writes a final checkpoint and closes files. */
  close(): Promise<void>;
}

const stderrLog: LogSink = (level, logger, message) => {
  process.stderr.write(`${new Date().toISOString()} ${level} ${logger}: ${message}\n`);
};

const resolveOptions = defineOptions<UrlFrontierServerOptions>('UrlFrontierServerOptions', {
  host: stringField({ default: '127.0.0.1', nonEmpty: true }),
  port: numberField({ min: 0, max: 65535, integer: true, default: 7071 }),
  dataDir: stringField({ nonEmpty: true }),
  fsync: booleanField(true),
  clock: functionField<() => number>(Date.now),
  defaultDelayMs: numberField({ min: 0, max: 86_400_000, default: 1000 }),
  defaultLeaseMs: numberField({ above: 0, max: 86_400_000 * 30, default: 30_000 }),
  canonicalize: booleanField(false),
  checkpointBytes: numberField({ min: 1024, integer: true, default: 64 * 1024 * 1024 }),
  checkpointEveryMs: numberField({ min: 0, default: 300_000 }),
  maxBatchItems: numberField({ min: 1, integer: true, default: 100_000 }),
  maxMessageBytes: numberField({ min: 1024, max: 2 ** 31 - 1, integer: true, default: 64 * 1024 * 1024 }),
  maxJournalRecordBytes: numberField({ min: 65_536, max: MAX_RECORD_BYTES, integer: true, default: MAX_RECORD_BYTES }),
  log: customField<LogSink>('a function (level, logger, message)', (v): v is LogSink => typeof v === 'function', () => stderrLog),
  cluster: customField<UrlFrontierClusterOptions>(
    '{ redis: "redis://…", crawl: NAME, store: DIR } or { redis, crawl, router: true }, with slots 1–65536, heartbeatTtlMs 100–600000 (whole ms: it is a Redis expiry), pollMs 1–60000, peerTimeoutMs 10–600000 if given',
    (v): v is UrlFrontierClusterOptions => {
      const c = v as Partial<UrlFrontierClusterOptions> | null;
      const within = (v: unknown, min: number, max: number): boolean => v === undefined || (typeof v === 'number' && v >= min && v <= max);
      return (
        typeof c === 'object' && c !== null &&
        typeof c.redis === 'string' && /^rediss?:\/\//.test(c.redis) &&
        typeof c.crawl === 'string' && /^[A-Za-z0-9._-]{1,100}$/.test(c.crawl) &&
        (c.router === true || (typeof c.store === 'string' && c.store !== '')) &&
        within(c.slots, 1, 65_536) && (c.slots === undefined || Number.isInteger(c.slots)) &&
        within(c.heartbeatTtlMs, 100, 600_000) && (c.heartbeatTtlMs === undefined || Number.isInteger(c.heartbeatTtlMs)) && within(c.pollMs, 1, 60_000) &&
        within(c.peerTimeoutMs, 10, 600_000) && within(c.forwardTimeoutMs, 0, 3_600_000) &&
        (c.nodeId === undefined || (typeof c.nodeId === 'string' && /^\S{1,200}$/.test(c.nodeId))) &&
        (c.advertise === undefined || (typeof c.advertise === 'string' && c.advertise !== ''))
      );
    },
  ),
});

/**
 * Starts a URLFrontier server and resolves once it listens (and, with `cluster`, has joined).
 *
 * @example
 * const server = await startUrlFrontierServer({ port: 7071, dataDir: './frontier' });
 * // … point StormCrawler or scrapy-url-frontier at 127.0.0.1:7071 …
 * await server.close();
 *
 * @example
 * // a cluster node (one per machine, the same redis, crawl and shared store on each):
 * await startUrlFrontierServer({ port: 7071, cluster: { redis: 'redis://10.0.0.5:6379', crawl: 'web', store: '/mnt/frontier' } });
 */
export async function startUrlFrontierServer(options?: Partial<UrlFrontierServerOptions> | null): Promise<UrlFrontierServer> {
  const o = resolveOptions(options);
  if (o.cluster !== undefined) return startClusterServer(o, o.cluster);
  const store = new UrlFrontierStore({ defaultDelayMs: o.defaultDelayMs, canonicalize: o.canonicalize, maxItemBytes: Math.floor(o.maxJournalRecordBytes / 4) });
  let committer: Committer;
  let recovery: Recovery | undefined;
  if (o.dataDir !== undefined) {
    const opened = FrontierLog.open(store, {
      dir: o.dataDir,
      fsync: o.fsync,
      checkpointBytes: o.checkpointBytes,
      checkpointEveryMs: o.checkpointEveryMs,
      now: o.clock,
      maxRecordBytes: o.maxJournalRecordBytes,
    });
    committer = opened.log;
    recovery = opened.recovery;
    const fb = recovery.fallback;
    if (fb !== undefined) {
      const kept = fb.savedAs === undefined ? '' : ` (a copy kept as ${fb.savedAs})`;
      o.log('WARN', 'meguri.urlfrontier', `the checkpoint in ${o.dataDir} failed validation${kept}: ${fb.reason}; loaded the previous one and replayed its journals (${fb.records} records)`);
    }
  } else {
    committer = new MemoryCommitter();
  }
  let address = `${o.host}:${o.port}`;
  const node = new LocalNode(store, committer, o.clock, () => address);
  let bound: Bound;
  try {
    bound = await listen(o, node, new LogLevels());
  } catch (err) {
    await committer.close().catch(() => undefined);
    throw err;
  }
  address = `${o.host}:${bound.port}`;
  return serverHandle(o, bound, recovery, undefined, () => committer.close());
}

interface Bound {
  readonly server: grpc.Server;
  readonly port: number;
}

/** A gRPC server with the URLFrontier service over `node` (and, in a cluster, the peer service), listening. */
async function listen(o: UrlFrontierServerOptions, node: FrontierNode, levels: LogLevels, peer?: ClusterFrontier): Promise<Bound> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': o.maxMessageBytes,
    'grpc.max_send_message_length': o.maxMessageBytes,
  });
  server.addService(urlFrontierService(), urlFrontierHandlers(node, { defaultLeaseMs: o.defaultLeaseMs, maxBatchItems: o.maxBatchItems, levels, log: o.log }));
  if (peer !== undefined) server.addService(PEER_SERVICE, peerHandlers(peer.local));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const target = o.host.includes(':') ? `[${o.host}]:${o.port}` : `${o.host}:${o.port}`;
      server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
    });
    return { server, port };
  } catch (err) {
    server.forceShutdown();
    throw err;
  }
}

function serverHandle(o: UrlFrontierServerOptions, b: Bound, recovery: Recovery | undefined, nodeId: string | undefined, release: () => Promise<void>): UrlFrontierServer {
  let closing: Promise<void> | undefined;
  return {
    port: b.port,
    host: o.host,
    recovery,
    nodeId,
    close(): Promise<void> {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            b.server.forceShutdown();
            resolve();
          }, 2000);
          b.server.tryShutdown(() => {
            clearTimeout(timer);
            resolve();
          });
        });
        await release();
      })();
      return closing;
    },
  };
}

/** A cluster node or router: listen first (the node advertises its port), then join. */
async function startClusterServer(o: UrlFrontierServerOptions, c: UrlFrontierClusterOptions): Promise<UrlFrontierServer> {
  const levels = new LogLevels();
  const node = new ClusterFrontier(c, {
    store: { defaultDelayMs: o.defaultDelayMs, canonicalize: o.canonicalize },
    fsync: o.fsync,
    checkpointBytes: o.checkpointBytes,
    checkpointEveryMs: o.checkpointEveryMs,
    clock: o.clock,
    maxMessageBytes: o.maxMessageBytes,
    warn: (message) => {
      if (levels.enabled('meguri.urlfrontier.cluster', 'WARN')) o.log('WARN', 'meguri.urlfrontier.cluster', message);
    },
    info: (message) => {
      if (levels.enabled('meguri.urlfrontier.cluster', 'INFO')) o.log('INFO', 'meguri.urlfrontier.cluster', message);
    },
    setLogLevel: (prefix, level) => levels.set(prefix, level),
  });
  const bound = await listen(o, node, levels, c.router === true ? undefined : node);
  try {
    await node.start(`${o.host === '0.0.0.0' || o.host === '::' ? '127.0.0.1' : o.host}:${bound.port}`);
  } catch (err) {
    bound.server.forceShutdown();
    throw err;
  }
  return serverHandle(o, bound, undefined, c.router === true ? undefined : node.nodeId, () => node.close());
}
export type { LogLevel, LogSink };
