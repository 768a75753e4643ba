import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balance, moves } from '../../src/cluster/balance.js';
import { CrawlSettingsMismatchError } from '../../src/cluster/errors.js';
import { ClusterKeys, crawlSalt, slotOf, slotOfKey } from '../../src/cluster/keys.js';
import { joinCrawl, readCrawl } from '../../src/cluster/settings.js';
import { urlKey } from '../../src/url/keys.js';
import { type RedisServer, startRedis } from './redis.js';

describe('slot function', () => {
  it('is a function of (crawl, host group) only, and agrees with the URL key of any URL of the group', () => {
    const salt = crawlSalt('c1');
    const k = new Uint32Array(4);
    for (const url of ['http://a.example.com/x', 'http://b.example.com/y?z', 'https://example.com/']) {
      const g = urlKey(url, 'registrable', k, 0).hostGroup;
      expect(g).toBe('example.com');
      expect(slotOfKey(k, 0, salt, 64)).toBe(slotOf('c1', 'example.com', 64));
    }
  });

  it('spreads host groups evenly (chi-square over 64 slots, 20k groups, 5σ bound)', () => {
    const S = 64;
    const n = 20_000;
    const counts = new Array<number>(S).fill(0);
    const salt = crawlSalt('spread');
    for (let i = 0; i < n; i++) counts[slotOf('spread', `h${i}.example${i % 97}.org`, S, salt)]!++;
    const e = n / S;
    const chi = counts.reduce((a, c) => a + ((c - e) * (c - e)) / e, 0);
    // chi² with 63 degrees of freedom: mean 63, sd √126 ≈ 11.2.
    expect(chi).toBeLessThan(63 + 5 * Math.sqrt(126));
  });

  it('differs between crawls (the crawl salts the hash)', () => {
    let same = 0;
    for (let i = 0; i < 1000; i++) if (slotOf('a', `g${i}.com`, 64) === slotOf('b', `g${i}.com`, 64)) same++;
    expect(same).toBeLessThan(60); // ~1000/64 ≈ 16 expected
  });
});

describe('balance (sticky, balanced, minimal moves)', () => {
  const arb = fc.record({
    S: fc.integer({ min: 1, max: 128 }),
    nodes: fc.uniqueArray(fc.constantFrom<string>('a', 'b', 'c', 'd', 'e', 'f', 'g'), { minLength: 0, maxLength: 7 }),
    prev: fc.array(fc.constantFrom<string>('', 'a', 'b', 'c', 'd', 'x', 'y'), { minLength: 128, maxLength: 128 }),
  });
  it('every live node gets ⌊S/N⌋ or ⌈S/N⌉ slots, live owners under quota keep theirs, moves are the minimum', () => {
    fc.assert(
      fc.property(arb, ({ S, nodes, prev }) => {
        const owners = prev.slice(0, S);
        const out = balance(owners, nodes);
        if (nodes.length === 0) return out.every((o) => o === '');
        const load = new Map(nodes.map((n) => [n, 0]));
        for (const o of out) load.set(o, (load.get(o) ?? -1e9) + 1);
        const lo = Math.floor(S / nodes.length);
        for (const n of nodes) {
          const l = load.get(n)!;
          if (l < lo || l > lo + (S % nodes.length ? 1 : 0)) return false;
        }
        // Minimum moves: orphans + excess above the ⌈⌉ quotas given to the largest holders.
        const held = nodes.map((n) => owners.filter((o) => o === n).length).sort((a, b) => b - a);
        const orphans = owners.filter((o) => !nodes.includes(o)).length;
        const excess = held.reduce((a, h, i) => a + Math.max(0, h - (lo + (i < S % nodes.length ? 1 : 0))), 0);
        return moves(owners, out) === orphans + excess;
      }),
      { seed: 24, numRuns: 500 },
    );
  });
  it('a joining node takes only its share', () => {
    const two = balance(new Array<string>(64).fill(''), ['a', 'b']);
    const three = balance(two, ['a', 'b', 'c']);
    expect(moves(two, three)).toBe(21);
    expect(three.filter((o) => o === 'c')).toHaveLength(21);
  });
});

describe('crawl record', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server.dispose();
  });

  it('is created once with defaults; a joiner inherits it; a differing setting is refused naming both values', async () => {
    const r = server.client();
    const keys = new ClusterKeys('rec');
    expect(await readCrawl(r, keys)).toBeUndefined();
    const made = await joinCrawl(r, keys, { agent: 'bot/1', slots: 16, politeness: { ipFloorMs: 100 } });
    expect(made.slots).toBe(16);
    expect(made.grouping).toBe('registrable');
    const joined = await joinCrawl(r, keys, {});
    expect(joined).toEqual(made);
    await expect(joinCrawl(r, keys, { agent: 'bot/1', slots: 16 })).resolves.toEqual(made);
    const err = await joinCrawl(r, keys, { agent: 'other/2' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrawlSettingsMismatchError);
    expect((err as Error).message).toContain('"bot/1"');
    expect((err as Error).message).toContain('"other/2"');
    expect((err as CrawlSettingsMismatchError).code).toBe('MEGURI_ERR_CRAWL_SETTINGS');
    await expect(joinCrawl(r, keys, { politeness: { ipFloorMs: 200 } })).rejects.toThrow(/politeness/);
    await expect(joinCrawl(r, keys, { slots: 0 })).rejects.toThrow(/slots/);
    r.disconnect();
  });

  it("a node refuses at start a recorded politeness override its frontier would refuse, naming it (before: every slot open failed, retried without end)", async () => {
    const { ClusterNode, InvalidArgumentError } = await import('../../src/index.js');
    const fetcher = { fetch: async () => ({ row: 0, url: '', status: 200 }) };
    const node = new ClusterNode({ redis: server.url, crawl: 'polite-names', store: '/tmp/meguri-unused-store', fetcher, settings: { slots: 2, politeness: { minDelayMs: 500 } } });
    const err = await node.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/unknown option "minDelayMs".*floorMs/);
    const r = server.client();
    expect(await readCrawl(r, new ClusterKeys('polite-names'))).toBeUndefined(); // refused before it was recorded
    r.disconnect();
  });
});

describe('ClusterNode options', () => {
  it('are validated by one table, naming the option and the value', async () => {
    const { ClusterNode } = await import('../../src/cluster/index.js');
    const fetcher = { fetch: async () => ({ row: 0, url: '', status: 200 }) };
    expect(() => new ClusterNode({ redis: 'redis://127.0.0.1:1', crawl: 'bad name', store: '/tmp/x', fetcher })).toThrow(/crawl/);
    expect(() => new ClusterNode({ redis: 'redis://127.0.0.1:1', crawl: 'ok', store: '/tmp/x', fetcher, concurrency: 0 })).toThrow(/concurrency.*0/);
    expect(() => new ClusterNode({ redis: 'redis://127.0.0.1:1', crawl: 'ok', store: '/tmp/x', fetcher, durability: { replicas: 0, timeoutMs: 5 } })).toThrow(/durability/);
    expect(() => new ClusterNode({ crawl: 'ok', store: '/tmp/x', fetcher })).toThrow(/missing required option\(s\) redis/);
    // Redis takes expiries and WAIT timeouts in whole ms: a fraction would fail every renewal.
    expect(() => new ClusterNode({ redis: 'redis://127.0.0.1:1', crawl: 'ok', store: '/tmp/x', fetcher, heartbeatTtlMs: 1_500.5 })).toThrow(/heartbeatTtlMs.*1500\.5/);
    expect(() => new ClusterNode({ redis: 'redis://127.0.0.1:1', crawl: 'ok', store: '/tmp/x', fetcher, ipVerdictMs: 99.9 })).toThrow(/ipVerdictMs/);
    expect(() => new ClusterNode({ redis: 'redis://127.0.0.1:1', crawl: 'ok', store: '/tmp/x', fetcher, durability: { replicas: 1, timeoutMs: 10.5 } })).toThrow(/durability/);
  });

  it('check the frontier options each slot will open with at construction, not at the first slot', async () => {
    const { ClusterNode } = await import('../../src/cluster/index.js');
    const fetcher = { fetch: async () => ({ row: 0, url: '', status: 200 }) };
    const base = { redis: 'redis://127.0.0.1:1', crawl: 'ok', store: '/tmp/x', fetcher };
    expect(() => new ClusterNode({ ...base, frontier: { storeDir: '/tmp/x/disk' } })).toThrow(/ClusterNodeOptions: frontier: .*storeDir.*memoryBudget/);
    expect(() => new ClusterNode({ ...base, frontier: { retryLimit: -1 } as never })).toThrow(/frontier: .*retryLimit/);
    expect(() => new ClusterNode({ ...base, frontier: { noSuchOption: 1 } as never })).toThrow(/frontier: .*unknown option "noSuchOption"/);
  });
});
