// Replay is exact: a store rebuilt from its journal operations checkpoints to the same bytes as
// the store that applied them live, for random sequences of every operation kind (seeded).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  OpWriter,
  decodeCheckpoint,
  encodeCheckpoint,
  replayRecord,
  writeControl,
  writeDiscovered,
  writeKnown,
  writeServed,
} from '../../src/urlfrontier/codec.js';
import { type OpLog, UrlFrontierStore, itemBytes } from '../../src/urlfrontier/store.js';

/** Journals into `w`; with `pieceBytes`, each serving in pieces as FrontierLog cuts a large one. */
function recorder(w: OpWriter, pieceBytes?: number): OpLog {
  return {
    discovered: (c, u, k, m, now) => writeDiscovered(w, c, u, k, m, now),
    known: (c, u, k, m, due, now) => writeKnown(w, c, u, k, m, due, now),
    served: (c, k, urls, now, until) => {
      let i = 0;
      do i = writeServed(w, c, k, urls, now, until, i, pieceBytes);
      while (i < urls.length);
    },
    control: (op) => writeControl(w, op),
  };
}

/** Both logs at once (the store reports to one). */
function both(a: OpLog, b: OpLog): OpLog {
  return {
    discovered: (...x) => (a.discovered(...x), b.discovered(...x)),
    known: (...x) => (a.known(...x), b.known(...x)),
    served: (...x) => (a.served(...x), b.served(...x)),
    control: (op) => (a.control(op), b.control(op)),
  };
}

const settings = { defaultDelayMs: 500, canonicalize: false };

describe('codec', () => {
  it('journal replay rebuilds the live store byte for byte (checkpoint equality)', () => {
    const op = fc.oneof(
      fc.record({ t: fc.constant('disc' as const), u: fc.nat(30), q: fc.nat(3), c: fc.nat(1), fp: fc.constantFrom('', 'a', 'b') }),
      fc.record({ t: fc.constant('known' as const), u: fc.nat(30), q: fc.nat(3), c: fc.nat(1), due: fc.nat(3), fp: fc.constantFrom('', 'a', 'b'), auto: fc.boolean() }),
      fc.record({ t: fc.constant('get' as const), per: fc.nat(3), qs: fc.nat(2), any: fc.boolean() }),
      fc.record({ t: fc.constant('tick' as const), ms: fc.nat(20_000) }),
      fc.record({ t: fc.constant('delay' as const), q: fc.nat(4), ms: fc.nat(3000) }),
      fc.record({ t: fc.constant('block' as const), q: fc.nat(4), ms: fc.nat(30_000) }),
      fc.record({ t: fc.constant('limit' as const), q: fc.nat(3), n: fc.nat(3) }),
      fc.record({ t: fc.constant('active' as const), on: fc.boolean() }),
      fc.record({ t: fc.constant('delq' as const), q: fc.nat(3) }),
      fc.record({ t: fc.constant('delc' as const), c: fc.nat(1) }),
      fc.record({ t: fc.constant('purge' as const), q: fc.nat(4) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const live = new UrlFrontierStore(settings);
        const w = new OpWriter(1024);
        // …and every serving cut into pieces of one URL (each piece is at least one URL).
        const pieces = new OpWriter(1024);
        live.attach(both(recorder(w), recorder(pieces, 1)));
        let now = 5_000_000;
        const crawl = (c: number): string => (c === 0 ? '' : 'other');
        const meta = (fp: string, auto = false) => ({
          ...(fp ? { 'meguri.fingerprint': { values: [fp] } } : {}),
          ...(auto ? { 'meguri.refetch': { values: ['auto'] } } : {}),
        });
        for (const o of ops) {
          switch (o.t) {
            case 'disc':
              live.putDiscovered(`https://h${o.q}.example/${o.u}`, '', crawl(o.c), meta(o.fp), now);
              break;
            case 'known':
              live.putKnown(`https://h${o.q}.example/${o.u}`, '', crawl(o.c), meta(o.fp, o.auto), o.due === 0 ? 0 : Math.floor(now / 1000) + o.due, now);
              break;
            case 'get':
              live.getUrls({ maxUrlsPerQueue: o.per, maxQueues: o.qs, key: '', leaseMs: 10_000, crawl: o.any ? undefined : '' }, now);
              break;
            case 'tick':
              now += o.ms;
              break;
            case 'delay':
              live.control({ kind: 'delay', crawl: 'DEFAULT', key: o.q === 4 ? '' : `h${o.q}.example`, delayMs: o.ms });
              break;
            case 'block':
              live.control({ kind: 'block', crawl: 'DEFAULT', key: `h${o.q}.example`, untilMs: now + o.ms });
              break;
            case 'limit':
              live.control({ kind: 'limit', crawl: 'DEFAULT', key: `h${o.q}.example`, limit: o.n });
              break;
            case 'active':
              live.control({ kind: 'active', state: o.on });
              break;
            case 'delq':
              live.control({ kind: 'deleteQueue', crawl: 'DEFAULT', key: `h${o.q}.example` });
              break;
            case 'delc':
              live.control({ kind: 'deleteCrawl', crawl: o.c === 0 ? 'DEFAULT' : 'other' });
              break;
            case 'purge':
              live.control({ kind: 'purge', crawl: 'DEFAULT', key: o.q === 4 ? '' : `h${o.q}.example`, beforeMs: now - 10_000 });
              break;
          }
        }
        const a = encodeCheckpoint(live, 7n);
        for (const journal of [w, pieces]) {
          const replayed = new UrlFrontierStore(settings);
          replayRecord(journal.view8().slice(), replayed);
          // Rotation cursors are not journaled (a restart may start the rotation anywhere).
          for (const [id, c] of live.crawls) {
            const r = replayed.crawls.get(id);
            if (r && c.own.next) r.own.next = r.queues.get(c.own.next.key);
          }
          expect(Buffer.from(encodeCheckpoint(replayed, 7n)).equals(Buffer.from(a))).toBe(true);
        }
        // and the checkpoint itself round-trips
        const back = new UrlFrontierStore(settings);
        expect(decodeCheckpoint(a, back)).toBe(7n);
        expect(Buffer.from(encodeCheckpoint(back, 7n)).equals(Buffer.from(a))).toBe(true);
      }),
      { seed: 0xc0dec, numRuns: 300 },
    );
  });

  it('itemBytes is the size of a known item\'s operation, which a discovered one\'s does not exceed', () => {
    const meta = { 'kéy': { values: ['', 'v', '日本語', '😀'] }, empty: { values: [] } };
    for (const [crawl, url, key] of [['DEFAULT', 'https://a.example/ü', 'a.example'], ['c', 'https://x/', '']] as const) {
      for (const m of [meta, {}]) {
        const known = new OpWriter(16);
        writeKnown(known, crawl, url, key, m, 1, 2);
        expect(itemBytes(crawl, url, key, m)).toBe(known.length);
        const disc = new OpWriter(16);
        writeDiscovered(disc, crawl, url, key, m, 2);
        expect(disc.length).toBeLessThanOrEqual(known.length);
      }
    }
  });

  it('writeServed cuts a serving where the operation reaches maxBytes, one URL past it at most', () => {
    const urls = Array.from({ length: 100 }, (_, i) => `https://a.example/${i}`);
    const w = new OpWriter(16);
    const ends: number[] = [];
    let i = 0;
    do {
      const before = w.length;
      i = writeServed(w, 'DEFAULT', 'a.example', urls, 1, 2, i, 200);
      ends.push(i);
      expect(w.length - before).toBeLessThan(200 + 4 + 21);
    } while (i < urls.length);
    expect(ends.length).toBeGreaterThan(10);
    const store = new UrlFrontierStore(settings);
    for (const u of urls) store.putDiscovered(u, '', '', undefined, 0);
    replayRecord(w.view8().slice(), store);
    expect(store.stats('DEFAULT', 'a.example', 1)).toMatchObject({ size: 100, inProcess: 100 });
  });
});
