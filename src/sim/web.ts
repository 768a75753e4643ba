/**
 * `SimWeb`: the simulated web as a running thing — one node:http server fed by one TCP
 * listener per loopback address, answering every virtual host by its Host header, logging
 * every request, and handing out the ground truth and the politeness verdict.
 *
 * Listening: all listeners share one port (`port`, or one found free on every address when
 * 0), so a URL `http://h3.sim.test:<port>/` plus `resolve('h3.sim.test')` → `127.0.0.x` is
 * all a client needs. A request for a host on an address that does not serve it gets 421, so
 * a fetcher that ignores the resolved IP is caught. Linux routes all of 127.0.0.0/8 to the
 * loopback device; on macOS the extra addresses need `ifconfig lo0 alias 127.0.0.N`.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { brotliCompressSync, constants as zlibConstants, deflateSync, gzip, gzipSync } from 'node:zlib';
import { InvalidArgumentError, InvalidStateError } from '../errors/index.js';
import { booleanField, customField, defineOptions, numberField } from '../options/index.js';
import { SimClock } from './clock.js';
import { notFoundBody, originOf, type RenderContext, renderBait, renderCalendar, renderPage, renderShop } from './content.js';
import {
  BOMB_DECODED_BYTES,
  computeTruth,
  generateWeb,
  HUGE_BODY_BYTES,
  type HostModel,
  isDisallowedKey,
  type PageNode,
  pageKey,
  resolveKey,
  type WebModel,
} from './model.js';
import { resolveSimWebOptions, type SimWebInit, type SimWebOptions } from './options.js';
import { hashParts, hexDigest, Rng } from './random.js';
import { formatPolitenessReport, judge, type PolitenessReport } from './report.js';
import type {
  SimHostile,
  SimHostTruth,
  SimRequest,
  SimResourceKind,
  SimSnapshot,
  SimSoft404Farm,
  SimTrapFamily,
} from './types.js';

/** The web's ground truth, independent of the port (see src/sim/types.ts for page keys). */
export class SimGroundTruth {
  /** Every host, by index. */
  readonly hosts: readonly SimHostTruth[];
  /** The loopback addresses listened on. */
  readonly ips: readonly string[];
  /** Host names served on each address. */
  readonly hostsByIp: ReadonlyMap<string, readonly string[]>;
  /** Minimum start-to-start interval per address, ms. */
  readonly ipIntervalMs: number;
  /** Host names linked from pages that `resolve` rejects (ENOTFOUND). */
  readonly unresolvable: readonly string[];
  /** Every trap family (calendar and session-id traps) of every host. */
  readonly trapFamilies: readonly SimTrapFamily[];
  /** Every soft-404 farm: its linked dead paths and its template body. */
  readonly soft404Farms: readonly SimSoft404Farm[];
  /** Every hostile resource (decompression bomb, oversized body). */
  readonly hostile: readonly SimHostile[];
  /** Σ over hosts of `pages.length`: what a perfect polite crawl fetches with 200. */
  readonly pageCount: number;
  private readonly byName: ReadonlyMap<string, SimHostTruth>;

  /** @internal */
  constructor(
    private readonly model: WebModel,
    ipIntervalMs: number,
    private readonly sessionParam: string,
  ) {
    this.hosts = Object.freeze(computeTruth(model));
    this.byName = new Map(this.hosts.map((h) => [h.name, h]));
    this.ips = Object.freeze([...model.ips]);
    const byIp = new Map<string, string[]>(model.ips.map((ip) => [ip, []]));
    for (const h of this.hosts) byIp.get(h.ip)!.push(h.name);
    this.hostsByIp = byIp;
    this.ipIntervalMs = ipIntervalMs;
    this.unresolvable = Object.freeze([...model.unresolvable]);
    this.trapFamilies = Object.freeze(this.hosts.flatMap((h) => h.traps));
    this.soft404Farms = Object.freeze(
      this.hosts
        .filter((h) => h.soft404Template !== undefined)
        .map((h) => Object.freeze({ host: h.name, paths: h.soft404, template: h.soft404Template! })),
    );
    this.hostile = Object.freeze(this.hosts.flatMap((h) => h.hostile));
    this.pageCount = this.hosts.reduce((s, h) => s + h.pages.length, 0);
  }

  /** The truth of one host, by name (case-insensitive). */
  host(name: string): SimHostTruth | undefined {
    return this.byName.get(normalizeHostName(name));
  }

  /** Required start-to-start interval of a host, ms (max of the configured minimum and its Crawl-delay). */
  requiredIntervalMs(host: string): number {
    const h = this.host(host);
    if (!h) throw new InvalidArgumentError(`SimGroundTruth.requiredIntervalMs: unknown host ${JSON.stringify(host)}`);
    return h.requiredIntervalMs;
  }

  /**
   * Whether the host's robots.txt forbids the agent token a path (query included; tracking and
   * session parameters are ignored). On a host whose robots.txt answers 5xx, everything but
   * /robots.txt is forbidden.
   */
  isDisallowed(host: string, pathAndQuery: string): boolean {
    const h = this.model.byName.get(normalizeHostName(host));
    if (!h) return false;
    return isDisallowedKey(h, pageKey(pathAndQuery, this.sessionParam));
  }

  /** The trap family a path belongs to, if any. */
  trapOf(host: string, pathAndQuery: string): SimTrapFamily | undefined {
    const h = this.host(host);
    const key = pageKey(pathAndQuery, this.sessionParam);
    return h?.traps.find((t) => key.startsWith(t.prefix));
  }

  /** The change rates of a content page (per simulated hour), if it is one. */
  changeRate(host: string, pathAndQuery: string): { readonly perHour: number; readonly cosmeticPerHour: number } | undefined {
    const h = this.model.byName.get(normalizeHostName(host));
    const r = h?.resources.get(pageKey(pathAndQuery, this.sessionParam));
    if (r?.kind !== 'page') return undefined;
    return { perHour: r.page.change.ratePerHour, cosmeticPerHour: r.page.cosmetic.ratePerHour };
  }
}

/** Options of `SimWeb.politenessReport`. */
export interface PolitenessReportOptions {
  /**
   * Required interval per host, ms. Default: the ground truth (`requiredIntervalMs`, which
   * includes Crawl-delay) for requests after the host's robots.txt was answered, and the
   * `hostIntervalMs` option before (a crawler cannot obey a Crawl-delay it has not read).
   */
  readonly hostIntervalMs: number | ((host: string) => number) | undefined;
  /** Required interval per address, ms; default the `ipIntervalMs` option. */
  readonly ipIntervalMs: number | ((ip: string) => number) | undefined;
  /** Slack subtracted from every required gap, ms (transport jitter); default 5. */
  readonly toleranceMs: number;
  /** Whether robots.txt requests count for the interval checks; default true. */
  readonly countRobots: boolean;
  /** Judge only log entries with `seq` ≥ this; default 0. */
  readonly sinceSeq: number;
}

const intervalField = <A extends string>(what: string) =>
  customField<number | ((x: A) => number) | undefined>(
    `a number >= 0 or a function of the ${what}`,
    (v): v is number | ((x: A) => number) => typeof v === 'function' || (typeof v === 'number' && Number.isFinite(v) && v >= 0),
  );

const resolveReportOptions = defineOptions<PolitenessReportOptions>('PolitenessReportOptions', {
  hostIntervalMs: intervalField<string>('host name'),
  ipIntervalMs: intervalField<string>('address'),
  toleranceMs: numberField({ min: 0, default: 5 }),
  countRobots: booleanField(true),
  sinceSeq: numberField({ integer: true, min: 0, default: 0 }),
});

function normalizeHostName(name: string): string {
  let h = name.toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/** Host header → name without port or trailing dot. */
function hostFromHeader(header: string | undefined): string {
  if (!header) return '';
  let h = header.trim();
  if (h.startsWith('[')) return h.toLowerCase(); // IPv6 literal: never a sim host
  const colon = h.lastIndexOf(':');
  if (colon >= 0) h = h.slice(0, colon);
  return normalizeHostName(h);
}

function localIp(socket: Socket): string {
  const a = socket.localAddress ?? '';
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}

/** What the server decided to answer. */
interface Reply {
  readonly kind: SimResourceKind;
  readonly trap?: string | undefined;
  readonly status: number;
  readonly contentType?: string;
  readonly body?: string | Buffer;
  /** The body is already gzip-encoded (the decompression bomb). */
  readonly preEncoded?: boolean;
  readonly stream?: { readonly prefix: Buffer; readonly fill: Buffer; readonly total: number };
  readonly etag?: string;
  readonly lastModifiedMs?: number;
  readonly location?: string;
  readonly retry?: { readonly sec: number; readonly form: 'seconds' | 'date' };
  readonly reset?: boolean;
  readonly version?: number;
  readonly cosmetic?: number;
}

interface HostState {
  robots: number;
  content: number;
  readonly attempts: Map<string, number>;
}

/** Period of the event-loop stall watch, ms. */
const STALL_TICK_MS = 2;
/**
 * How long after a stall a request is still presumed to have arrived during it, ms: bytes that
 * came in during a stall are read within the next loop turn or two (a fresh connection is
 * accepted in one turn and read in the next), and a turn takes a few ms on a busy machine.
 */
const STALL_WINDOW_MS = 10;

const hex32 = (x: number): string => x.toString(16).padStart(8, '0');

const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';
const HUGE_ROBOTS_BYTES = 5 * 1024 * 1024;
const BINARY_ROBOTS_BYTES = 64 * 1024;

let bombBody: Buffer | undefined;
let bombPending: Promise<Buffer> | undefined;
/**
 * Builds the gzip of 32 MiB of spaces (about 32 KiB) once per process, on the zlib thread
 * pool: compressing it inline would stall the event loop for long enough to bunch the
 * arrival times of other requests and fake politeness violations.
 */
function prepareBomb(): Promise<Buffer> {
  bombPending ??= new Promise<Buffer>((resolve, reject) => {
    gzip(Buffer.alloc(BOMB_DECODED_BYTES, 0x20), { level: 9 }, (err, out) => {
      if (err) {
        bombPending = undefined;
        reject(err);
        return;
      }
      bombBody = out;
      resolve(out);
    });
  });
  return bombPending;
}
function bomb(): Buffer {
  bombBody ??= gzipSync(Buffer.alloc(BOMB_DECODED_BYTES, 0x20), { level: 9 });
  return bombBody;
}

const HUGE_FILL = Buffer.from('<p>lorem ipsum dolor sit amet, consectetur adipiscing elit</p>\n'.repeat(1024));
const ROBOTS_FILL = Buffer.from('# padding: this robots.txt is deliberately far larger than any parser should read\n'.repeat(800));

/** Picks a content coding from Accept-Encoding (gzip preferred on ties). */
function negotiate(accept: string | undefined): 'gzip' | 'br' | 'deflate' | undefined {
  if (!accept) return undefined;
  let best: 'gzip' | 'br' | 'deflate' | undefined;
  let bestQ = 0;
  const rank = { gzip: 3, br: 2, deflate: 1 } as const;
  for (const part of accept.split(',')) {
    const [rawName, ...params] = part.trim().split(';');
    const name = (rawName ?? '').trim().toLowerCase();
    if (name !== 'gzip' && name !== 'br' && name !== 'deflate') continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!(q > 0)) continue;
    if (q > bestQ || (q === bestQ && best !== undefined && rank[name] > rank[best])) {
      best = name;
      bestQ = q;
    }
  }
  return best;
}

function encode(body: Buffer, coding: 'gzip' | 'br' | 'deflate'): Buffer {
  switch (coding) {
    case 'gzip':
      return gzipSync(body);
    case 'deflate':
      return deflateSync(body);
    default:
      return brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } });
  }
}

/** Whether a conditional request matches the current validators (RFC 9110 §13.2.2 order). */
function notModified(req: IncomingMessage, etag: string | undefined, lastModifiedMs: number | undefined): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (etag === undefined) return false;
    return inm.split(',').some((t) => {
      const tag = t.trim();
      return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
    });
  }
  const ims = req.headers['if-modified-since'];
  if (ims === undefined || lastModifiedMs === undefined) return false;
  const since = Date.parse(ims);
  return Number.isFinite(since) && Math.floor(lastModifiedMs / 1000) * 1000 <= since;
}

/**
 * The simulated web. Create with `createSimWeb`, then `await start()`; `close()` stops every
 * listener and socket. Ground truth (`truth`) is available before `start()`; anything that
 * writes a URL needs the port, so before `start()` it needs an explicit `port` option.
 */
export class SimWeb {
  /** The validated options. */
  readonly options: Readonly<SimWebOptions>;
  /** Ground truth for tests. */
  readonly truth: SimGroundTruth;
  private readonly model: WebModel;
  private readonly manualClock: SimClock | undefined;
  private readonly simNow: () => number;
  private readonly http: HttpServer;
  private listeners: TcpServer[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  /** Finishers of responses not yet ended, so close() can settle their log entries. */
  private readonly open = new Set<() => void>();
  private readonly entries: SimRequest[] = [];
  private readonly inFlightByHost = new Map<string, number>();
  private readonly maxInFlightByHost = new Map<string, number>();
  private readonly state = new Map<string, HostState>();
  /** Event-loop stall watch (see `arrivalSlack`). */
  private ticker: ReturnType<typeof setInterval> | undefined;
  private lastTickMs = 0;
  private stallStartMs = 0;
  private stallEndMs = -Infinity;
  private boundPort = 0;
  private nextSeq = 0;
  private phase: 'new' | 'starting' | 'started' | 'closed' = 'new';

  /** Use `createSimWeb`. */
  constructor(options?: SimWebInit | null) {
    // The mix field validates a partial SimMix itself.
    this.options = resolveSimWebOptions(options as Partial<SimWebOptions> | null | undefined);
    const o = this.options;
    this.model = generateWeb(o);
    this.truth = new SimGroundTruth(this.model, o.ipIntervalMs, o.mix.sessionParam);
    if (o.clock) {
      this.simNow = o.clock;
    } else {
      const clock = new SimClock(o.epochMs);
      this.manualClock = clock;
      this.simNow = () => clock.now();
    }
    this.http = createServer({ keepAliveTimeout: o.keepAliveMs }, (req, res) => this.handle(req, res));
  }

  /** The port every listener uses (the `port` option until `start()` binds one). */
  get port(): number {
    return this.boundPort || this.options.port;
  }

  /** Whether the listeners are up. */
  get listening(): boolean {
    return this.phase === 'started';
  }

  /** The loopback addresses served. */
  get ips(): readonly string[] {
    return this.truth.ips;
  }

  /** Binds one listener per address. Resolves when all listen; rejects (leaving nothing open) otherwise. */
  async start(): Promise<this> {
    if (this.phase !== 'new') throw new InvalidStateError(`SimWeb.start: the web is ${this.phase}, expected a new one`);
    this.phase = 'starting';
    try {
      if (this.truth.hostile.length > 0) await prepareBomb();
      const attempts = this.options.port === 0 ? 20 : 1;
      for (let attempt = 1; ; attempt++) {
        try {
          await this.listenAll(this.options.port);
          break;
        } catch (err) {
          await this.closeListeners();
          const code = (err as { code?: unknown }).code;
          if (code !== 'EADDRINUSE' || attempt >= attempts) throw err;
        }
      }
    } catch (err) {
      this.phase = 'new';
      throw err;
    }
    this.phase = 'started';
    this.watchStalls();
    return this;
  }

  /**
   * Arrival times are read by the event loop, so a loop stall (a long callback of the sim or,
   * in tests, of the crawler sharing the process) makes requests that arrived during it look
   * as if they arrived together at its end. A 2 ms ticker notices stalls; a request seen within
   * `STALL_WINDOW_MS` after one gets the stall's length (plus that wait) as `arrivalSlackMs`.
   */
  private watchStalls(): void {
    const now = this.options.now;
    this.lastTickMs = now();
    this.ticker = setInterval(() => {
      const t = now();
      if (t - this.lastTickMs > STALL_TICK_MS + 3) {
        // Stalls in quick succession count as one: a request that came in during the first
        // may not be read before the second is over.
        if (this.lastTickMs - this.stallEndMs > STALL_WINDOW_MS) this.stallStartMs = this.lastTickMs;
        this.stallEndMs = t;
      }
      this.lastTickMs = t;
    }, STALL_TICK_MS);
    this.ticker.unref();
  }

  private arrivalSlack(t: number): number {
    if (!this.ticker) return 0;
    // A stall still in progress (the ticker has not run for a while) …
    const pending = t - this.lastTickMs - STALL_TICK_MS;
    const stalling = pending > 3;
    // … or one that ended moments ago (possibly continued by the current one).
    const recent = t - this.stallEndMs <= STALL_WINDOW_MS || (stalling && this.lastTickMs - this.stallEndMs <= STALL_WINDOW_MS);
    if (recent) return Math.max(0, t - this.stallStartMs - STALL_TICK_MS);
    return stalling ? pending : 0;
  }

  private async listenAll(port: number): Promise<void> {
    let chosen = port;
    for (const ip of this.truth.ips) {
      const server = createTcpServer((socket) => this.adopt(socket));
      this.listeners.push(server);
      chosen = await new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: ip, port: chosen, exclusive: true }, () => {
          server.off('error', reject);
          const addr = server.address();
          resolve(typeof addr === 'object' && addr ? addr.port : chosen);
        });
      });
    }
    this.boundPort = chosen;
  }

  private adopt(socket: Socket): void {
    if (this.phase === 'closed') {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    this.http.emit('connection', socket);
  }

  private async closeListeners(): Promise<void> {
    const servers = this.listeners;
    this.listeners = [];
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            if (!s.listening) {
              resolve();
              return;
            }
            s.close(() => resolve());
          }),
      ),
    );
  }

  /** Stops listening, destroys every open socket and pending delayed response. Idempotent. */
  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const closing = this.closeListeners();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    // Responses cut short end now in the log (their 'close' events would come a tick later).
    for (const finish of [...this.open]) finish();
    await closing;
  }

  /** `await using sim = await createSimWeb(…).start()` closes it at scope end. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * The sim's DNS: the address serving a host name (case-insensitive, trailing dot allowed).
   * Rejects unknown names with an error whose `code` is `ENOTFOUND`, like node:dns.
   */
  readonly resolve = async (hostname: string): Promise<string> => {
    const ip = this.ipOf(hostname);
    if (ip !== undefined) return ip;
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
  };

  /**
   * Every host name with its address, as a plain object: for a crawler in another process
   * (which can also rebuild the same web, unstarted, from the same options and port).
   */
  dnsTable(): Record<string, string> {
    return Object.fromEntries(this.truth.hosts.map((h) => [h.name, h.ip]));
  }

  /** The address serving a host name, or undefined. */
  ipOf(hostname: string): string | undefined {
    return this.model.byName.get(normalizeHostName(hostname))?.ip;
  }

  private requirePort(what: string): number {
    const port = this.port;
    if (port === 0) throw new InvalidStateError(`SimWeb.${what}: the port is not known yet; call start() first or pass a port option`);
    return port;
  }

  private context(port: number): RenderContext {
    return {
      seed: this.options.seed,
      port,
      hosts: this.model.hosts,
      unresolvable: this.model.unresolvable,
      epochMs: this.options.epochMs,
      sessionParam: this.options.mix.sessionParam,
    };
  }

  /** `http://<host>:<port>`. */
  origin(host: string): string {
    const h = this.model.byName.get(normalizeHostName(host));
    if (!h) throw new InvalidArgumentError(`SimWeb.origin: unknown host ${JSON.stringify(host)}`);
    return originOf(this.context(this.requirePort('origin')), h.index);
  }

  /** A URL of a page key on a host. */
  url(host: string, path: string): string {
    if (!path.startsWith('/')) throw new InvalidArgumentError(`SimWeb.url: expected a path starting with "/", received ${JSON.stringify(path)}`);
    return this.origin(host) + path;
  }

  /** Every host's root URL (the seeds the ground truth assumes). */
  seeds(): string[] {
    return this.truth.hosts.map((h) => this.url(h.name, '/'));
  }

  /** URLs of the ground-truth pages of one host, or of every host. */
  pageUrls(host?: string): string[] {
    const hosts = host === undefined ? this.truth.hosts : [this.truth.host(host)].filter((h): h is SimHostTruth => h !== undefined);
    return hosts.flatMap((h) => h.pages.map((p) => this.url(h.name, p)));
  }

  /** Simulated time, epoch ms. */
  now(): number {
    return this.simNow();
  }

  /** Advances the built-in simulated clock (not available with a `clock` option). */
  advance(ms: number): void {
    if (!this.manualClock) throw new InvalidStateError('SimWeb.advance: the web runs on an injected clock; advance that clock instead');
    this.manualClock.advance(ms);
  }

  private locate(url: string): { host: HostModel; key: string } {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidArgumentError(`SimWeb: expected an absolute URL, received ${JSON.stringify(url)}`);
    }
    const host = this.model.byName.get(normalizeHostName(parsed.hostname));
    if (!host) throw new InvalidArgumentError(`SimWeb: ${JSON.stringify(url)} is not on a simulated host`);
    return { host, key: pageKey(parsed.pathname + parsed.search, this.options.mix.sessionParam) };
  }

  private pageSnapshot(host: HostModel, page: PageNode, simMs: number, port: number): SimSnapshot {
    const offset = simMs - this.options.epochMs;
    const version = page.change.countAt(offset);
    const cosmetic = page.cosmetic.countAt(offset);
    const body = renderPage(this.context(port), host, page, version, cosmetic);
    // The body is a pure function of these inputs, so hashing them is as good as hashing it
    // (and a 5 KiB body costs far more to hash than its name does).
    const id = [host.name, page.path, version, cosmetic, port] as const;
    const changed = Math.max(
      page.createdOffsetMs,
      version > 0 ? (page.change.timeOf(version) as number) : -Infinity,
      cosmetic > 0 ? (page.cosmetic.timeOf(cosmetic) as number) : -Infinity,
    );
    return Object.freeze({
      host: host.name,
      path: page.path,
      version,
      cosmetic,
      body,
      etag: `"${hex32(hashParts(this.options.seed, 'etag', ...id))}${hex32(hashParts(this.options.seed, 'etag2', ...id))}"`,
      lastModifiedMs: this.options.epochMs + changed,
      contentType: HTML,
    });
  }

  /**
   * What a content page serves at a simulated instant (default: now), ignoring scripted
   * errors and throttling: its version, ad revision, body, ETag and Last-Modified.
   */
  snapshot(url: string, simMs: number = this.simNow()): SimSnapshot {
    const { host, key } = this.locate(url);
    const r = host.resources.get(key);
    if (r?.kind !== 'page') throw new InvalidArgumentError(`SimWeb.snapshot: ${JSON.stringify(url)} is not a content page`);
    return this.pageSnapshot(host, r.page, simMs, this.requirePort('snapshot'));
  }

  /** A page's version (real changes) and ad revision at a simulated instant; no port needed. */
  versionAt(url: string, simMs: number = this.simNow()): { readonly version: number; readonly cosmetic: number } {
    const { host, key } = this.locate(url);
    const r = host.resources.get(key);
    if (r?.kind !== 'page') throw new InvalidArgumentError(`SimWeb.versionAt: ${JSON.stringify(url)} is not a content page`);
    const offset = simMs - this.options.epochMs;
    return { version: r.page.change.countAt(offset), cosmetic: r.page.cosmetic.countAt(offset) };
  }

  /** The request log, in arrival order (live: entries finish as responses end). */
  get log(): readonly SimRequest[] {
    return this.entries;
  }

  /** Empties the log (in-flight counts are kept). */
  clearLog(): void {
    this.entries.length = 0;
  }

  /** Requests to a host in flight right now (server side). */
  inFlight(host: string): number {
    return this.inFlightByHost.get(normalizeHostName(host)) ?? 0;
  }

  /** The most requests ever in flight at once to a host. */
  maxInFlight(host: string): number {
    return this.maxInFlightByHost.get(normalizeHostName(host)) ?? 0;
  }

  /** Judges the log against the politeness rules (defaults: the ground truth). */
  politenessReport(options?: Partial<PolitenessReportOptions> | null): PolitenessReport {
    const o = resolveReportOptions(options);
    const hostMs = o.hostIntervalMs;
    const ipMs = o.ipIntervalMs;
    const log = o.sinceSeq > 0 ? this.entries.filter((e) => e.seq >= o.sinceSeq) : this.entries;
    return judge(log, {
      hostIntervalMs: (host, robotsKnown) => {
        if (typeof hostMs === 'function') return hostMs(host);
        if (hostMs !== undefined) return hostMs;
        // Crawl-delay binds from the moment robots.txt has been answered.
        return robotsKnown ? this.truth.host(host)?.requiredIntervalMs ?? this.options.hostIntervalMs : this.options.hostIntervalMs;
      },
      ipIntervalMs: (ip) => (typeof ipMs === 'function' ? ipMs(ip) : ipMs ?? this.options.ipIntervalMs),
      isDisallowed: (host, key) => {
        const h = this.model.byName.get(host);
        return h ? isDisallowedKey(h, key) : false;
      },
      isKnownHost: (host) => this.model.byName.has(host),
      toleranceMs: o.toleranceMs,
      countRobots: o.countRobots,
    });
  }

  /** Counts for dashboards and the CLI. */
  stats(): { readonly requests: number; readonly byStatus: Readonly<Record<number, number>>; readonly byKind: Readonly<Record<string, number>> } {
    const byStatus: Record<number, number> = {};
    const byKind: Record<string, number> = {};
    for (const e of this.entries) {
      byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
      byKind[e.kind] = (byKind[e.kind] ?? 0) + 1;
    }
    return { requests: this.entries.length, byStatus, byKind };
  }

  /** A short multi-line description of the web and its traffic, for a terminal. */
  summary(): string {
    const o = this.options;
    const t = this.truth;
    const count = (pred: (h: SimHostTruth) => boolean): number => t.hosts.filter(pred).length;
    const modes = new Map<string, number>();
    for (const h of t.hosts) modes.set(h.robotsMode, (modes.get(h.robotsMode) ?? 0) + 1);
    const ips = t.ips.length > 1 ? `${t.ips[0]}–${t.ips[t.ips.length - 1]}` : t.ips[0];
    const s = this.stats();
    const lines = [
      `meguri simulated web: seed ${o.seed}, ${o.hosts} hosts (h0…h${o.hosts - 1}.${o.domain}) on ${t.ips.length} addresses (${ips}), port ${this.port || 'not bound'}`,
      `  pages: ${o.hosts * o.pagesPerHost} generated, ${t.pageCount} reachable and allowed; ` +
        `${t.hosts.reduce((n, h) => n + h.disallowed.length, 0)} disallowed links, ${t.trapFamilies.length} trap families, ` +
        `${t.soft404Farms.length} soft-404 farms, ${t.hostile.length} hostile resources, ${t.unresolvable.length} unresolvable hosts`,
      `  robots.txt: ${[...modes].map(([m, n]) => `${m} ${n}`).join(', ')}; agent groups ${count((h) => h.rules?.agentSpecific === true)}, ` +
        `crawl-delay ${count((h) => h.rules?.crawlDelaySec !== undefined)}`,
      `  behaviours: slow ${count((h) => h.features.slowMs > 0)}, throttled ${count((h) => h.features.throttled)}, ` +
        `erroring ${count((h) => h.features.erroring)}, redirects ${count((h) => h.features.redirects)}`,
      `  politeness: host interval >= ${o.hostIntervalMs} ms (more where Crawl-delay says so), IP interval >= ${o.ipIntervalMs} ms`,
      `  traffic: ${s.requests} requests; by status ${Object.entries(s.byStatus).map(([k, v]) => `${k}:${v}`).join(' ') || '-'}`,
    ];
    return lines.join('\n');
  }

  /** The politeness verdict formatted for a terminal. */
  reportSummary(options?: Partial<PolitenessReportOptions> | null): string {
    return formatPolitenessReport(this.politenessReport(options));
  }

  private hostState(name: string): HostState {
    let s = this.state.get(name);
    if (!s) {
      s = { robots: 0, content: 0, attempts: new Map() };
      this.state.set(name, s);
    }
    return s;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const o = this.options;
    const arrivedAtMs = o.now();
    const simTimeMs = this.simNow();
    const ip = localIp(req.socket);
    const host = hostFromHeader(req.headers.host);
    const target = req.url ?? '/';
    const key = pageKey(target, o.mix.sessionParam);
    const inFlight = (this.inFlightByHost.get(host) ?? 0) + 1;
    this.inFlightByHost.set(host, inFlight);
    if (inFlight > (this.maxInFlightByHost.get(host) ?? 0)) this.maxInFlightByHost.set(host, inFlight);
    const reply = this.decide(req, host, ip, key, target, simTimeMs);
    const ua = req.headers['user-agent'];
    const entry: SimRequest = {
      seq: this.nextSeq++,
      method: req.method ?? 'GET',
      host,
      ip,
      target,
      key,
      kind: reply.kind,
      trap: reply.trap,
      arrivedAtMs,
      simTimeMs,
      conditional: req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined,
      userAgent: typeof ua === 'string' ? ua : undefined,
      inFlightAtArrival: inFlight,
      arrivalSlackMs: this.arrivalSlack(arrivedAtMs),
      status: 0,
      finishedAtMs: undefined,
      retryAfter: undefined,
      retryNotBeforeMs: undefined,
      version: reply.version,
      cosmetic: reply.cosmetic,
    };
    this.entries.push(entry);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      this.open.delete(finish);
      entry.finishedAtMs = o.now();
      this.inFlightByHost.set(host, (this.inFlightByHost.get(host) ?? 1) - 1);
      o.onRequest?.(entry);
    };
    this.open.add(finish);
    res.once('finish', finish);
    res.once('close', finish);
    const delay = this.model.byName.get(host)?.features.slowMs ?? 0;
    if (delay > 0 && reply.kind !== 'misrouted') {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.send(req, res, entry, reply);
      }, delay);
      this.timers.add(timer);
    } else {
      this.send(req, res, entry, reply);
    }
  }

  private decide(req: IncomingMessage, hostName: string, ip: string, key: string, target: string, simMs: number): Reply {
    const host = this.model.byName.get(hostName);
    if (!host) return { kind: 'unknown-host', status: 421, contentType: TEXT, body: `no simulated host ${hostName || '(none)'}\n` };
    if (host.ip !== ip) return { kind: 'misrouted', status: 421, contentType: TEXT, body: `${hostName} is served on ${host.ip}, not ${ip}\n` };
    if (req.method !== 'GET' && req.method !== 'HEAD') return { kind: 'bad-method', status: 405, contentType: TEXT, body: 'GET or HEAD only\n' };
    const state = this.hostState(hostName);
    const resolution = key === '/robots.txt' ? ({ kind: 'robots' } as const) : resolveKey(host, key);
    if (resolution.kind === 'robots') return this.robotsReply(host, state, key);

    const ordinal = state.content++;
    const burst = host.bursts.find((b) => ordinal >= b.atRequest && ordinal < b.atRequest + b.length);
    const port = this.port;
    const ctx = this.context(port);
    const trap = resolution.kind === 'calendar' ? host.calendar?.id : resolution.kind === 'session' ? host.session?.id : undefined;
    if (burst) {
      return {
        kind: resolution.kind,
        trap,
        status: burst.status,
        contentType: TEXT,
        body: burst.status === 429 ? 'Too Many Requests: slow down\n' : 'Service Unavailable: come back later\n',
        retry: { sec: burst.retryAfterSec, form: burst.form },
      };
    }
    switch (resolution.kind) {
      case 'page': {
        const page = resolution.page;
        if (page.failFirst > 0) {
          const attempt = (state.attempts.get(key) ?? 0) + 1;
          state.attempts.set(key, attempt);
          if (attempt <= page.failFirst) {
            if (page.failStatus === 0) return { kind: 'page', status: 0, reset: true };
            return { kind: 'page', status: page.failStatus, contentType: TEXT, body: `error ${page.failStatus}\n` };
          }
        }
        const snap = this.pageSnapshot(host, page, simMs, port);
        return {
          kind: 'page',
          status: 200,
          contentType: HTML,
          body: snap.body,
          etag: snap.etag,
          lastModifiedMs: snap.lastModifiedMs,
          version: snap.version,
          cosmetic: snap.cosmetic,
        };
      }
      case 'redirect':
      case 'loop': {
        const r = resolution.redirect;
        const location = r.toHost === hostName ? r.toPath : originOf(ctx, this.model.byName.get(r.toHost)!.index) + r.toPath;
        return { kind: resolution.kind, status: r.status, contentType: TEXT, body: `moved to ${location}\n`, location };
      }
      case 'bait':
        return this.htmlReply('bait', renderBait(ctx, host, key));
      case 'calendar':
        return { ...this.htmlReply('calendar', renderCalendar(ctx, host, resolution.year, resolution.month)), trap };
      case 'session': {
        const sid = new URLSearchParams(target.includes('?') ? target.slice(target.indexOf('?') + 1) : '').get(this.options.mix.sessionParam) ?? '';
        return { ...this.htmlReply('session', renderShop(ctx, host, resolution.item, sid)), trap };
      }
      case 'soft404':
        return this.htmlReply('soft404', host.soft404Template!);
      case 'hostile':
        return resolution.hostile.kind === 'bomb'
          ? { kind: 'hostile', status: 200, contentType: HTML, body: bomb(), preEncoded: true }
          : {
              kind: 'hostile',
              status: 200,
              contentType: HTML,
              stream: { prefix: Buffer.from('<!doctype html>\n<html><body>\n'), fill: HUGE_FILL, total: HUGE_BODY_BYTES },
            };
      case 'missing':
        return { kind: 'missing', status: 404, contentType: HTML, body: notFoundBody(key) };
    }
  }

  private htmlReply(kind: SimResourceKind, body: string): Reply {
    return { kind, status: 200, contentType: HTML, body, etag: `"${hexDigest(body)}"` };
  }

  private robotsReply(host: HostModel, state: HostState, key: string): Reply {
    const n = state.robots++;
    const text = host.robotsText ?? '';
    const ok: Reply = { kind: 'robots', status: 200, contentType: TEXT, body: text };
    switch (host.robotsMode) {
      case 'normal':
        return ok;
      case 'missing':
        return { kind: 'robots', status: 404, contentType: HTML, body: notFoundBody(key) };
      case 'error':
        return { kind: 'robots', status: 500, contentType: TEXT, body: 'internal server error\n' };
      case 'flaky': {
        if (key !== '/robots.txt' || n >= this.options.mix.robotsFlakyFailures) return ok;
        const sec = this.options.mix.robotsFlakyRetryAfterSeconds;
        return { kind: 'robots', status: 503, contentType: TEXT, body: 'temporarily unavailable\n', ...(sec > 0 ? { retry: { sec, form: 'seconds' as const } } : {}) };
      }
      case 'redirect':
        return key === '/robots.txt'
          ? { kind: 'robots', status: 301, contentType: TEXT, body: 'moved\n', location: '/robots-main.txt' }
          : ok;
      case 'binary': {
        const rng = new Rng(this.options.seed, 'binary-robots', host.name);
        const bytes = Buffer.alloc(BINARY_ROBOTS_BYTES);
        // Bytes from 0x80–0xff and the low control range: no letter, colon or newline, so no rule.
        for (let i = 0; i < bytes.length; i++) bytes[i] = rng.chance(0.9) ? 0x80 + rng.int(128) : rng.int(9);
        return { kind: 'robots', status: 200, contentType: 'application/octet-stream', body: bytes };
      }
      case 'huge':
        return {
          kind: 'robots',
          status: 200,
          contentType: TEXT,
          stream: { prefix: Buffer.from(`${text}\n`), fill: ROBOTS_FILL, total: HUGE_ROBOTS_BYTES },
        };
    }
  }

  private send(req: IncomingMessage, res: ServerResponse, entry: SimRequest, reply: Reply): void {
    if (res.destroyed || res.headersSent) return;
    if (reply.reset) {
      entry.status = 0;
      req.socket.destroy();
      return;
    }
    const o = this.options;
    const wall = o.wallClock();
    const headers: Record<string, string | number> = { Date: new Date(wall).toUTCString(), Server: 'meguri-sim' };
    if (reply.contentType) headers['Content-Type'] = reply.contentType;
    if (reply.location) headers['Location'] = reply.location;
    if (reply.retry) {
      const sentAt = o.now();
      if (reply.retry.form === 'date') {
        const dateMs = Math.ceil((wall + reply.retry.sec * 1000) / 1000) * 1000;
        entry.retryAfter = new Date(dateMs).toUTCString();
        entry.retryNotBeforeMs = sentAt + (dateMs - wall);
      } else {
        entry.retryAfter = String(reply.retry.sec);
        entry.retryNotBeforeMs = sentAt + reply.retry.sec * 1000;
      }
      headers['Retry-After'] = entry.retryAfter;
    }
    if (reply.etag) headers['ETag'] = reply.etag;
    if (reply.lastModifiedMs !== undefined) headers['Last-Modified'] = new Date(reply.lastModifiedMs).toUTCString();
    let status = reply.status;
    if (status === 200 && (reply.etag !== undefined || reply.lastModifiedMs !== undefined) && notModified(req, reply.etag, reply.lastModifiedMs)) {
      status = 304;
    }
    entry.status = status;
    const head = req.method === 'HEAD';
    if (status === 304) {
      delete headers['Content-Type'];
      res.writeHead(304, headers);
      res.end();
      return;
    }
    if (reply.stream) {
      headers['Content-Length'] = reply.stream.total;
      res.writeHead(status, headers);
      if (head) res.end();
      else this.pump(res, reply.stream.prefix, reply.stream.fill, reply.stream.total);
      return;
    }
    let body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body ?? Buffer.alloc(0);
    if (reply.preEncoded) {
      headers['Content-Encoding'] = 'gzip';
    } else if (o.compress && body.length > 0 && reply.contentType?.startsWith('text/')) {
      headers['Vary'] = 'Accept-Encoding';
      const coding = negotiate(req.headers['accept-encoding']);
      if (coding) {
        body = encode(body, coding);
        headers['Content-Encoding'] = coding;
      }
    }
    headers['Content-Length'] = body.length;
    res.writeHead(status, headers);
    res.end(head ? undefined : body);
  }

  /** Writes `total` bytes (prefix, then the fill repeated) with backpressure; stops if the client leaves. */
  private pump(res: ServerResponse, prefix: Buffer, fill: Buffer, total: number): void {
    let sent = 0;
    const step = (): void => {
      while (sent < total) {
        if (res.destroyed) return;
        const source = sent < prefix.length ? prefix.subarray(sent) : fill;
        const chunk = source.subarray(0, Math.min(source.length, total - sent));
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', step);
          return;
        }
      }
      res.end();
    };
    step();
  }
}

/**
 * Builds a simulated web from a seed and options (validated; see `SimWebOptions`). The web is
 * generated immediately; call `start()` to listen.
 */
export function createSimWeb(options?: SimWebInit | null): SimWeb {
  return new SimWeb(options);
}
