// The outcome state machine, the schedule index, robots/DNS seams, imported signals, warm,
// stats and dueUrls: behaviour of single transitions, with bad inputs.
import { describe, expect, it } from 'vitest';
import {
  type FetchRequest,
  Frontier,
  InvalidArgumentError,
  type Outcome,
  keyToHex,
} from '../../src/index.js';

const HOUR = 3_600_000;

function one(options: ConstructorParameters<typeof Frontier>[2] = {}, url = 'https://a.example/p'): { f: Frontier; req: FetchRequest } {
  const f = new Frontier(1, 0, options);
  f.seed(url, 'a.example', 1, 0, 0, 0);
  const req = f.dispatch(0)!;
  return { f, req };
}

const status = (f: Frontier): Record<string, number> => {
  const s = f.stats(1_000_000).byStatus;
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v > 0));
};

describe('outcome state machine', () => {
  it('without it every outcome marks Crawled (seed behaviour)', () => {
    for (const code of [200, 404, 503, 0, 301]) {
      const { f, req } = one();
      expect(f.report({ row: req.row, url: req.url, status: code, location: 'https://b.example/' }, 0)).toBe(true);
      expect(status(f)).toEqual({ Crawled: 1 });
    }
  });

  it('200 and 304 → Crawled; 404/410/other 4xx → Gone; robots → Disallowed', () => {
    const cases: [Partial<Outcome>, string][] = [
      [{ status: 200 }, 'Crawled'],
      [{ status: 304 }, 'Crawled'],
      [{ status: 404 }, 'Gone'],
      [{ status: 410 }, 'Gone'],
      [{ status: 403 }, 'Gone'],
      [{ status: 200, robotsDisallowed: true }, 'Disallowed'],
    ];
    for (const [o, want] of cases) {
      const { f, req } = one({ stateMachine: true });
      f.report({ row: req.row, url: req.url, status: 0, ...o }, 0);
      expect(status(f)).toEqual({ [want]: 1 });
      expect(f.pending()).toBe(0);
    }
  });

  it('transient failures back off and re-queue, then Gone after the retry limit', () => {
    const f = new Frontier(1, 0, { stateMachine: true, retryLimit: 2 });
    f.seed('https://a.example/p', 'a.example', 1, 0, 0, 0);
    // (A 429 would not spend one: a rate limit's answer, test/frontier/rate-limit.test.ts.)
    const codes = [503, 502, 0, 200];
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: codes.shift()! }));
    expect(log.length).toBe(3);
    expect(status(f)).toEqual({ Gone: 1 });
    // The host backed off: ×2 each time from 1 s.
    expect(log.map((d) => d.atMs)).toEqual([0, 2000, 6000]);
  });

  it('honours Retry-After as the host window floor', () => {
    const f = new Frontier(1, 0, { stateMachine: true });
    f.seed('https://a.example/p', 'a.example', 1, 0, 0, 0);
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: r.dispatchedAtMs === 0 ? 429 : 200, retryAfter: '30' }));
    expect(log.map((d) => d.atMs)).toEqual([0, 30_000]);
  });

  it('a redirect creates the canonical target as its own row and points redirectTo at it', () => {
    const { f, req } = one({ stateMachine: true });
    f.report({ row: req.row, url: req.url, status: 301, location: '/q#frag' }, 0);
    expect(status(f)).toEqual({ Redirected: 1, Scheduled: 1 });
    const next = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 }));
    expect(next.map((d) => d.url)).toEqual(['https://a.example/q']);
    // The link survives a checkpoint: the redirected row refers to the target row.
    const image = Frontier.recover(f.checkpointBytes(), { stateMachine: true }).checkpoint();
    const redirect = image.columns.find((c) => c.id === 17)!.data;
    const st = image.columns.find((c) => c.id === 3)!.data;
    const src = [...st].indexOf(8);
    expect(redirect[src]).toBeGreaterThan(0);
    expect(st[redirect[src]! - 1]).toBe(2);
  });

  it('a gone URL naming a stand-in hands it on at its own depth; no redirect link is kept', () => {
    const f = new Frontier(1, 0, { stateMachine: true });
    f.seed('https://a.example/', 'a.example', 1, 0, 0, 0);
    const depths = new Map<string, number>();
    // / links /x (depth 1); /x answers 404 naming /legacy/x in its place (the engine's missed
    // rewrite): /legacy/x1 enters at depth 1, not 2; /y answers 410 with a location it cannot key.
    const log = f.drain(0, (r) => {
      depths.set(r.url, r.depth);
      if (r.url.endsWith('/')) return { row: r.row, url: r.url, status: 200, links: [{ url: 'https://a.example/x' }, { url: 'https://a.example/y' }] };
      if (r.url.endsWith('/x')) return { row: r.row, url: r.url, status: 404, location: 'https://a.example/legacy/x1' };
      if (r.url.endsWith('/y')) return { row: r.row, url: r.url, status: 410, location: 'javascript:void(0)' };
      return { row: r.row, url: r.url, status: 200 };
    });
    expect(log.map((d) => d.url).sort()).toEqual(['https://a.example/', 'https://a.example/legacy/x1', 'https://a.example/x', 'https://a.example/y']);
    expect(depths.get('https://a.example/legacy/x1')).toBe(1);
    expect(status(f)).toEqual({ Crawled: 2, Gone: 2 });
    const image = f.checkpoint();
    expect([...image.columns.find((c) => c.id === 17)!.data].every((v) => v === 0)).toBe(true);
  });

  it('refuses a duplicate report and a report for a row not in flight', () => {
    const { f, req } = one({ stateMachine: true });
    expect(f.report({ row: req.row, url: req.url, status: 200 }, 0)).toBe(true);
    expect(f.report({ row: req.row, url: req.url, status: 200 }, 0)).toBe(false);
    expect(() => f.report({ row: 99, url: 'x', status: 200 }, 0)).toThrow(InvalidArgumentError);
    expect(() => f.report({ row: 0, url: req.url, status: 200 }, Number.NaN)).toThrow(/finite clock/);
  });

  it('classifies changes: first fetch, no change, cosmetic (simhash ≤ 3 bits), real', () => {
    const seen: string[] = [];
    const views: number[] = [];
    const f = new Frontier(1, 0, {
      scheduleIndex: true,
      freshness: (rec, now) => {
        seen.push(`${rec.change}:${rec.crawlCount}:${rec.changeCount}:${rec.noChangeStreak}`);
        views.push(rec.contentFpLo, rec.priority);
        rec.lambda = 0.25;
        return now + 1;
      },
    });
    f.seed('https://a.example/p', 'a.example', 1, 0, 0, 0);
    const bodies: Partial<Outcome>[] = [
      { status: 200, contentFp: 1n, simhash: 0b1111n },
      { status: 304 },
      { status: 200, contentFp: 1n, simhash: 0b1111n },
      { status: 200, contentFp: 2n, simhash: 0b1110n },
      { status: 200, contentFp: 3n, simhash: 0xff00n },
    ];
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, ...(bodies.shift() ?? { status: 200 }) }) as Outcome, { untilMs: 4 * HOUR + 1 });
    expect(log.length).toBe(5);
    expect(seen).toEqual(['first:1:0:0', 'none:2:0:1', 'none:3:0:2', 'cosmetic:4:0:3', 'real:5:1:0']);
    expect(views.slice(0, 2)).toEqual([1, 1]);
    expect(views.at(-2)).toBe(3);
    expect(f.checkpoint().columns.find((c) => c.id === 12)!.data[0]).toBe(0.25);
  });
});

describe('change classification with a zero simhash', () => {
  it('treats a zero simhash as no signal: different bodies without text are a real change', () => {
    const seen: string[] = [];
    const f = new Frontier(1, 0, {
      scheduleIndex: true,
      freshness: (rec, now) => {
        seen.push(rec.change);
        return now + 1;
      },
    });
    f.seed('https://a.example/p', 'a.example', 1, 0, 0, 0);
    const bodies: Partial<Outcome>[] = [
      { status: 200, contentFp: 1n, simhash: 0n },
      { status: 200, contentFp: 2n, simhash: 0n },
      { status: 200, contentFp: 3n, simhash: 0b1n },
      { status: 200, contentFp: 4n, simhash: 0b11n },
    ];
    f.drain(0, (r) => ({ row: r.row, url: r.url, ...(bodies.shift() ?? { status: 200 }) }) as Outcome, { untilMs: 3 * HOUR + 1 });
    expect(seen).toEqual(['first', 'real', 'real', 'cosmetic']);
  });
});

describe('in-degree under host grouping', () => {
  it('counts distinct linking registrable domains: subdomains of one site are not cross-site votes', () => {
    const budgets = (grouping: 'host' | 'registrable'): number => {
      const f = new Frontier(1, 0, { grouping, prioritizer: { budgetBase: 10, budgetPerDomain: 100 } });
      const target = grouping === 'host' ? 'b.example.com' : 'example.com';
      const from = (host: string): string => (grouping === 'host' ? host : host.split('.').slice(-2).join('.'));
      let n = 0;
      for (const src of ['a.example.com', 'c.example.com', 'www.other.org', 'blog.other.org', 'third.net']) {
        f.discover({ url: `https://b.example.com/p${n++}`, host: target, depth: 1, cash: 0, fromHost: from(src) }, 0);
      }
      return f.hostSnapshots().find((h) => h.name === target)!.urlBudget;
    };
    // Under host grouping the two example.com subdomains are the target's own site, and the two
    // other.org hosts are one domain: 2 linking domains, as many as registrable grouping sees
    // (other.org, third.net; example.com linking itself is not a group link there either).
    expect(budgets('registrable')).toBe(10 + 2 * 100);
    expect(budgets('host')).toBe(10 + 2 * 100);
  });
});

describe('schedule index', () => {
  it('defers a future-dated seed until its hour, then recrawls as DueRecrawl when due', () => {
    const f = new Frontier(1, 100, { scheduleIndex: true, freshness: (_r, now) => now + 2 });
    f.seed('https://a.example/now', 'a.example', 1, 100, 100, 0);
    f.seed('https://a.example/later', 'a.example', 5, 100, 103, 0);
    expect(f.pending()).toBe(1);
    expect(f.stats(100).deferred).toBe(1);
    const t0 = 100 * HOUR;
    const first = f.drain(t0, (r) => ({ row: r.row, url: r.url, status: 200 }));
    expect(first.map((d) => d.url)).toEqual(['https://a.example/now']);
    expect(f.nextEligible()).toBe(102 * HOUR);
    const rest = f.drain(t0, (r) => ({ row: r.row, url: r.url, status: 200 }), { untilMs: 105 * HOUR });
    expect(rest.map((d) => `${d.atMs / HOUR} ${d.url.split('/').pop()}`)).toEqual(['102 now', '103 later', '104 now', '105 later']);
    expect(f.stats(105).deferred).toBe(2);
  });

  it('without it a future-dated seed is schedulable at once and a crawl is terminal', () => {
    const f = new Frontier(1, 100, {});
    f.seed('https://a.example/later', 'a.example', 5, 100, 103, 0);
    expect(f.drain(100 * HOUR, (r) => ({ row: r.row, url: r.url, status: 200 })).length).toBe(1);
    expect(f.nextEligible()).toBeUndefined();
    expect(f.dueUrls(1000).map((d) => [d.url, d.dueHours])).toEqual([['https://a.example/later', 100 + 168]]);
  });
});

describe('seams', () => {
  it('robots: waits for readiness, excludes disallowed URLs, raises the floor by Crawl-delay', () => {
    const ready = new Set<string>();
    const asked: string[] = [];
    const f = new Frontier(1, 0, {
      robots: {
        ready: (h) => ready.has(h),
        request: (h) => {
          asked.push(h);
          ready.add(h);
        },
        isAllowed: (u) => !u.includes('/private'),
        crawlDelayMs: () => 5000,
      },
      robotsRetryMs: 700,
    });
    for (const p of ['a', 'private/b', 'c']) f.seed(`https://a.example/${p}`, 'a.example', 1, 0, 0, 0);
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 }));
    expect(asked).toEqual(['a.example']);
    expect(log.map((d) => d.atMs)).toEqual([700, 5700]);
    expect(log.map((d) => d.url.slice(18)).sort()).toEqual(['a', 'c']);
    expect(status(f)).toEqual({ Crawled: 2, Disallowed: 1 });
  });

  it('DNS: the resolved IP rides on the request and hosts sharing it share one window', () => {
    const prefetched: string[] = [];
    const f = new Frontier(1, 0, { resolver: { lookup: () => '203.0.113.9', prefetch: (h) => prefetched.push(h) }, politeness: { ipFloorMs: 400, floorMs: 100, defaultIntervalMs: 100, narrowMs: 0 } });
    f.seed('https://a.example/1', 'a.example', 1, 0, 0, 0);
    f.seed('https://b.example/1', 'b.example', 1, 0, 0, 0);
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 }));
    expect(log.map((d) => [d.atMs, d.ip])).toEqual([[0, '203.0.113.9'], [400, '203.0.113.9']]);
    expect(prefetched.sort()).toEqual(['a.example', 'b.example']);
  });

  it('link router: only the links it returns enter this partition', () => {
    const routed: string[] = [];
    const f = new Frontier(1, 0, { linkRouter: (ds) => (routed.push(...ds.map((d) => d.url)), ds.filter((d) => d.host === 'a.example')) });
    f.seed('https://a.example/1', 'a.example', 1, 0, 0, 0);
    f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200, links: r.url.endsWith('/1') ? [{ url: 'https://a.example/2' }, { url: 'https://b.example/x' }, { url: 'https://a.example/3', nofollow: true }] : [] }));
    expect(routed).toEqual(['https://a.example/2', 'https://b.example/x']);
    expect(f.len()).toBe(2);
  });
});

describe('dispatch shards', () => {
  it('a thread draws from its own shard first, then steals the best-headed sibling', () => {
    const f = new Frontier(1, 0, { dispatchShards: 2 });
    for (let h = 0; h < 8; h++) f.seed(`https://h${h}.example/`, `h${h}.example`, h, 0, 0, 0);
    const got: { shard: number; priority: number }[] = [];
    for (;;) {
      const r = f.dispatchShard(0, 0);
      if (!r) break;
      got.push({ shard: r.key[0]! % 2, priority: Number(r.host[1]) });
    }
    expect(got.length).toBe(8);
    const own = got.filter((g) => g.shard === 0);
    // Own shard first (best first), then the stolen ones (best first).
    expect(got.slice(0, own.length)).toEqual(own);
    expect(own.map((g) => g.priority)).toEqual([...own.map((g) => g.priority)].sort((a, b) => b - a));
    const stolen = got.slice(own.length).map((g) => g.priority);
    expect(stolen).toEqual([...stolen].sort((a, b) => b - a));
  });
});

describe('intake, admission and signals', () => {
  it('parks discoveries past the depth cap or the host budget as Trapped (rows kept)', () => {
    const f = new Frontier(1, 0, { depthCap: 2, urlBudget: 3 });
    expect(f.discover({ url: 'https://a.example/deep', host: 'a.example', depth: 3, cash: 1 }, 0)).toBe(false);
    for (let i = 0; i < 5; i++) f.discover({ url: `https://a.example/${i}`, host: 'a.example', depth: 1, cash: 1 }, 0);
    expect(status(f)).toEqual({ Scheduled: 3, Trapped: 3 });
    expect(f.discover({ url: 'https://a.example/deep', host: 'a.example', depth: 1, cash: 1 }, 0)).toBe(false);
    expect(f.len()).toBe(6);
  });

  it('rejects malformed intake with InvalidArgumentError naming the value', () => {
    const f = new Frontier(1, 0, {});
    expect(() => f.seed('', 'a', 1, 0, 0, 0)).toThrow(/canonical URL/);
    expect(() => f.seed('https://a/', 'a', Number.NaN, 0, 0, 0)).toThrow(/finite priority/);
    expect(() => f.seed('https://a/', 'a', 1, -1, 0, 0)).toThrow(/epoch-hours/);
    expect(() => f.seed('https://a/', 'a', 1, 0, 0, -5)).toThrow(/crawlDelay/);
    expect(() => f.discover({ url: 'https://a/', host: 'a', depth: -1, cash: 0 }, 0)).toThrow(/depth/);
    expect(() => f.discover({ url: 'https://a/', host: 'a', depth: 0, cash: Number.POSITIVE_INFINITY }, 0)).toThrow(/cash/);
    expect(() => new Frontier(-1, 0)).toThrow(/partitionId/);
    expect(() => new Frontier(1, 0, { target: -2 })).toThrow(/FrontierOptions.target/);
    expect(() => new Frontier(1, 0, { bogus: 1 } as never)).toThrow(/unknown option "bogus"/);
    expect(() => f.dispatchShard(0, 3)).toThrow(/shard/);
  });

  it('OPIC: a crawl splits cash over out-links and known targets accumulate it', () => {
    const f = new Frontier(1, 0, { prioritizer: { damping: 0 } });
    f.seed('https://a.example/', 'a.example', 4, 0, 0, 0);
    f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200, links: r.url === 'https://a.example/' ? [{ url: 'https://b.example/1' }, { url: 'https://b.example/2' }, { url: 'https://c.example/1' }, { url: 'https://c.example/1' }] : [] }), 1);
    const p = f.prioritizer()!;
    // 4 units over 4 links; the repeated link credited twice.
    expect(p.cash(1)).toBeCloseTo(1);
    expect(p.cash(2)).toBeCloseTo(1);
    expect(p.cash(3)).toBeCloseTo(2);
    expect(p.history(0)).toBeCloseTo(4);
    // c.example/1 has the most cash now, so it is dispatched first.
    expect(f.dispatch(10_000)!.url).toBe('https://c.example/1');
  });

  it('imported signals reorder the queue; a host score for an unknown host is parked', () => {
    const f = new Frontier(1, 0, { prioritizer: true });
    f.importHostSignal({ host: 'b.example', score: 50 });
    f.seed('https://a.example/1', 'a.example', 1, 0, 0, 0);
    f.seed('https://a.example/2', 'a.example', 1, 0, 0, 0);
    f.seed('https://b.example/1', 'b.example', 1, 0, 0, 0);
    expect(f.importUrlSignal({ url: 'https://a.example/2', host: 'a.example', rank: 10 })).toBe(true);
    expect(f.importUrlSignal({ url: 'https://zz.example/', host: 'zz.example', rank: 10 })).toBe(false);
    const order = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 })).map((d) => d.url);
    expect(order.slice(0, 2)).toEqual(['https://b.example/1', 'https://a.example/2']);
    f.importHostSignal({ host: 'a.example', score: 1 });
    expect(new Frontier(1, 0, {}).importUrlSignal({ key: '0'.repeat(32), rank: 1 })).toBe(false);
    expect(() => f.importHostSignal({ host: 'a', score: Number.NaN })).toThrow(InvalidArgumentError);
  });

  it('warm stamps validators on a never-crawled URL only', () => {
    const f = new Frontier(1, 0, {});
    f.seed('https://a.example/1', 'a.example', 1, 0, 0, 0);
    const req = f.dispatch(0)!;
    const hex = keyToHex(req.key);
    const g = new Frontier(1, 0, {});
    g.seed('https://a.example/1', 'a.example', 1, 0, 0, 0);
    expect(g.warm(hex, '"abc"', 1_700_000_000, 77n)).toBe(true);
    const r2 = g.dispatch(0)!;
    expect([r2.etag, r2.lastModified]).toEqual(['"abc"', 1_700_000_000]);
    g.report({ row: r2.row, url: r2.url, status: 200, etag: '"new"' }, 0);
    expect(g.warm(hex, '"old"', 1, 1n)).toBe(false);
    expect(g.warm('f'.repeat(32), undefined, undefined, undefined)).toBe(false);
    expect(() => g.warm('nothex', undefined, undefined, undefined)).toThrow(/32 hex digits/);
  });

  it('stats and dueUrls count and list what is due', () => {
    const f = new Frontier(1, 10, {});
    f.seed('https://a.example/1', 'a.example', 1, 10, 10, 0);
    f.seed('https://a.example/2', 'a.example', 1, 10, 12, 0);
    f.seed('https://b.example/1', 'b.example', 1, 10, 11, 0);
    const s = f.stats(11);
    expect([s.urls, s.hosts, s.pending, s.due, s.nextDueHours, s.seenKeys]).toEqual([3, 2, 3, 2, 10, 3]);
    expect(s.memoryBytes).toBeGreaterThan(0);
    expect(f.dueUrls(11).map((d) => d.url)).toEqual(['https://a.example/1', 'https://b.example/1']);
    expect(f.dueUrls(20, 'a.example', 1).map((d) => d.url)).toEqual(['https://a.example/1']);
    expect(f.dueUrls(20, 'nope.example')).toEqual([]);
  });
});

describe('dead hosts', () => {
  const hostFlags = (f: Frontier): number => f.checkpoint().hosts[0]!.flags;
  const DEAD = 2; // HostFlags.Dead

  it('a host pinned at the ceiling by repeated failures is flagged dead, and recovers on success', () => {
    const f = new Frontier(1, 0, { stateMachine: true, retryLimit: 50, politeness: { ceilingMs: 8_000 } });
    for (let i = 0; i < 10; i++) f.seed(`https://a.example/p${i}`, 'a.example', 1, 0, 0, 0);
    let now = 0;
    for (let i = 0; i < 6; i++) {
      const req = f.dispatch(now)!;
      f.report({ row: req.row, url: req.url, status: 503 }, now);
      now = f.nextEligible()!;
    }
    expect(hostFlags(f) & DEAD).toBe(DEAD);
    const req = f.dispatch(now)!;
    f.report({ row: req.row, url: req.url, status: 200 }, now);
    expect(hostFlags(f) & DEAD).toBe(0);
  });

  it('a healthy host whose robots crawl-delay exceeds the ceiling is never flagged dead', () => {
    const f = new Frontier(1, 0, { stateMachine: true, politeness: { ceilingMs: 8_000 } });
    for (let i = 0; i < 6; i++) f.seed(`https://a.example/p${i}`, 'a.example', 1, 0, 0, 20_000);
    let now = 0;
    for (let i = 0; i < 6; i++) {
      const req = f.dispatch(now)!;
      f.report({ row: req.row, url: req.url, status: 200 }, now);
      expect(hostFlags(f) & DEAD).toBe(0);
      now = f.nextEligible() ?? now;
    }
  });
});
