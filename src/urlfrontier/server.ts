/**
 * `startUrlFrontierServer`: a single-node URLFrontier 2.6 server on @grpc/grpc-js — options
 * validated first, then recovery from `dataDir`, then the listening socket; a failed start
 * releases whatever it had acquired.
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
import { LocalNode } from './node.js';
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
  /** Items of one DiscoveredBatch above which the batch is answered FAIL. Default 100 000. */
  maxBatchItems: number;
  /** Largest gRPC message accepted, bytes. Default 64 MiB. */
  maxMessageBytes: number;
  /** Where log lines go (level, logger, message), filtered by SetLogLevel (INFO by default). Default: stderr. */
  log: LogSink;
}

/** A running server. */
export interface UrlFrontierServer {
  /** The port it listens on. */
  readonly port: number;
  /** The address it listens on. */
  readonly host: string;
  /** What recovery found in `dataDir` (undefined in memory-only mode). */
  readonly recovery: Recovery | undefined;
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
  log: customField<LogSink>('a function (level, logger, message)', (v): v is LogSink => typeof v === 'function', () => stderrLog),
});

/**
 * Starts a single-node URLFrontier server and resolves once it listens.
 *
 * @example
 * const server = await startUrlFrontierServer({ port: 7071, dataDir: './frontier' });
 * // … point StormCrawler or scrapy-url-frontier at 127.0.0.1:7071 …
 * await server.close();
 */
export async function startUrlFrontierServer(options?: Partial<UrlFrontierServerOptions> | null): Promise<UrlFrontierServer> {
  const o = resolveOptions(options);
  const store = new UrlFrontierStore({ defaultDelayMs: o.defaultDelayMs, canonicalize: o.canonicalize });
  let committer: Committer;
  let recovery: Recovery | undefined;
  if (o.dataDir !== undefined) {
    const opened = FrontierLog.open(store, {
      dir: o.dataDir,
      fsync: o.fsync,
      checkpointBytes: o.checkpointBytes,
      checkpointEveryMs: o.checkpointEveryMs,
      now: o.clock,
    });
    committer = opened.log;
    recovery = opened.recovery;
  } else {
    committer = new MemoryCommitter();
  }
  const levels = new LogLevels();
  let address = `${o.host}:${o.port}`;
  const node = new LocalNode(store, committer, o.clock, () => address);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': o.maxMessageBytes,
    'grpc.max_send_message_length': o.maxMessageBytes,
  });
  server.addService(urlFrontierService(), urlFrontierHandlers(node, { defaultLeaseMs: o.defaultLeaseMs, maxBatchItems: o.maxBatchItems, levels, log: o.log }));
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      const target = o.host.includes(':') ? `[${o.host}]:${o.port}` : `${o.host}:${o.port}`;
      server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
    });
  } catch (err) {
    server.forceShutdown();
    await committer.close().catch(() => undefined);
    throw err;
  }
  address = `${o.host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    port,
    host: o.host,
    recovery,
    close(): Promise<void> {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            server.forceShutdown();
            resolve();
          }, 2000);
          server.tryShutdown(() => {
            clearTimeout(timer);
            resolve();
          });
        });
        await committer.close();
      })();
      return closing;
    },
  };
}

export type { LogLevel, LogSink };
