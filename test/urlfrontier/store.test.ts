// The store's pure parts against oracles: the host fast path against the WHATWG parser, and
// the queue invariants under random operation sequences (seeded).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_BYTES } from '../../src/journal/index.js';
import { decodeCheckpoint, encodeCheckpoint } from '../../src/urlfrontier/codec.js';
import { MAX_ITEM_BYTES, UrlFrontierStore, defaultKey, itemBytes } from '../../src/urlfrontier/store.js';

const SEED = 0x5eed16;

function oracle(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

describe('defaultKey', () => {
  it('equals the WHATWG hostname on hosts built from the risky alphabet (seed printed on failure)', () => {
    const hostChar = fc.constantFrom(...'ab-.0x9Z_%@:[]'.split(''));
    const url = fc.tuple(fc.constantFrom('http://', 'https://', 'ftp://', 'https:'), fc.array(hostChar, { maxLength: 12 }), fc.constantFrom('', '/', '/p?q', '#f', '?x'));
    let fast = 0;
    fc.assert(
      fc.property(url, ([scheme, host, tail]) => {
        const u = scheme + host.join('') + tail;
        if (/^[a-z0-9.-]+$/.test(host.join('')) && scheme.endsWith('//')) fast++;
        expect(defaultKey(u)).toBe(oracle(u));
      }),
      { seed: SEED, numRuns: 5000 },
    );
    expect(fast).toBeGreaterThan(100); // the fast path was exercised
  });

  it('handles the shapes crawlers send', () => {
    for (const u of ['https://www.example.com/a', 'http://example.com', 'https://EXAMPLE.com/', 'https://a.example:8080/', 'https://user@a.example/', 'http://127.0.0.1/', 'http://0x7f.1/', 'https://xn--nxasmq6b.example/', 'https://a.example./x', 'mailto:x@y', 'file:///etc/passwd']) {
      expect(defaultKey(u)).toBe(oracle(u));
    }
  });
});

describe('UrlFrontierStore invariants', () => {
  it('counters match the URLs after random puts, servings, updates, expiries and deletes', () => {
    const op = fc.oneof(
      fc.record({ t: fc.constant('disc' as const), u: fc.nat(40), q: fc.nat(4) }),
      fc.record({ t: fc.constant('known' as const), u: fc.nat(40), q: fc.nat(4), due: fc.nat(3) }),
      fc.record({ t: fc.constant('get' as const), per: fc.nat(3), qs: fc.nat(3) }),
      fc.record({ t: fc.constant('tick' as const), ms: fc.nat(40_000) }),
      fc.record({ t: fc.constant('delq' as const), q: fc.nat(4) }),
      fc.record({ t: fc.constant('purge' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const s = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
        let now = 1_000_000;
        const leasedUntil = new Map<string, number>();
        for (const o of ops) {
          switch (o.t) {
            case 'disc':
              s.putDiscovered(`https://h${o.q}.example/${o.u}`, '', '', undefined, now);
              break;
            case 'known':
              s.putKnown(`https://h${o.q}.example/${o.u}`, '', '', undefined, o.due === 0 ? 0 : Math.floor(now / 1000) + o.due * 10, now);
              leasedUntil.delete(`https://h${o.q}.example/${o.u}`);
              break;
            case 'get':
              for (const sv of s.getUrls({ maxUrlsPerQueue: o.per, maxQueues: o.qs, key: '', leaseMs: 30_000, crawl: '' }, now)) {
                // never served twice inside a lease
                expect((leasedUntil.get(sv.url) ?? 0) <= now).toBe(true);
                leasedUntil.set(sv.url, now + 30_000);
              }
              break;
            case 'tick':
              now += o.ms;
              break;
            case 'delq':
              s.control({ kind: 'deleteQueue', crawl: 'DEFAULT', key: `h${o.q}.example` });
              for (const k of [...leasedUntil.keys()]) if (k.startsWith(`https://h${o.q}.example/`)) leasedUntil.delete(k);
              break;
            case 'purge':
              s.control({ kind: 'purge', crawl: 'DEFAULT', key: '', beforeMs: now - 20_000 });
              for (const k of [...leasedUntil.keys()]) if (!s.crawls.get('DEFAULT')?.urls.has(k)) leasedUntil.delete(k);
              break;
          }
          const c = s.crawls.get('DEFAULT');
          if (c === undefined) continue;
          s.expire(c, now);
          for (const q of c.order) {
            const mine = [...c.urls.values()].filter((r) => r.queue === q);
            expect(q.total).toBe(mine.length);
            expect(q.completed).toBe(mine.filter((r) => r.dueMs === Infinity).length);
            expect(q.leased).toBe(mine.filter((r) => r.leaseMs > 0).length);
            expect(q.heap.size).toBe(mine.filter((r) => r.dueMs !== Infinity).length);
          }
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('lease bookkeeping', () => {
  it('stale lease entries are compacted away: the heap stays bounded by live leases, not completions', () => {
    const s = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    const now = 1_000_000;
    let maxHeap = 0;
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 10_000; i++) s.putDiscovered(`https://h${i % 100}.example/${round}/${i}`, '', '', undefined, now);
      const served = s.getUrls({ maxUrlsPerQueue: 0, maxQueues: 0, key: '', leaseMs: 86_400_000, crawl: '' }, now);
      expect(served.length).toBe(10_000);
      // all but 10 complete at once: their day-long lease entries go stale
      for (let i = 10; i < served.length; i++) s.putKnown(served[i]!.url, '', '', undefined, 0, now);
      maxHeap = Math.max(maxHeap, s.crawls.get('DEFAULT')!.leases.size);
    }
    // 400 k leases granted; at most ~10.4 k live at a time (one round) → bound 2·live + slack + one round
    expect(maxHeap).toBeLessThan(2 * 10_400 + 65_536 + 10_000);
    expect(s.stats('DEFAULT', '', now).inProcess).toBe(400);
    // the live leases still expire on time
    expect(s.stats('DEFAULT', '', now + 86_400_000).inProcess).toBe(0);
  });
});

describe('item size limit', () => {
  it('an item whose journal operation exceeds maxItemBytes (default a quarter of a journal record) is SKIPPED, the store unchanged', () => {
    const s = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    expect(s.maxItemBytes).toBe(MAX_ITEM_BYTES);
    expect(MAX_ITEM_BYTES).toBe(MAX_RECORD_BYTES / 4);
    const base = itemBytes('DEFAULT', 'https://a.example/1', 'a.example', { m: { values: [''] } });
    const v = 'x'.repeat(MAX_ITEM_BYTES - base);
    expect(s.putDiscovered('https://a.example/1', '', '', { m: { values: [v] } }, 0)).toBe('OK');
    expect(s.putDiscovered('https://a.example/2', '', '', { m: { values: [`${v}x`] } }, 0)).toBe('SKIPPED');
    expect(s.putKnown('https://a.example/1', '', '', { m: { values: [`${v}x`] } }, 0, 0)).toBe('SKIPPED');
    expect(s.putDiscovered('https://b.example/1', '', 'new', { m: { values: [`${v}xxxxx`] } }, 0)).toBe('SKIPPED'); // 'new' is 4 bytes shorter than 'DEFAULT'
    expect(s.crawls.has('new')).toBe(false);
    expect(s.stats('DEFAULT', '', 0)).toMatchObject({ size: 1, completed: 0 });
  });

  it('counts UTF-8 bytes, not 3 per UTF-16 unit: a multibyte item just within a lowered limit goes in', () => {
    const base = itemBytes('DEFAULT', 'https://a.example/1', 'a.example', { m: { values: [''] } });
    const e = 'é'.repeat(500); // 2 bytes each; 3 × its length would be over the limit
    const limit = base + 1000;
    const s = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false, maxItemBytes: limit });
    expect(itemBytes('DEFAULT', 'https://a.example/1', 'a.example', { m: { values: [e] } })).toBe(limit);
    expect(s.putDiscovered('https://a.example/1', '', '', { m: { values: [e] } }, 0)).toBe('OK');
    expect(s.putDiscovered('https://a.example/2', '', '', { m: { values: [`${e}é`] } }, 0)).toBe('SKIPPED');
  });
});

describe('GetURLs of any crawl: one ring of every queue', () => {
  const any = { maxUrlsPerQueue: 1, maxQueues: 5, key: '', leaseMs: 3_600_000, crawl: undefined };
  const keys = (s: UrlFrontierStore, now: number, maxQueues = 5): string[] => s.getUrls({ ...any, maxQueues }, now).map((u) => `${u.crawl} ${u.key}`);
  const put = (s: UrlFrontierStore, crawl: string, host: string, now: number): void => {
    expect(s.putDiscovered(`https://${host}.example/`, '', crawl, undefined, now)).toBe('OK');
  };

  it('a crawl gaining queues between calls does not starve another: new queues join behind every waiting one', () => {
    const s = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    let now = 1_000_000;
    let nextA = 0;
    for (; nextA < 50; nextA++) put(s, 'A', `a${nextA}`, now);
    for (let i = 0; i < 5; i++) put(s, 'B', `b${i}`, now);
    const served: string[][] = [];
    for (let call = 0; call < 40; call++) {
      served.push(keys(s, now));
      for (let j = 0; j < 5; j++, nextA++) put(s, 'A', `a${nextA}`, now); // A grows by 5 queues a call
      now += 1000;
    }
    // The 55 queues there at the start come first, in creation order: B's 5 in call 11 (with one
    // list of crawl A's queues then B's, A's new queues went in ahead of B's: B got nothing).
    expect(served[10]).toEqual(['B b0.example', 'B b1.example', 'B b2.example', 'B b3.example', 'B b4.example']);
    expect(served.flat().filter((k) => k.startsWith('B ')).length).toBe(5);
    // then A's queues added since, in the order they joined
    expect(served[11]).toEqual(['A a50.example', 'A a51.example', 'A a52.example', 'A a53.example', 'A a54.example']);
  });

  it('deleting a queue or a crawl skips no queue: the rotation goes on from the queue it stopped before', () => {
    const s = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    const now = 1_000_000;
    for (let i = 0; i < 6; i++) put(s, 'A', `a${i}`, now);
    for (let i = 0; i < 6; i++) put(s, 'B', `b${i}`, now);
    for (let i = 0; i < 3; i++) put(s, 'C', `c${i}`, now);
    expect(keys(s, now, 3)).toEqual(['A a0.example', 'A a1.example', 'A a2.example']);
    // a queue behind the rotation point: an index into one list would now start at a4
    s.control({ kind: 'deleteQueue', crawl: 'A', key: 'a0.example' });
    expect(keys(s, now, 2)).toEqual(['A a3.example', 'A a4.example']);
    // the queue the rotation stopped before: it goes on from the next one
    s.control({ kind: 'deleteQueue', crawl: 'A', key: 'a5.example' });
    expect(keys(s, now, 2)).toEqual(['B b0.example', 'B b1.example']);
    // a whole crawl, its queues behind the rotation point
    s.control({ kind: 'deleteCrawl', crawl: 'A' });
    expect(keys(s, now, 2)).toEqual(['B b2.example', 'B b3.example']);
    // a whole crawl holding the queue the rotation stopped before
    s.control({ kind: 'deleteCrawl', crawl: 'B' });
    expect(keys(s, now, 5)).toEqual(['C c0.example', 'C c1.example', 'C c2.example']);
    // a queue created again after its deletion joins at the tail, behind every queue there
    put(s, 'A', 'a0', now);
    put(s, 'C', 'c3', now);
    expect(keys(s, now, 5)).toEqual(['A a0.example', 'C c3.example']);
    expect(s.ring.size).toBe([...s.crawls.values()].reduce((n, c) => n + c.order.length, 0));
  });
});

describe("GetURLs of one crawl: the crawl's own ring", () => {
  const one = { maxUrlsPerQueue: 1, maxQueues: 5, key: '', leaseMs: 3_600_000, crawl: 'A' };
  const keys = (s: UrlFrontierStore, now: number, maxQueues = 5): string[] => s.getUrls({ ...one, maxQueues }, now).map((u) => u.key);
  const put = (s: UrlFrontierStore, host: string, now: number): void => {
    expect(s.putDiscovered(`https://${host}.example/`, '', 'A', undefined, now)).toBe('OK');
  };

  it('a crawl gaining queues between calls still comes back to its first ones', () => {
    const s = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    let now = 1_000_000;
    let next = 0;
    // Each queue holds many URLs: every queue serves at every turn.
    for (; next < 20; next++) for (let k = 0; k < 50; k++) expect(s.putDiscovered(`https://a${next}.example/${k}`, '', 'A', undefined, now)).toBe('OK');
    const served: string[] = [];
    for (let call = 0; call < 12; call++) {
      // Leases shorter than a call's gap: a queue may serve again at its next turn.
      served.push(...s.getUrls({ ...one, leaseMs: 500 }, now).map((u) => u.key));
      for (let j = 0; j < 5; j++, next++) put(s, `a${next}`, now); // the crawl grows by 5 queues a call
      now += 1000;
    }
    // Calls 1–4 serve the first 20 queues. A queue created joins behind the queues just served,
    // so call 5 serves a0–a4 again and call 6 the first five created since (before: a cursor into
    // the creation order, with queues appended after it, never came back to a0 while the crawl
    // grew as fast as it was walked).
    expect(served.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `a${i}.example`));
    expect(served.slice(20, 25)).toEqual(Array.from({ length: 5 }, (_, i) => `a${i}.example`));
    expect(served.slice(25, 30)).toEqual(Array.from({ length: 5 }, (_, i) => `a${20 + i}.example`));
  });

  it('its rotation point goes across a checkpoint, and deleting a queue skips none', () => {
    const s = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    const now = 1_000_000;
    for (let i = 0; i < 6; i++) put(s, `a${i}`, now);
    expect(keys(s, now, 2)).toEqual(['a0.example', 'a1.example']);
    s.control({ kind: 'deleteQueue', crawl: 'A', key: 'a2.example' });
    expect(keys(s, now, 2)).toEqual(['a3.example', 'a4.example']);
    const back = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
    decodeCheckpoint(encodeCheckpoint(s, 1n), back);
    // Once the leases ran out, every queue serves again, from where the walk stopped.
    const later = now + one.leaseMs + 1;
    expect(keys(back, later, 6)).toEqual(['a5.example', 'a0.example', 'a1.example', 'a3.example', 'a4.example']);
  });
});
