/**
 * A real redis-server per test (never a mock): a random loopback port, a temp directory, no RDB
 * snapshots, AOF on or off, killed on teardown. `restart()` stops and starts the same server on
 * the same port and directory, for "Redis goes away" tests (with AOF on it comes back with its
 * data). A machine without redis-server fails here with instructions, never skips.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { type Socket, connect as tcpConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { Engine, type EngineOptions } from '../../src/index.js';
import { crawlSalt, slotOf } from '../../src/cluster/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';

const CANDIDATES = [process.env['REDIS_SERVER'], '/usr/bin/redis-server', '/usr/local/bin/redis-server'];

/** The redis-server binary, or an Error telling how to install it. */
export function redisServerPath(): string {
  for (const c of CANDIDATES) if (c && existsSync(c)) return c;
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const found = which.stdout.trim();
  if (which.status === 0 && found !== '') return found;
  throw new Error(
    'redis-server not found: the cluster tests start real redis-server processes. Install it with ' +
      '`bash scripts/install-redis.sh` (Debian: `apt-get install redis-server`), or set REDIS_SERVER=/path/to/redis-server.',
  );
}

/** A free TCP port on 127.0.0.1 (bound, read and released; the server binds it right after). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServerOptions {
  /** AOF on (`appendfsync always` when 'always'); default off. */
  readonly appendonly?: boolean | 'always';
  /** More redis-server arguments (e.g. `--maxmemory-policy allkeys-lru`). */
  readonly args?: readonly string[];
}

/** One redis-server child process. */
export class RedisServer {
  readonly dir: string;
  port = 0;
  private child: ChildProcess | undefined;
  private readonly bin: string;

  constructor(private readonly options: RedisServerOptions = {}) {
    this.bin = redisServerPath();
    this.dir = mkdtempSync(join(tmpdir(), 'meguri-redis-'));
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (on a new random port the first time) and waits until it answers PING. */
  async start(): Promise<this> {
    if (this.port === 0) this.port = await freePort();
    const aof = this.options.appendonly;
    const args = [
      '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '',
      '--appendonly', aof ? 'yes' : 'no', '--daemonize', 'no', '--logfile', '', '--protected-mode', 'no',
    ];
    if (aof === 'always') args.push('--appendfsync', 'always');
    args.push(...(this.options.args ?? []));
    const child = spawn(this.bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    let err = '';
    child.stderr?.on('data', (b: Buffer) => (err += b.toString()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${err}`);
      const probe = new Redis(this.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => {});
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') {
          probe.disconnect();
          return this;
        }
      } catch {
        // not up yet
      }
      probe.disconnect();
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not answer within 10 s: ${err}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Stops the server: SIGTERM (a clean shutdown, AOF flushed) or SIGKILL. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL'): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  }

  /** Stops and starts the same server (same port and directory). */
  async restart(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    await this.stop(signal);
    await this.start();
  }

  /** A client for the test's own checks. */
  client(): Redis {
    const c = new Redis(this.port, '127.0.0.1', { maxRetriesPerRequest: 3 });
    c.on('error', () => {}); // a stopped server is expected in restart tests; commands still reject
    return c;
  }

  /** Stops the server and removes its directory. */
  async dispose(): Promise<void> {
    await this.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A loopback TCP proxy in front of a redis-server, so one client can be cut off from Redis while
 * the others are not (a partition, a congested link): `freeze()` stops moving bytes both ways on
 * every connection, new ones included (commands hang, as over a dead link), `thaw()` moves them
 * again. A real socket path, not a mock of Redis.
 */
export class RedisProxy {
  private readonly sockets: Socket[] = [];
  private frozen = false;
  /** Bytes that arrived while frozen, in order, with the socket they are for. */
  private held: [Socket, Buffer][] = [];
  private readonly server = createServer((client) => {
    const upstream = tcpConnect(this.target, '127.0.0.1');
    const relay = (from: Socket, to: Socket): void => {
      from.on('data', (d: Buffer) => (this.frozen ? this.held.push([to, d]) : to.write(d)));
    };
    relay(client, upstream);
    relay(upstream, client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    for (const x of [client, upstream]) {
      x.on('error', end);
      x.on('close', end);
    }
    this.sockets.push(client, upstream);
  });
  port = 0;

  constructor(private readonly target: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const [to, d] of this.held.splice(0)) if (!to.destroyed) to.write(d);
  }

  async close(): Promise<void> {
    for (const x of this.sockets) x.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Starts a server; pair with `await server.dispose()` in afterAll/afterEach. */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  return new RedisServer(options).start();
}

/**
 * A test file's cluster world, set up before its tests and torn down after them: a loopback web
 * server (`serve`'s, with its `server`), one redis-server, a checkpoint-store directory, and the
 * child processes the tests start (`started`: killed if still running). Read the fields inside
 * tests (they are set in `beforeAll`).
 */
export interface ClusterWorld<W extends { readonly server: Server }> {
  web: W;
  redis: RedisServer;
  store: string;
  readonly started: ChildProcess[];
}

/** Registers the `beforeAll`/`afterAll` of a `ClusterWorld` (store directory named from `prefix`). */
export function clusterWorld<W extends { readonly server: Server }>(serve: () => Promise<W>, prefix: string): ClusterWorld<W> {
  const world = { started: [] as ChildProcess[] } as ClusterWorld<W>;
  beforeAll(async () => {
    world.web = await serve();
    world.redis = await startRedis();
    world.store = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    for (const p of world.started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    world.web.server.closeAllConnections();
    await new Promise((resolve) => world.web.server.close(resolve));
    await world.redis.dispose();
    rmSync(world.store, { recursive: true, force: true });
  });
  return world;
}

/** A test file's redis-server and checkpoint store directory (for in-process `ClusterNode`s). */
export interface NodeWorld {
  server: RedisServer;
  store: string;
}

/**
 * Starts a redis-server and makes a temp checkpoint store before a test file's tests, and
 * tears both down after them: the set-up of the node-level tests.
 */
export function nodeWorld(prefix: string): NodeWorld {
  const world = {} as NodeWorld;
  beforeAll(async () => {
    world.server = await startRedis();
    world.store = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await world.server.dispose();
    rmSync(world.store, { recursive: true, force: true });
  });
  return world;
}

/**
 * An in-process Engine in cluster mode on a `ClusterWorld` whose hosts are names under .test
 * (all resolved to 127.0.0.1), with short timings: crawl `crawl` over `slots` slots, politeness
 * of tens of ms, host scope and grouping; `extra` overrides any of it (seeds among them).
 */
export function clusterEngine(world: ClusterWorld<{ readonly server: Server }>, crawl: string, slots: number, extra: Partial<EngineOptions> = {}): Engine {
  return new Engine({
    agent: 'meguri-test/1.0',
    allowPrivate: true,
    resolve: async (h) => (h.endsWith('.test') ? ['127.0.0.1'] : []),
    concurrency: 4,
    grouping: 'host',
    scope: 'host',
    politeness: { minDelayMs: 20, startDelayMs: 20, ipMinDelayMs: 5 },
    cluster: { redis: world.redis.url, crawl, store: world.store, slots, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20 },
    ...extra,
  });
}

/** Flips one byte near the end of an accepted slot checkpoint's partition (`rel` as the slot record names it): its checksum refuses it. */
export function damageCheckpoint(store: string, crawl: string, rel: string): void {
  const file = join(store, crawl, rel, 'partition.meguri'); // the store keeps a directory per crawl
  const bytes = readFileSync(file);
  bytes[bytes.length - 20] = bytes[bytes.length - 20]! ^ 0xff;
  writeFileSync(file, bytes);
}

/** Two hosts one IP gate orders, and a fetcher that holds the first request open (`heldGatePair`). */
export interface HeldGatePair {
  /** A host in slot 0 and one in slot 1 of the 2-slot crawl: different frontiers, one IP. */
  readonly hosts: readonly [string, string];
  /** Answers 200 from the IP; the first request stays open until `answer()`. */
  readonly fetcher: { fetch(req: FetchRequest): Promise<Outcome> };
  /** The URLs the fetcher was asked for, in order. */
  readonly seen: string[];
  /** The held request's URL (undefined until one is held). */
  held(): string | undefined;
  /** Answers the held request. */
  answer(): void;
}

/**
 * Two hosts under `domain` in slots 0 and 1 of crawl `crawl` (2 slots), both on `ip`: only the
 * node's process-wide IP gate orders their starts, so while the fetcher holds the first request
 * open, the other host's request waits at the gate.
 */
export function heldGatePair(crawl: string, domain: string, ip: string): HeldGatePair {
  const names = Array.from({ length: 40 }, (_, i) => `h${i}.${domain}`);
  const inSlot = (slot: number): string => names.find((h) => slotOf(crawl, h, 2, crawlSalt(crawl)) === slot)!;
  const seen: string[] = [];
  let held: { url: string; answer: () => void } | undefined;
  return {
    hosts: [inSlot(0), inSlot(1)],
    seen,
    fetcher: {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        seen.push(req.url);
        const ok: Outcome = { row: req.row, url: req.url, status: 200, ip, latencyMs: 1 };
        // Held whatever the abort signal says, as a stuck socket would be.
        if (held === undefined) return new Promise((resolve) => (held = { url: req.url, answer: () => resolve(ok) }));
        return Promise.resolve(ok);
      },
    },
    held: () => held?.url,
    answer: () => held?.answer(),
  };
}
