// The lead on saturated hosts (`WithFreshnessOptions.leadSlots`, DESIGN §20 "A lead on
// saturated hosts"): a URL is made due `slots` of its host's crawl intervals ahead of its time,
// an early start times the next interval from the URL's own time (so the lead never raises a
// URL's rate), the background pass keeps that time, and the frontier then serves a host's URLs
// in due order — an early URL never overtakes one already due.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LEAD_SLOTS, Frontier, type FetchRequest, type Outcome, withFreshness } from '../../src/index.js';
import { freshnessParams, leadHours, newFreshnessRecord, reviseNextDue, setNextDue } from '../../src/freshness/index.js';
import { RowQueues } from '../../src/frontier/queues.js';
import { UrlTable } from '../../src/frontier/table.js';
import { UrlStatus } from '../../src/model/index.js';

const p = freshnessParams({ hostSpreadWindow: 0, minReprobeGap: 1 });
const HOUR = 3_600_000;

describe('leadHours', () => {
  it('is slots of the host crawl interval, 0 without a finite capacity or slots', () => {
    expect(leadHours(0.25, 8)).toBe(32);
    expect(leadHours(3600, 8)).toBeCloseTo(8 / 3600, 12);
    expect(leadHours(Number.POSITIVE_INFINITY, 8)).toBe(0);
    expect(leadHours(0, 8)).toBe(0);
    expect(leadHours(0.25, 0)).toBe(0);
    expect(DEFAULT_LEAD_SLOTS).toBe(8);
  });
});

describe('setNextDue with a lead', () => {
  it('makes the URL due the lead earlier than without one (up to the hour grid), never before now + minReprobeGap', () => {
    fc.assert(
      fc.property(fc.double({ min: 2, max: 2000, noNaN: true }), fc.double({ min: 0, max: 48, noNaN: true }), fc.integer({ min: 0, max: 0xffffffff }), (interval, lead, key) => {
        const now = 500_000;
        const a = newFreshnessRecord({ spreadKey: key, crawlCount: 3, nextDue: now - 1 });
        const b = newFreshnessRecord({ spreadKey: key, crawlCount: 3, nextDue: now - 1 - lead });
        const plain = setNextDue(a, interval, now, p);
        const led = setNextDue(b, interval, now, p, lead);
        const floor = Math.ceil(now + p.minReprobeGap);
        expect(led).toBeGreaterThanOrEqual(floor);
        expect(led).toBe(Math.max(floor, plain - lead > floor ? led : floor));
        expect(Math.abs(led - Math.max(floor, plain - lead))).toBeLessThanOrEqual(1);
      }),
      { seed: 2112, numRuns: 400 },
    );
  });

  it('an early start is timed from the URL’s own time: a URL fetched as soon as it is released keeps its rate', () => {
    for (const [interval, lead] of [[30, 8], [100, 32], [7.5, 4], [50, 0]] as const) {
      const r = newFreshnessRecord({ spreadKey: 12345, crawlCount: 1 });
      let now = 400_000;
      setNextDue(r, interval, now, p, lead);
      const starts: number[] = [];
      for (let k = 0; k < 400; k++) {
        now = r.nextDue; // the host is free: fetched the hour it is released
        r.crawlCount++;
        r.lastCrawled = now;
        starts.push(now);
        setNextDue(r, interval, now, p, lead);
      }
      const mean = (starts[starts.length - 1]! - starts[0]!) / (starts.length - 1);
      expect(Math.abs(mean - interval)).toBeLessThan(0.05 * interval);
    }
  });

  it('a late start delays the next: no catching up on the lost time', () => {
    const r = newFreshnessRecord({ spreadKey: 7, crawlCount: 5, nextDue: 1000 });
    // Due at 1000 + 8 (its own time); started at 1030, late: the next is one interval after the start.
    const due = setNextDue(r, 40, 1030, p, 8);
    expect(Math.abs(due - (1030 + 40 - 8))).toBeLessThanOrEqual(1);
  });
});

describe('reviseNextDue with a lead', () => {
  it('leaves an early-started URL alone while its interval holds, and moves it by the change when it does not', () => {
    const lead = 16;
    const r = newFreshnessRecord({ spreadKey: 99, crawlCount: 4, nextDue: 10_000 });
    // Released at 10 000, its own time 10 016, fetched at once.
    r.lastCrawled = 10_000;
    const due = setNextDue(r, 60, 10_000, p, lead);
    expect(Math.abs(due - (10_016 + 60 - lead))).toBeLessThanOrEqual(1);
    r.status = UrlStatus.Crawled;
    expect(reviseNextDue(r, 60, 10_001, p, 0.1, lead)).toBe(false);
    // Timed from lastCrawled instead, it would sit 16 hours earlier: more than the 6 h tolerance, so
    // the pass would have moved it (and taken the lead off every interval).
    expect(Math.abs(10_000 + 60 - lead - r.nextDue)).toBeGreaterThan(6);
    // The interval halves: the URL moves to its own time + the new interval − the lead.
    expect(reviseNextDue(r, 30, 10_001, p, 0.1, lead)).toBe(true);
    expect(Math.abs(r.nextDue - (10_016 + 30 - lead))).toBeLessThanOrEqual(1);
  });
});

describe('host queues in due order (RowQueues dueOrder)', () => {
  it('pops the earliest due hour first, ties by priority then key; the host order reads the first row’s priority', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ host: fc.nat(2), due: fc.integer({ min: 100, max: 110 }), prio: fc.integer({ min: 0, max: 3 }), reprio: fc.option(fc.integer({ min: 0, max: 3 })) }), { minLength: 1, maxLength: 120 }),
        fc.boolean(),
        (rows, bulk) => {
          const t = new UrlTable(16);
          const q = new RowQueues(t, true);
          for (let h = 0; h < 3; h++) q.ensureHost(h);
          const ids: number[][] = [[], [], []];
          rows.forEach((x, i) => {
            const row = t.addRow();
            t.key.set([1, 1, i, 1000 - i], row * 4);
            t.host[row] = x.host;
            t.nextDue[row] = x.due;
            t.priority[row] = x.prio;
            ids[x.host]!.push(row);
          });
          q.ensureRows(t.rows);
          for (let h = 0; h < 3; h++) {
            if (bulk) q.pushAll(h, ids[h]!, ids[h]!.length);
            else for (const r of ids[h]!) q.push(r);
          }
          // A priority change (OPIC credit) re-sifts but does not move a row in due order past an earlier one.
          rows.forEach((x, row) => {
            if (x.reprio !== null) {
              t.priority[row] = x.reprio;
              q.update(row);
            }
          });
          for (let h = 0; h < 3; h++) {
            const want = [...ids[h]!].sort((a, b) => t.nextDue[a]! - t.nextDue[b]! || t.priority[b]! - t.priority[a]! || (q.better(a, b) ? -1 : 1));
            const got: number[] = [];
            while (q.size(h) > 0) {
              expect(q.topPriority[h]).toBe(t.priority[q.peek(h)]!);
              got.push(q.pop(h));
            }
            expect(got).toEqual(want);
            expect(q.topPriority[h]).toBe(Number.NEGATIVE_INFINITY);
          }
        },
      ),
      { seed: 4242, numRuns: 200 },
    );
  });
});

describe('the lead through a real frontier', () => {
  /** A saturated host of 40 pages with a 4-hour crawl delay; returns the fetch starts (ms, URL). */
  function crawl(leadSlots: number): { atMs: number; url: string }[] {
    const delayMs = 4 * HOUR;
    const hook = withFreshness(null, 10, { leadSlots });
    expect(hook.queueOrder).toBe(leadSlots > 0 ? 'due' : 'priority');
    const f = new Frontier(1, 480_000, { freshness: hook, scheduleIndex: true, stateMachine: true, politeness: { ceilingMs: 4 * delayMs } });
    for (let i = 0; i < 40; i++) f.seed(`https://c.example/p/${i}`, 'c.example', 1 + (i % 5), 480_000, 480_000, delayMs);
    const fetch = (r: FetchRequest, atMs: number): Outcome => {
      const i = Number(r.url.slice(r.url.lastIndexOf('/') + 1));
      const version = Math.floor(atMs / HOUR / (6 * (1 + (i % 20))));
      return { row: r.row, url: r.url, status: 200, contentFp: BigInt(1 + i * 100_003 + version) };
    };
    const log = f.drain(480_000 * HOUR, fetch, { untilMs: (480_000 + 24 * 40) * HOUR });
    f.free();
    return log.map((d) => ({ atMs: d.atMs, url: d.url }));
  }

  it('keeps the crawl delay, delivers the host’s capacity, and spreads it over every page (due order) where priority order favoured some', () => {
    const led = crawl(DEFAULT_LEAD_SLOTS);
    const plain = crawl(0);
    for (const run of [led, plain]) for (let k = 1; k < run.length; k++) expect(run[k]!.atMs - run[k - 1]!.atMs).toBeGreaterThanOrEqual(4 * HOUR);
    const after = (run: typeof led) => run.filter((d) => d.atMs >= (480_000 + 24 * 10) * HOUR);
    // 30 days at one fetch per 4 hours: 180 slots; both use (nearly) all of them.
    expect(after(led).length).toBeGreaterThanOrEqual(176);
    expect(after(plain).length).toBeGreaterThanOrEqual(176);
    const spread = (run: typeof led): number => {
      const per = new Map<string, number>();
      for (const d of after(run)) per.set(d.url, (per.get(d.url) ?? 0) + 1);
      return Math.max(...per.values()) - Math.min(...per.values());
    };
    expect(spread(led)).toBeLessThan(spread(plain));
  });
});
