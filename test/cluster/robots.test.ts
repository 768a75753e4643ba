/**
 * robots.txt entries travel with a cluster slot: each slot's checkpoint carries its origins'
 * entries (rules with their expiry, an unreachable origin's retry time and Retry-After hold),
 * and the slot's next owner — after a hand-off or a kill -9 — takes them back instead of asking
 * again. Judged by this process's loopback server and its request log (arrival order and
 * times on an event loop no crawler shares): every robots.txt read is asked once in the whole
 * crawl, and a host whose robots.txt answered 503 + Retry-After gets no request, robots.txt or
 * page, from any node before that ends; a hand-off waits for a robots.txt answer still out
 * (the server withholds it) so that it is in the checkpoint. Plus: a restarted crawl asks no
 * robots.txt again; a slot checkpoint in the older layout (format minor 0, no robots entries)
 * still loads, and its origins are asked again, as before; entries read back are checked.
 *
 * Real components only: a redis-server on a random loopback port, Engine processes in
 * cluster mode (engine-child.ts), in-process Engines for the restart cases.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CheckpointStore, ClusterKeys, SLOT_FORMAT_MINOR, type SlotCheckpointMeta, slotOf } from '../../src/cluster/index.js';
import { META_FILE } from '../../src/cluster/store.js';
import { Engine } from '../../src/index.js';
import { type NodeProc, spawnNode, until } from './child.js';
import { clusterWorld } from './redis.js';
import { JUDGE_TOLERANCE_MS } from '../engine/helpers.js';
import { type LoggedWeb, hostOf, listenLoopback } from '../fetch/server.js';

const ENGINE = fileURLToPath(new URL('./engine-child.ts', import.meta.url));
const WAIT_MS = 120_000;
/** The Retry-After (s) of a held host's first robots.txt answer: outlasts a hand-off and a kill's recovery on a loaded machine. */
const RETRY_AFTER_S = 20;
const SLOTS = 2;

interface Arrival {
  readonly seq: number;
  readonly host: string;
  readonly path: string;
  /** Arrival, ms on this process's clock. */
  readonly at: number;
  status: number;
  /** A Retry-After answer: the instant it asks to be left alone until. */
  notBefore?: number;
}

/** Pages of a host: '/' links every other page and one disallowed URL. */
const pagesOf = (kind: string): string[] => ['/', ...Array.from({ length: kind === 'rules' ? 40 : 4 }, (_, i) => `/p${i}`)];

/**
 * The web: a host named `…-held-…` answers its first robots.txt 503 with a Retry-After, then
 * rules; one named `…-slow-…` answers its first robots.txt only once the test says so; every
 * other host answers rules at once. The rules disallow /secret/, which '/' links.
 */
async function serve(): Promise<LoggedWeb<Arrival>> {
  const log: Arrival[] = [];
  const robotsAsked = new Map<string, number>();
  const server = createServer((req, res) => {
    const host = hostOf(req);
    const path = req.url ?? '/';
    const e: Arrival = { seq: log.length, host, path, at: performance.now(), status: 0 };
    log.push(e);
    const send = (status: number, body: string, headers: Record<string, string> = {}): void => {
      e.status = status;
      res.writeHead(status, { 'content-type': path.endsWith('.txt') ? 'text/plain' : 'text/html', ...headers }).end(body);
    };
    const kind = host.split('-')[1] ?? '';
    if (path === '/robots.txt') {
      const n = (robotsAsked.get(host) ?? 0) + 1;
      robotsAsked.set(host, n);
      if (kind === 'slow' && n === 1) {
        // Withheld until the test releases it: the load is out while its slot is handed off.
        void slowRobots.then(() => send(200, 'User-agent: *\nDisallow: /secret/\n'));
        return;
      }
      if (kind === 'held' && n === 1) {
        e.notBefore = performance.now() + RETRY_AFTER_S * 1000;
        return send(503, 'maintenance\n', { 'retry-after': String(RETRY_AFTER_S) });
      }
      return send(200, 'User-agent: *\nDisallow: /secret/\n');
    }
    const links = path === '/' ? [...pagesOf(kind).slice(1), '/secret/x'] : ['/'];
    return send(200, `<html><body>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`);
  });
  return { ...(await listenLoopback(server)), log };
}

/** Releases the slow hosts' first robots.txt answers. */
let releaseSlow = (): void => undefined;
const slowRobots = new Promise<void>((r) => (releaseSlow = r));

const world = clusterWorld(serve, 'meguri-clrobots-');

/** One host of each kind in each slot of `crawl` (names `<crawl>-<kind>-<n>.test`). */
function hostsOf(crawl: string, kinds: readonly string[]): { host: string; kind: string; slot: number }[] {
  const out: { host: string; kind: string; slot: number }[] = [];
  for (const kind of kinds) {
    for (let slot = 0; slot < SLOTS; slot++) {
      for (let n = 0; ; n++) {
        const host = `${crawl}-${kind}-${n}.test`;
        if (slotOf(crawl, host, SLOTS) !== slot) continue;
        out.push({ host, kind, slot });
        break;
      }
    }
  }
  return out;
}

const origin = (host: string): string => `http://${host}:${world.web.port}`;
const requests = (host: string, path?: string): Arrival[] => world.web.log.filter((e) => e.host === host && (path === undefined || e.path === path));

/** Requests to `host` that arrived before the Retry-After its robots.txt answered had ended. */
function early(host: string): Arrival[] {
  const hostLog = requests(host);
  const answer = hostLog.find((e) => e.notBefore !== undefined);
  if (answer === undefined) return [];
  return hostLog.filter((e) => e.seq > answer.seq && e.at < answer.notBefore! - JUDGE_TOLERANCE_MS);
}

/** The robots.txt entries of `slot`'s accepted checkpoint (none before it has one). */
async function acceptedRobots(crawl: string, slot: number): Promise<SlotCheckpointMeta['robots']> {
  const client = world.redis.client();
  try {
    const rel = await client.hget(new ClusterKeys(crawl).slot(slot), 'ckpt');
    if (!rel) return undefined;
    return (await new CheckpointStore(world.store, crawl).read(rel)).meta.robots;
  } finally {
    client.disconnect();
  }
}

/**
 * Two engine processes on `crawl`: A creates it (2 slots, host grouping) with `hosts` as seeds;
 * B is loaded up front and joins on IPC 'go' (a start under tsx takes seconds on a loaded machine).
 */
function startTwo(crawl: string, hosts: readonly { host: string }[], extra: Record<string, unknown>): { a: NodeProc; b: NodeProc } {
  const config = { redis: world.redis.url, crawl, store: world.store, grouping: 'host', dns: Object.fromEntries(hosts.map((h) => [h.host, '127.0.0.1'])), checkpointMs: 200, ...extra };
  const spawn = (more: Record<string, unknown>): NodeProc => {
    const p = spawnNode({ ...config, ...more }, ENGINE);
    world.started.push(p.child);
    return p;
  };
  return { a: spawn({ slots: SLOTS, seeds: hosts.map((h) => `${origin(h.host)}/`) }), b: spawn({ wait: true }) };
}

describe('robots.txt entries travel with a cluster slot', () => {
  it('a slot handed off and a slot recovered after a kill -9: each robots.txt read is asked once, and a robots.txt Retry-After binds on the next owner', async () => {
    const crawl = 'rmove';
    const hosts = hostsOf(crawl, ['held', 'rules']);
    const { a, b } = startTwo(crawl, hosts, { politeness: { minDelayMs: 300, startDelayMs: 300, ipMinDelayMs: 10 }, ttlMs: 2_000, robotsRetryMs: 100 });
    await a.ready;
    // A has asked every robots.txt, and each slot's accepted checkpoint carries its origins' answers.
    await until(
      async () => {
        for (let slot = 0; slot < SLOTS; slot++) {
          const carried = (await acceptedRobots(crawl, slot)) ?? [];
          for (const h of hosts.filter((x) => x.slot === slot)) {
            const e = carried.find((r) => r.origin === origin(h.host));
            if (e === undefined || e.state !== (h.kind === 'held' ? 'unreachable' : 'parsed')) return false;
          }
        }
        return true;
      },
      WAIT_MS,
      "every slot's checkpoint carrying its origins' robots.txt answers",
    );
    for (const h of hosts.filter((x) => x.kind === 'held')) {
      const carried = (await acceptedRobots(crawl, h.slot))!.find((r) => r.origin === origin(h.host))!;
      expect(carried).toMatchObject({ state: 'unreachable', lastStatus: 503, failures: 1 });
      expect(carried.heldUntilMs).toBe(carried.fetchedAtMs + RETRY_AFTER_S * 1000);
    }
    await until(() => b.lines.some((l) => l['type'] === 'loaded'), WAIT_MS, 'B loaded');
    b.child.send({ type: 'go' });
    // B owns a slot once it has checkpointed one: A handed it off (its requests end before).
    await until(() => b.lines.some((l) => l['type'] === 'checkpoint'), WAIT_MS, 'a slot handed off to B');
    const moved = Number(b.lines.find((l) => l['type'] === 'checkpoint')!['slot']);
    const handedAt = world.web.log.length;
    // Then A is killed: B recovers A's other slot from its last accepted checkpoint.
    const kept = 1 - moved;
    a.kill();
    await a.exited;
    const killedAt = world.web.log.length;
    expect((await b.exited).code).toBe(0);
    expect(b.lines.filter((l) => l['type'] === 'error')).toEqual([]);

    for (const [slot, since, how] of [[moved, handedAt, 'handed off'], [kept, killedAt, 'recovered after the kill']] as const) {
      const held = hosts.find((h) => h.slot === slot && h.kind === 'held')!.host;
      const rules = hosts.find((h) => h.slot === slot && h.kind === 'rules')!.host;
      // The robots.txt read by A is not asked again by B.
      expect(requests(rules, '/robots.txt'), `${how}: ${rules}`).toHaveLength(1);
      // Nothing reaches the held host before its Retry-After ended — then it is asked again.
      expect(early(held), `${how}: ${JSON.stringify(requests(held))}`).toEqual([]);
      expect(requests(held, '/robots.txt').map((e) => e.status), `${how}: ${held}`).toEqual([503, 200]);
      // Meaningful: B crawled the slot (its other host) while the hold was still in force.
      const notBefore = requests(held).find((e) => e.notBefore !== undefined)!.notBefore!;
      const during = requests(rules).filter((e) => e.seq >= since && e.at < notBefore);
      expect(during.length, `${how}: B fetched ${rules} during ${held}'s hold`).toBeGreaterThan(0);
      for (const h of [held, rules]) {
        for (const p of pagesOf(h.split('-')[1]!)) expect(requests(h, p).length, `${h}${p}`).toBeGreaterThan(0);
        expect(requests(h, '/secret/x'), `${h}: the Disallow obeyed`).toEqual([]);
      }
    }
  }, 4 * WAIT_MS);

  it('a hand-off waits for a robots.txt answer still out: it is in the checkpoint, not asked again', async () => {
    const crawl = 'rslow';
    const hosts = hostsOf(crawl, ['slow']);
    const { a, b } = startTwo(crawl, hosts, { politeness: { minDelayMs: 100, startDelayMs: 100, ipMinDelayMs: 10 }, ttlMs: 4_000 });
    await until(() => hosts.every((h) => requests(h.host, '/robots.txt').length === 1), WAIT_MS, 'every slow robots.txt asked by A');
    await until(() => b.lines.some((l) => l['type'] === 'loaded'), WAIT_MS, 'B loaded');
    b.child.send({ type: 'go' });
    const client = world.redis.client();
    try {
      const keys = new ClusterKeys(crawl);
      // Requested (a slot record names B as wanted), or already done when nothing held it up.
      const handingOff = async (): Promise<boolean> =>
        b.lines.some((l) => l['type'] === 'checkpoint') || (await Promise.all(hosts.map((h) => client.hget(keys.slot(h.slot), 'want')))).some((w) => !!w);
      await until(handingOff, WAIT_MS, 'a hand-off to B');
    } finally {
      client.disconnect();
    }
    // Not an assertion: time for A to see the request and start the slot's drain (bounded at 5 s).
    await new Promise((r) => setTimeout(r, 1_000));
    releaseSlow();
    expect((await a.exited).code).toBe(0);
    expect((await b.exited).code).toBe(0);
    expect(b.lines.some((l) => l['type'] === 'checkpoint'), 'B took a slot').toBe(true);
    for (const h of hosts) {
      expect(requests(h.host, '/robots.txt'), h.host).toHaveLength(1);
      for (const p of pagesOf('slow')) expect(requests(h.host, p).length, `${h.host}${p}`).toBeGreaterThan(0);
      expect(requests(h.host, '/secret/x'), h.host).toEqual([]);
    }
  }, 4 * WAIT_MS);
});

describe('older slot checkpoints', () => {
  /** Runs one in-process Engine on `crawl` until `stopWhen` says so (or drained); returns the pages. */
  async function runEngine(crawl: string, hosts: readonly string[], seeds: readonly string[], stopWhen: (pages: readonly string[]) => boolean = () => false): Promise<string[]> {
    const engine = new Engine({
      agent: 'meguri-test/1.0',
      seeds: [...seeds],
      allowPrivate: true,
      resolve: async (h) => (hosts.includes(h) ? ['127.0.0.1'] : []),
      concurrency: 4,
      grouping: 'host',
      politeness: { minDelayMs: 50, startDelayMs: 50, ipMinDelayMs: 5 },
      cluster: { redis: world.redis.url, crawl, store: world.store, slots: SLOTS, heartbeatTtlMs: 1_000, checkpointMs: 100, pollMs: 20 },
    });
    const pages: string[] = [];
    try {
      for await (const page of engine.run()) {
        pages.push(page.url);
        if (stopWhen(pages)) void engine.stop();
      }
    } finally {
      await engine.close();
    }
    return pages;
  }

  /** Every accepted slot checkpoint of `crawl`, as the previous build wrote it: no `minor`, no `robots`. */
  async function downgrade(crawl: string): Promise<number> {
    const client = world.redis.client();
    let n = 0;
    try {
      for (let slot = 0; slot < SLOTS; slot++) {
        const rel = await client.hget(new ClusterKeys(crawl).slot(slot), 'ckpt');
        if (!rel) continue;
        const file = join(world.store, crawl, rel, META_FILE);
        const meta = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        expect(meta['minor']).toBe(SLOT_FORMAT_MINOR);
        delete meta['minor'];
        delete meta['robots'];
        writeFileSync(file, `${JSON.stringify(meta)}\n`);
        n++;
      }
    } finally {
      client.disconnect();
    }
    return n;
  }

  it("a checkpoint's robots.txt entries are read back as written, and checked field by field", async () => {
    const st = new CheckpointStore(world.store, 'rfields');
    const meta = { format: 'meguri-slot/1', minor: SLOT_FORMAT_MINOR, crawl: 'rfields', slot: 0, epoch: 1, seq: 1, cursor: '0-0', applied: 0, digest: 0 } as const;
    const entry = { origin: 'http://a.test', state: 'unreachable', fetchedAtMs: 1_000, refreshAtMs: 61_000, lastStatus: 503, redirects: 0, failures: 1, heldUntilMs: 21_000 } as const;
    const ok = await st.write({ ...meta, robots: [entry] }, new Uint8Array(0));
    expect((await st.read(ok)).meta.robots).toEqual([entry]);
    const bad = await st.write({ ...meta, seq: 2, robots: [{ ...entry, heldUntilMs: 'soon' as unknown as number }] }, new Uint8Array(0));
    await expect(st.read(bad)).rejects.toThrow(/robots\[0\] heldUntilMs/);
    // The older layout: no minor, no robots.
    const old = await st.write({ format: 'meguri-slot/1', crawl: 'rfields', slot: 0, epoch: 1, seq: 3, cursor: '0-0', applied: 0, digest: 0 }, new Uint8Array(0));
    const read = (await st.read(old)).meta;
    expect([read.seq, read.minor, read.robots]).toEqual([3, undefined, undefined]);
  });

  for (const older of [false, true]) {
    it(older ? 'a slot checkpoint in the older layout (minor 0, no robots entries) loads; its origins are asked again' : 'a restarted crawl takes the slots\' robots.txt entries back: asked once', async () => {
      const crawl = older ? 'rold' : 'rnew';
      const hosts = hostsOf(crawl, ['rules']).map((h) => h.host);
      const seeds = hosts.map((h) => `${origin(h)}/`);
      // Stopped (final checkpoints, leaving) once every host has given a page: its robots.txt was read.
      const first = await runEngine(crawl, hosts, seeds, (pages) => hosts.every((h) => pages.filter((u) => new URL(u).hostname === h).length >= 2));
      expect(first.length).toBeLessThan(hosts.length * pagesOf('rules').length);
      for (const h of hosts) expect(requests(h, '/robots.txt'), h).toHaveLength(1);
      if (older) expect(await downgrade(crawl)).toBe(SLOTS);
      const second = await runEngine(crawl, hosts, []);
      for (const h of hosts) {
        expect(requests(h, '/robots.txt'), h).toHaveLength(older ? 2 : 1);
        for (const p of pagesOf('rules')) expect(requests(h, p).length, `${h}${p}`).toBeGreaterThan(0);
        expect(requests(h, '/secret/x'), h).toEqual([]);
      }
      expect(second.length).toBeGreaterThan(0);
    }, WAIT_MS);
  }
});
