/**
 * The URLFrontier gRPC service: turns the schema's messages into `FrontierNode` calls and
 * answers with the schema's messages and statuses.
 *
 * Owns: the wire rules — defaults of zero fields, crawlID "" reported as DEFAULT, one ack per
 * item in order, one BatchAck per batch, gRPC status codes for bad calls — and stream
 * hygiene: backpressure on acks, a cancelled or broken stream never takes the server down,
 * every item applied before a disconnect stays applied. Never: frontier rules (node/store).
 *
 * Streams are batched per event-loop turn: the items of one PutURLs stream that arrive
 * together are applied together and acknowledged after one commit, which is what lets a
 * single stream ingest tens of thousands of URLs a second over a group-committed journal.
 */
import * as grpc from '@grpc/grpc-js';
import type { FrontierNode, PutItem } from './node.js';
import { type AckStatus, MAX_KEY_LENGTH, type Metadata, type UrlView, crawlName } from './store.js';

// ---- message shapes (as @grpc/proto-loader decodes them with LOADER_OPTIONS) ----

interface UrlInfoMsg {
  url: string;
  key: string;
  metadata: Metadata;
  crawlID: string;
}
interface UrlItemMsg {
  item?: 'discovered' | 'known';
  discovered?: { info?: UrlInfoMsg | null } | null;
  known?: { info?: UrlInfoMsg | null; refetchable_from_date: number } | null;
  ID: string;
  creation_date?: number;
}
interface AckMsg {
  ID: string;
  status: AckStatus;
}
interface BatchMsg {
  ID: string;
  items: UrlInfoMsg[];
}
interface GetParamsMsg {
  max_urls_per_queue: number;
  max_queues: number;
  key: string;
  delay_requestable: number;
  item?: 'anyCrawlID' | 'crawlID';
  crawlID?: string;
}
interface QueueParamsMsg {
  key: string;
  crawlID: string;
  local: boolean;
}
interface PaginationMsg {
  start: number;
  size: number;
  include_inactive: boolean;
  crawlID: string;
  local: boolean;
}
interface ListUrlMsg {
  start: number;
  size: number;
  key: string;
  crawlID: string;
  filter?: string;
  ignoreCase?: boolean;
  local: boolean;
}
interface CountUrlMsg {
  key: string;
  crawlID: string;
  filter?: string;
  ignoreCase?: boolean;
  local?: boolean;
}

/** Levels of SetLogLevel, lowest first. */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Per-logger thresholds, set by SetLogLevel; the longest matching prefix wins. */
export class LogLevels {
  private readonly levels = new Map<string, number>([['', LOG_LEVELS.indexOf('INFO')]]);

  set(pkg: string, level: LogLevel): void {
    this.levels.set(pkg, LOG_LEVELS.indexOf(level));
  }

  enabled(logger: string, level: LogLevel): boolean {
    let best = -1;
    let threshold = 2;
    for (const [pkg, lvl] of this.levels) {
      if (pkg.length > best && (pkg === '' || logger === pkg || logger.startsWith(`${pkg}.`))) {
        best = pkg.length;
        threshold = lvl;
      }
    }
    return LOG_LEVELS.indexOf(level) >= threshold;
  }
}

/** Where log lines go. */
export type LogSink = (level: LogLevel, logger: string, message: string) => void;

/** Service settings. */
export interface ServiceSettings {
  /** Lease given when GetURLs asks for 0 seconds (ms). */
  readonly defaultLeaseMs: number;
  /**
   * Items of one DiscoveredBatch beyond which the batch is refused: the stream ends with
   * RESOURCE_EXHAUSTED once the batches before it are acked.
   */
  readonly maxBatchItems: number;
  readonly levels: LogLevels;
  readonly log: LogSink;
}

const LOGGER = 'meguri.urlfrontier';
/** Acks buffered for a client before its input is paused (it is not reading them). */
const ACK_BACKLOG = 50_000;
const DEFAULT_PAGE = 100;

function status(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}

/**
 * The gRPC status of a failed node call: the one it carries (`grpcCode`, e.g. a cluster
 * fan-out's UNAVAILABLE) or INTERNAL.
 */
function codeOf(err: unknown): grpc.status {
  const c = (err as { grpcCode?: unknown } | undefined)?.grpcCode;
  return typeof c === 'number' ? (c as grpc.status) : grpc.status.INTERNAL;
}

function infoOf(item: UrlItemMsg): { info: UrlInfoMsg | undefined; known: boolean; refetch: number } {
  if (item.item === 'known' && item.known) return { info: item.known.info ?? undefined, known: true, refetch: item.known.refetchable_from_date };
  if (item.item === 'discovered' && item.discovered) return { info: item.discovered.info ?? undefined, known: false, refetch: 0 };
  return { info: undefined, known: false, refetch: 0 };
}

const NOT_AN_ITEM: PutItem = { known: false, url: '', key: '', crawl: '', meta: undefined, refetchSec: 0 };

function putItem(info: UrlInfoMsg | undefined, known: boolean, refetchSec: number): PutItem {
  if (info === undefined) return NOT_AN_ITEM;
  return { known, url: info.url, key: info.key, crawl: info.crawlID, meta: info.metadata, refetchSec };
}

function urlItemOf(v: UrlView): object {
  return {
    known: {
      info: { url: v.url, key: v.key, metadata: v.meta, crawlID: v.crawl },
      refetchable_from_date: v.dueMs === Number.POSITIVE_INFINITY ? 0 : Math.floor(v.dueMs / 1000),
    },
    ID: v.url,
    creation_date: Math.floor(v.createdMs / 1000),
  };
}

/** What grpc-js (1.x) keeps behind a server stream: the call that frames and sends one message. */
interface InnerCall {
  sendMessage(message: unknown, callback: () => void): void;
}

/**
 * Lets a grpc-js server stream hand all its buffered messages to HTTP/2 at once.
 *
 * grpc-js server streams have no `_writev`, so Node's Writable passes acks down one at a
 * time, each only after the previous one's HTTP/2 write completed: a socket write, its
 * callback and a stream-buffer pass per ack (about a quarter of the server's CPU on one
 * PutURLs stream). Given `_writev`, the Writable hands over everything queued; each message
 * still goes through grpc-js's own send (serialization, size limit, status on a failed
 * write), and the batch completes when the last one's write does (HTTP/2 writes complete in
 * order). The wire is unchanged: one gRPC message per ack. Streams of another shape (a
 * future grpc-js) keep the one-at-a-time path. Exported for test/urlfrontier/writes.test.ts.
 */
export function batchWrites(stream: object): void {
  const inner = (stream as { call?: Partial<InnerCall> }).call;
  if (typeof inner?.sendMessage !== 'function' || typeof (stream as { _writev?: unknown })._writev === 'function') return;
  const send = inner.sendMessage.bind(inner);
  (stream as { _writev?: unknown })._writev = (chunks: { chunk: unknown }[], callback: () => void): void => {
    const last = chunks.length - 1;
    for (let i = 0; i < last; i++) send(chunks[i]!.chunk, noop);
    send(chunks[last]!.chunk, callback);
  };
}

function noop(): void {}

/**
 * A duplex stream's writer with backpressure: writes while the transport accepts, pauses the
 * input while it does not, and ends the stream once the client ended and nothing is owed.
 */
class AckWriter<T> {
  owed = 0;
  private inputEnded = false;
  private dead = false;
  /** The status to end with instead of OK, once everything owed is sent (`refuse`). */
  private refusal: grpc.ServiceError | undefined;

  constructor(private readonly call: grpc.ServerDuplexStream<unknown, T>) {
    batchWrites(call);
    call.on('drain', () => call.resume());
    const kill = (): void => {
      this.dead = true;
    };
    call.on('cancelled', kill);
    call.on('error', kill);
    call.on('close', kill);
  }

  send(msgs: readonly T[]): void {
    this.owed -= msgs.length;
    if (this.dead) return;
    for (const m of msgs) this.call.write(m);
    // grpc-js streams are object-mode with a high-water mark of 16 messages, so write() says
    // "full" after every batch of acks; pausing the input on that would stall ingestion once
    // per turn. Pause only when a client really stops reading its acks.
    if (this.call.writableLength > ACK_BACKLOG) this.call.pause();
    this.maybeEnd();
  }

  endInput(): void {
    this.inputEnded = true;
    this.maybeEnd();
  }

  /** Reads no more input and ends the stream with `err` once the acks owed are sent. */
  refuse(err: grpc.ServiceError): void {
    this.refusal = err;
    this.call.pause();
    this.endInput();
  }

  /** Whether `refuse` was called: input after it is not applied. */
  get refused(): boolean {
    return this.refusal !== undefined;
  }

  private maybeEnd(): void {
    if (this.inputEnded && this.owed === 0 && !this.dead) {
      this.dead = true;
      // 'error' is how a grpc-js server stream ends with a status (after the writes queued).
      if (this.refusal !== undefined) this.call.emit('error', this.refusal);
      else this.call.end();
    }
  }
}

/** Builds the handler map of the URLFrontier service over `node`. */
export function urlFrontierHandlers(node: FrontierNode, s: ServiceSettings): grpc.UntypedServiceImplementation {
  const warn = (message: string): void => {
    if (s.levels.enabled(LOGGER, 'WARN')) s.log('WARN', LOGGER, message);
  };
  const debug = (message: string): void => {
    if (s.levels.enabled(LOGGER, 'DEBUG')) s.log('DEBUG', LOGGER, message);
  };

  /** A unary handler that turns a thrown or rejected error into INTERNAL instead of a crash. */
  function unary<Req, Res>(
    name: string,
    fn: (req: Req, reply: (err: grpc.ServiceError | null, res?: Res) => void) => void | Promise<void>,
  ): grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
      let answered = false;
      const reply = (err: grpc.ServiceError | null, res?: Res): void => {
        if (answered) return;
        answered = true;
        callback(err, res);
      };
      const fail = (err: unknown): void => {
        warn(`${name} failed: ${err instanceof Error ? err.message : String(err)}`);
        reply(status(codeOf(err), `${name}: ${err instanceof Error ? err.message : String(err)}`));
      };
      try {
        const pending = fn(call.request, reply);
        if (pending !== undefined) pending.catch(fail);
      } catch (err) {
        fail(err);
      }
    };
  }

  /** A server-streaming handler that ends the stream with the failure's status (INTERNAL unless it carries one). */
  function streaming<Req, Res>(name: string, fn: (call: grpc.ServerWritableStream<Req, Res>) => Promise<void>): grpc.handleServerStreamingCall<Req, Res> {
    return (call) => {
      fn(call).then(
        () => call.end(),
        (err: unknown) => {
          warn(`${name} failed: ${err instanceof Error ? err.message : String(err)}`);
          // 'error' is how a grpc-js server stream ends with a status; destroy(err) never sends
          // one, and the client waited for ever (measured: no answer in 3 s, every call).
          call.emit('error', status(codeOf(err), `${name}: ${err instanceof Error ? err.message : String(err)}`));
        },
      );
    };
  }

  /**
   * INVALID_ARGUMENT for a control call naming a key or crawl ID longer than any item may have
   * (`MAX_KEY_LENGTH`): it could change nothing, and journaled it would be as large as the
   * message (up to `maxMessageBytes`, 64 MiB by default), past what one journal record holds.
   */
  const overlong = (name: string, fields: Record<string, string>): grpc.ServiceError | undefined => {
    for (const [field, v] of Object.entries(fields)) {
      if (v.length > MAX_KEY_LENGTH) return status(grpc.status.INVALID_ARGUMENT, `${name}: ${field} has ${v.length} characters, over ${MAX_KEY_LENGTH}: no queue or crawl has one that long`);
    }
    return undefined;
  };

  const controlDone =
    (reply: (err: grpc.ServiceError | null, res?: object) => void, shape: (removed: number) => object) =>
    (err: Error | undefined, removed: number): void => {
      if (err) reply(status(grpc.status.UNAVAILABLE, codeOf(err) === grpc.status.INTERNAL ? `not durable: ${err.message}` : err.message));
      else reply(null, shape(removed));
    };

  return {
    PutURLs(call: grpc.ServerDuplexStream<UrlItemMsg, AckMsg>): void {
      const out = new AckWriter<AckMsg>(call);
      let items: PutItem[] = [];
      let ids: string[] = [];
      let scheduled = false;
      const apply = (): void => {
        scheduled = false;
        const batchItems = items;
        const batchIds = ids;
        items = [];
        ids = [];
        node.put(batchItems, (statuses) => out.send(statuses.map((st, i) => ({ ID: batchIds[i]!, status: st }))));
      };
      call.on('data', (msg: UrlItemMsg) => {
        const { info, known, refetch } = infoOf(msg);
        items.push(putItem(info, known, refetch));
        ids.push(msg.ID !== '' ? msg.ID : (info?.url ?? ''));
        out.owed++;
        if (!scheduled) {
          scheduled = true;
          setImmediate(apply);
        }
      });
      call.on('end', () => {
        // Items still batched are applied first; the ack writer ends once all are answered.
        if (scheduled) setImmediate(() => out.endInput());
        else out.endInput();
      });
      call.on('error', (err) => debug(`PutURLs stream: ${err.message}`));
    },

    PutDiscovered(call: grpc.ServerDuplexStream<BatchMsg, object>): void {
      const out = new AckWriter<object>(call);
      call.on('data', (batch: BatchMsg) => {
        if (out.refused) return; // sent after the refused batch: not applied (the client learns so from the status)
        const id = batch.ID;
        const n = batch.items.length;
        if (n > s.maxBatchItems) {
          // A status, not acks: FAIL would say "resend it" and the client would resend the same
          // batch for ever; SKIPPED would say "never resend" and lose good URLs. A stream error
          // makes clients resend the batch's URLs (StormCrawler fails their tuples and Storm
          // replays them in batches of its configured size) and names the limit in their logs.
          const why = `batch ${JSON.stringify(id)} has ${n} items, over this server's limit of ${s.maxBatchItems} per batch (maxBatchItems); it was not applied, nor anything sent after it on this stream: send its URLs in smaller batches`;
          warn(`PutDiscovered: ${why}`);
          out.refuse(status(grpc.status.RESOURCE_EXHAUSTED, `PutDiscovered: ${why}`));
          return;
        }
        out.owed++;
        const items = batch.items.map((info) => putItem(info, false, 0));
        node.put(items, (statuses) => out.send([{ ID: id, statuses }]));
      });
      call.on('end', () => out.endInput());
      call.on('error', (err) => debug(`PutDiscovered stream: ${err.message}`));
    },

    GetURLs: streaming<GetParamsMsg, UrlInfoMsg>('GetURLs', async (call) => {
      const p = call.request;
      const served = await node.getUrls({
        maxUrlsPerQueue: p.max_urls_per_queue,
        maxQueues: p.max_queues,
        key: p.key,
        leaseMs: p.delay_requestable > 0 ? p.delay_requestable * 1000 : s.defaultLeaseMs,
        // Neither crawlID nor anyCrawlID set: any crawl, as the reference serves it (StormCrawler
        // and scrapy-url-frontier leave it unset unless told a crawl); crawlID '' is DEFAULT.
        crawl: p.item === 'crawlID' ? (p.crawlID ?? '') : undefined,
      });
      for (const u of served) call.write({ url: u.url, key: u.key, metadata: u.meta, crawlID: u.crawl });
      debug(`GetURLs: ${served.length} URL(s) from ${new Set(served.map((u) => `${u.crawl}\n${u.key}`)).size} queue(s) (max ${p.max_queues || 'any'} queues, ${p.max_urls_per_queue || 'any'} per queue)`);
    }),

    ListURLs: streaming<ListUrlMsg, object>('ListURLs', async (call) => {
      const p = call.request;
      let skip = p.start;
      let left = p.size > 0 ? p.size : DEFAULT_PAGE;
      await node.scanUrls(
        p.crawlID,
        { key: p.key, filter: p.filter ?? '', ignoreCase: p.ignoreCase === true },
        skip + left,
        (v) => {
          if (skip > 0) {
            skip--;
            return true;
          }
          call.write(urlItemOf(v));
          return --left > 0;
        },
        p.local === true,
      );
    }),

    GetURLStatus: unary<{ url: string; key: string; crawlID: string }, object>('GetURLStatus', async (req, reply) => {
      // No URL is a bad request, not an unknown URL (NOT_FOUND would read as "not stored yet").
      if (req.url === '') return reply(status(grpc.status.INVALID_ARGUMENT, 'GetURLStatus: url is empty; name the URL to look up'));
      const v = await node.status(req.crawlID, req.url, req.key);
      if (v === undefined) reply(status(grpc.status.NOT_FOUND, `URL ${JSON.stringify(req.url)} is not in crawl ${crawlName(req.crawlID)}`));
      else reply(null, urlItemOf(v));
    }),

    CountURLs: unary<CountUrlMsg, object>('CountURLs', async (req, reply) => {
      reply(null, { value: await node.countUrls(req.crawlID, { key: req.key, filter: req.filter ?? '', ignoreCase: req.ignoreCase === true }, req.local === true) });
    }),

    GetStats: unary<QueueParamsMsg, object>('GetStats', async (req, reply) => {
      const st = await node.stats(req.crawlID, req.key, req.local === true);
      reply(null, {
        size: st.size,
        inProcess: st.inProcess,
        counts: { completed: st.completed, active_queues: st.activeQueues },
        numberOfQueues: st.numberOfQueues,
        crawlID: st.crawlID,
      });
    }),

    ListQueues: unary<PaginationMsg, object>('ListQueues', async (req, reply) => {
      const all = await node.listQueues(req.crawlID, req.include_inactive, req.local === true);
      const size = req.size > 0 ? req.size : DEFAULT_PAGE;
      const values = all.slice(req.start, req.start + size);
      reply(null, { values, total: all.length, start: req.start, size: values.length, crawlID: crawlName(req.crawlID) });
    }),

    ListCrawls: unary<{ local?: boolean }, object>('ListCrawls', async (req, reply) => reply(null, { values: await node.crawls(req.local === true) })),

    ListNodes: unary<object, object>('ListNodes', async (_req, reply) => reply(null, { values: await node.nodes() })),

    DeleteCrawl: unary<{ value: string }, object>('DeleteCrawl', (req, reply) => {
      const bad = overlong('DeleteCrawl', { crawlID: req.value });
      if (bad !== undefined) return reply(bad);
      node.control({ kind: 'deleteCrawl', crawl: crawlName(req.value) }, controlDone(reply, (n) => ({ value: n })));
    }),

    DeleteQueue: unary<QueueParamsMsg, object>('DeleteQueue', (req, reply) => {
      if (req.key === '') return reply(status(grpc.status.INVALID_ARGUMENT, 'DeleteQueue: key is empty; name the queue to delete (DeleteCrawl drops a whole crawl)'));
      const bad = overlong('DeleteQueue', { key: req.key, crawlID: req.crawlID });
      if (bad !== undefined) return reply(bad);
      node.control({ kind: 'deleteQueue', crawl: crawlName(req.crawlID), key: req.key }, controlDone(reply, (n) => ({ value: n })));
    }),

    BlockQueueUntil: unary<{ key: string; time: number; crawlID: string }, object>('BlockQueueUntil', (req, reply) => {
      if (req.key === '') return reply(status(grpc.status.INVALID_ARGUMENT, 'BlockQueueUntil: key is empty; name the queue to block'));
      const bad = overlong('BlockQueueUntil', { key: req.key, crawlID: req.crawlID });
      if (bad !== undefined) return reply(bad);
      node.control({ kind: 'block', crawl: crawlName(req.crawlID), key: req.key, untilMs: req.time * 1000 }, controlDone(reply, () => ({})));
    }),

    SetDelay: unary<{ key: string; delay_requestable: number; crawlID: string }, object>('SetDelay', (req, reply) => {
      const bad = overlong('SetDelay', { key: req.key, crawlID: req.crawlID });
      if (bad !== undefined) return reply(bad);
      node.control(
        { kind: 'delay', crawl: crawlName(req.crawlID), key: req.key, delayMs: req.delay_requestable * 1000 },
        controlDone(reply, () => ({})),
      );
    }),

    SetCrawlLimit: unary<{ key: string; limit: number; crawlID: string }, object>('SetCrawlLimit', async (req, reply) => {
      const crawl = crawlName(req.crawlID);
      if (!(await node.hasQueue(crawl, req.key))) {
        return reply(status(grpc.status.NOT_FOUND, `SetCrawlLimit: no queue ${JSON.stringify(req.key)} in crawl ${crawl}`));
      }
      node.control({ kind: 'limit', crawl, key: req.key, limit: req.limit }, controlDone(reply, () => ({})));
    }),

    SetActive: unary<{ state: boolean }, object>('SetActive', (req, reply) =>
      node.control({ kind: 'active', state: req.state }, controlDone(reply, () => ({}))),
    ),

    GetActive: unary<{ local?: boolean }, object>('GetActive', async (req, reply) => reply(null, { state: await node.isActive(req.local === true) })),

    SetLogLevel: unary<{ package: string; level: LogLevel; local?: boolean }, object>('SetLogLevel', async (req, reply) => {
      s.levels.set(req.package, req.level);
      // Without `local`, every node of a cluster sets it too (the schema's rule).
      if (req.local !== true && node.logLevelEverywhere !== undefined) await node.logLevelEverywhere(req.package, req.level);
      reply(null, {});
    }),

    PurgeURLs: unary<{ key: string; crawlID: string; days: number }, object>('PurgeURLs', (req, reply) => {
      const bad = overlong('PurgeURLs', { key: req.key, crawlID: req.crawlID });
      if (bad !== undefined) return reply(bad);
      node.control(
        { kind: 'purge', crawl: crawlName(req.crawlID), key: req.key, beforeMs: node.now() - req.days * 86_400_000 },
        controlDone(reply, (n) => ({ value: n })),
      );
    }),
  };
}

