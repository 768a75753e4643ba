// A host's rate cap over a window (src/frontier/hostcap.ts, issue 21 finding 3): the ring
// against a sorted-list oracle, the frontier's dispatch never exceeding the cap over any
// window (fast-check), missed slots made up within the window, the capacity a freshness hook
// sees, and the checkpoint (the `caps` section of format minor 5; files without caps unchanged).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CorruptPartitionError,
  FORMAT_MINOR,
  type CrawledRecord,
  type FetchRequest,
  type FreshnessRows,
  Frontier,
  InvalidArgumentError,
  type Outcome,
  SectionId,
  decodePartition,
  encodePartition,
  partitionSections,
} from '../../src/index.js';
import { HostCap } from '../../src/frontier/hostcap.js';

const HOUR = 3_600_000;
const T0 = 480_000; // epoch-hours
const ok = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200, contentFp: 1n, simhash: 1n });
const minorOf = (b: Uint8Array): number => new DataView(b.buffer, b.byteOffset).getUint16(10, true);

/** Whether every half-open window of `w` over the ascending `starts` holds at most `k`. */
function withinCap(starts: readonly number[], k: number, w: number): boolean {
  for (let i = 0; i + k < starts.length; i++) if (starts[i + k]! - starts[i]! < w) return false;
  return true;
}

describe('HostCap', () => {
  it('keeps the K most recent starts in order, whatever order they come in, and opens at s_K + W (oracle)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 60 }), (k, times) => {
        const cap = new HostCap(k, 100);
        const all: number[] = [];
        for (const t of times) {
          cap.record(t);
          all.push(t);
          const want = [...all].sort((a, b) => a - b).slice(-k);
          expect(cap.starts()).toEqual(want);
          expect(cap.openAt()).toBe(want.length < k ? Number.NEGATIVE_INFINITY : want[0]! + 100);
        }
        const now = times.length > 0 ? Math.max(...times) : 0;
        expect(cap.used(now)).toBe(cap.starts().filter((t) => t > now - 100 && t <= now).length);
      }),
      { seed: 2101, numRuns: 200 },
    );
  });

  it('resizes keeping the most recent starts that fit, and rejects a cap that is not one', () => {
    const c = new HostCap(4, 10);
    for (const t of [1, 2, 3, 4]) c.record(t);
    expect(c.resized(2, 10).starts()).toEqual([3, 4]);
    expect(c.resized(6, 20).starts()).toEqual([1, 2, 3, 4]);
    expect(c.perHour).toBe(4 * HOUR / 10);
    for (const [k, w] of [[0, 10], [1.5, 10], [2 ** 21, 10], [1, 0], [1, Infinity], [1, Number.NaN]] as const) {
      expect(() => new HostCap(k, w), `${k}/${w}`).toThrow(InvalidArgumentError);
    }
  });
});

/** A one-partition crawl of `hosts` capped hosts: URLs arrive at random hours, some external starts. */
interface CapCase {
  readonly hosts: { readonly k: number; readonly windowH: number; readonly delayFrac: number; readonly due: readonly number[] }[];
  readonly external: readonly number[];
}

const caseArb: fc.Arbitrary<CapCase> = fc.record({
  hosts: fc.array(
    fc.record({
      k: fc.integer({ min: 1, max: 6 }),
      windowH: fc.integer({ min: 1, max: 48 }),
      // Crawl delay as a fraction of the cap interval W/K: 0 (none) up to 1.5 (the delay binds).
      delayFrac: fc.constantFrom(0, 0.1, 0.25, 0.5, 1, 1.5),
      due: fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 1, maxLength: 30 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  // Dispatch counts after which an external start (`recordStart`) is made to host 0 at the clock.
  external: fc.array(fc.integer({ min: 1, max: 60 }), { maxLength: 4 }),
});

/** Runs a case; returns per host its dispatch starts and all its starts (with external ones), ascending. */
function runCase(c: CapCase, recoverAt = -1): { dispatched: number[][]; all: number[][]; log: string[] } {
  let f = new Frontier(1, T0, { scheduleIndex: true, stateMachine: true, politeness: { ceilingMs: 200 * HOUR } });
  c.hosts.forEach((h, i) => {
    const delay = h.delayFrac * ((h.windowH * HOUR) / h.k);
    h.due.forEach((d, j) => f.seed(`https://c${i}.example/${j}`, `c${i}.example`, 1, T0, T0 + d, delay));
    expect(f.setHostCap(`c${i}.example`, { crawls: h.k, windowMs: h.windowH * HOUR })).toBe(true);
  });
  const dispatched: number[][] = c.hosts.map(() => []);
  const all: number[][] = c.hosts.map(() => []);
  const log: string[] = [];
  let now = T0 * HOUR;
  const end = (T0 + 400) * HOUR;
  let n = 0;
  while (now < end) {
    const req = f.dispatch(now);
    if (req !== undefined) {
      const i = Number(req.host.slice(1, req.host.indexOf('.')));
      dispatched[i]!.push(now);
      all[i]!.push(now);
      log.push(`${req.url}@${now}`);
      // A 503 now and then: the AIMD interval moves, the cap must not care.
      f.report(n % 7 === 3 ? { row: req.row, url: req.url, status: 503 } : ok(req), now);
      n++;
      if (c.external.includes(n)) {
        f.recordStart('c0.example', undefined, now + 1);
        all[0]!.push(now + 1);
      }
      if (n === recoverAt) {
        const bytes = f.checkpointBytes();
        f.free();
        f = Frontier.recover(bytes, { scheduleIndex: true, stateMachine: true, politeness: { ceilingMs: 200 * HOUR } });
        expect(f.checkpointBytes()).toEqual(bytes);
      }
      continue;
    }
    const next = f.nextEligible();
    if (next === undefined || next >= end) break;
    now = Math.max(now, next);
  }
  f.free();
  for (const a of all) a.sort((x, y) => x - y);
  return { dispatched, all, log };
}

describe('HostCap: a start recorded at dispatch and seen leaving later counts once', () => {
  it('confirm moves the open start (again for a second sighting), records a start without one, and never moves it earlier', () => {
    const c = new HostCap(4, 2000);
    c.recordDispatch(0);
    c.confirm(3); // handed to the fetcher late
    c.confirm(7); // its bytes seen leaving
    expect(c.starts()).toEqual([7]);
    c.confirm(5); // earlier than it stands: nothing moves
    expect(c.starts()).toEqual([7]);
    c.record(9); // a start the frontier did not make
    c.recordDispatch(10);
    c.confirm(12);
    expect(c.starts()).toEqual([7, 9, 12]);
    // A resize keeps the open start when it keeps its record.
    const d = c.resized(2, 2000);
    d.confirm(13);
    expect(d.starts()).toEqual([9, 13]);
    // Without an open start (a loaded cap), a confirmation is a start of its own.
    const e = HostCap.fromImage(c.toImage());
    e.confirm(20);
    expect(e.starts()).toEqual([7, 9, 12, 20]);
    // An open start pushed out by K later ones: the sighting counts on its own.
    const f = new HostCap(2, 2000);
    f.recordDispatch(0);
    f.record(1);
    f.record(2);
    f.confirm(3);
    expect(f.starts()).toEqual([2, 3]);
  });

  it("the frontier's cap holds K starts per window as they left, a robots.txt request's included (audit e5: it held K / 2)", () => {
    // As the engine reports them: each page is handed to the fetcher 1 ms after its dispatch
    // and seen leaving 1 ms later (both `recordStart(…, true)`), the robots.txt request seen leaving once.
    let robotsAt: number | undefined;
    let known = false;
    const robots = {
      ready: () => known,
      request: (_host: string, nowMs: number) => {
        robotsAt = nowMs;
        known = true;
        return { started: true };
      },
      isAllowed: () => true,
      crawlDelayMs: () => undefined,
    };
    const f = new Frontier(1, T0, { stateMachine: true, robots, resolver: () => '192.0.2.1', politeness: { defaultIntervalMs: 5, floorMs: 5, ipFloorMs: 5 } });
    for (let j = 0; j < 12; j++) f.seed(`https://e5.example/${j}`, 'e5.example', 1, T0, T0, 0);
    expect(f.setHostCap('e5.example', { crawls: 4, windowMs: 2000 })).toBe(true);
    const sent: number[] = [];
    let now = T0 * HOUR;
    for (let guard = 0; guard < 1000; guard++) {
      const req = f.dispatch(now);
      if (robotsAt !== undefined) {
        f.recordStart('e5.example', '192.0.2.1', robotsAt + 1, true);
        sent.push(robotsAt + 1);
        robotsAt = undefined;
      }
      if (req === undefined) {
        const at = f.nextEligible();
        if (at === undefined) break;
        now = Math.max(now + 1, at);
        continue;
      }
      f.recordStart(req.host, req.ip, now + 1, true);
      f.recordStart(req.host, req.ip, now + 2, true);
      sent.push(now + 2);
      f.report(ok(req), now + 3);
      now += 3;
    }
    expect(sent).toHaveLength(13);
    expect(withinCap(sent, 4, 2000)).toBe(true);
    // The cap is used to the full: 4 starts in the first window (robots.txt and 3 pages), 4 in each next.
    const t0 = T0 * HOUR;
    expect(sent.filter((t) => t < t0 + 2000)).toHaveLength(4);
    expect(sent.filter((t) => t >= t0 + 2000 && t < t0 + 4002)).toHaveLength(4);
    expect(f.checkpoint().hosts.find((h) => h.name === 'e5.example')!.cap!.starts).toEqual(sent.slice(-4));
    f.free();
  });
});

describe('Frontier.setHostCap: dispatch within the cap', () => {
  it('never dispatches a start that makes any window of W hold more than K starts, external starts counted (fast-check)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { dispatched, all } = runCase(c);
        c.hosts.forEach((h, i) => {
          const w = h.windowH * HOUR;
          // Without external starts every window holds at most K.
          if (i > 0 || c.external.length === 0) expect(withinCap(all[i]!, h.k, w)).toBe(true);
          // Each dispatch found fewer than K starts (any kind) in the window before it.
          for (const t of dispatched[i]!) expect(all[i]!.filter((s) => s > t - w && s < t).length).toBeLessThan(h.k);
          // The crawl delay stays a hard minimum spacing.
          const delay = h.delayFrac * (w / h.k);
          const d = dispatched[i]!;
          for (let j = 1; j < d.length; j++) expect(d[j]! - d[j - 1]!).toBeGreaterThanOrEqual(delay);
          // The cap delays work, it never strands a host.
          expect(d.length).toBeGreaterThan(0);
        });
      }),
      { seed: 2102, numRuns: 60 },
    );
  });

  it('makes up slots missed while the queue was empty, within the window and never above the cap', () => {
    // Cap 6 per day (one per 4 h), crawl delay 2 h. One fetch at hour 0, then nothing until
    // ten URLs arrive at hour 12: by hour 24 the host has had its 6 — the 2 slots its empty
    // queue missed are made up at the crawl delay — and the 7th waits for hour 24 (when the
    // start at 0 leaves the window), the 8th for hour 36 (the one at 12).
    const run = (withCap: boolean, delayH: number): number[] => {
      const f = new Frontier(1, T0, { scheduleIndex: true, stateMachine: true, politeness: { ceilingMs: 100 * HOUR } });
      f.seed('https://m.example/first', 'm.example', 1, T0, T0, delayH * HOUR);
      for (let j = 0; j < 10; j++) f.seed(`https://m.example/${j}`, 'm.example', 1, T0, T0 + 12, delayH * HOUR);
      if (withCap) f.setHostCap('m.example', { crawls: 6, windowMs: 24 * HOUR });
      const log = f.drain(T0 * HOUR, ok, { untilMs: (T0 + 72) * HOUR });
      f.free();
      return log.map((d) => d.atMs / HOUR - T0);
    };
    const capped = run(true, 2);
    expect(capped.slice(0, 9)).toEqual([0, 12, 14, 16, 18, 20, 24, 36, 38]);
    expect(withinCap(capped.map((h) => h * HOUR), 6, 24 * HOUR)).toBe(true);
    expect(capped.filter((h) => h < 24)).toHaveLength(6);
    // The crawl delay alone at the cap interval: the slots at hours 4 and 8 are lost for good.
    const spaced = run(false, 4);
    expect(spaced.filter((h) => h < 24)).toEqual([0, 12, 16, 20]);
    // The crawl delay alone at half of it: 7 in the first day, above the cap.
    expect(run(false, 2).filter((h) => h < 24)).toHaveLength(7);
  });

  it('validates its arguments, answers false for an unknown host, shows the cap in the snapshot and removes it with null', () => {
    const f = new Frontier(1, T0, {});
    f.seed('https://s.example/', 's.example', 1, T0, T0, 0);
    expect(f.setHostCap('nope.example', { crawls: 1, windowMs: HOUR })).toBe(false);
    for (const bad of [{ crawls: 0, windowMs: HOUR }, { crawls: 2, windowMs: -1 }, { crawls: 1.5, windowMs: HOUR }, 7]) {
      expect(() => f.setHostCap('s.example', bad as never)).toThrow(InvalidArgumentError);
    }
    expect(f.hostSnapshots('s.example')[0]!.cap).toBeUndefined();
    expect(f.setHostCap('s.example', { crawls: 1, windowMs: 10 * HOUR })).toBe(true);
    expect(f.dispatch(T0 * HOUR)).toBeDefined();
    expect(f.hostSnapshots('s.example')[0]!.cap).toEqual({ crawls: 1, windowMs: 10 * HOUR, used: 1, openAtMs: (T0 + 10) * HOUR });
    expect(f.setHostCap('s.example', null)).toBe(true);
    expect(f.hostSnapshots('s.example')[0]!.cap).toBeUndefined();
    f.free();
  });

  it('a tighter cap sends a ready host back to wait; a removed one wakes a parked host', () => {
    const f = new Frontier(1, T0, { politeness: { ceilingMs: 100 * HOUR } });
    for (let j = 0; j < 3; j++) f.seed(`https://w.example/${j}`, 'w.example', 1, T0, T0, 0);
    f.setHostCap('w.example', { crawls: 1, windowMs: 5 * HOUR });
    const r = f.dispatch(T0 * HOUR)!;
    f.report(ok(r), T0 * HOUR);
    expect(f.dispatch(T0 * HOUR + 60_000)).toBeUndefined();
    expect(f.nextEligible()).toBe((T0 + 5) * HOUR);
    f.setHostCap('w.example', null);
    expect(f.nextEligible()).toBeLessThan((T0 + 1) * HOUR);
    const at = f.nextEligible()!;
    expect(f.dispatch(at)).toBeDefined();
    f.free();
  });
});

describe('the capacity a freshness hook sees', () => {
  it('is the lower of one crawl per interval and crawls / window, per outcome and in the background pass', () => {
    const seen: { cap: number; interval: number }[] = [];
    let caps: number[] = [];
    const hook = {
      nextDue(rec: CrawledRecord, nowHours: number): number {
        seen.push({ cap: rec.hostCapPerHour, interval: rec.hostIntervalMs });
        return nowHours + 24;
      },
      tick(rows: FreshnessRows): number {
        caps = Array.from(rows.hostCapacity);
        return 0;
      },
    };
    const f = new Frontier(1, T0, { freshness: hook, scheduleIndex: true, stateMachine: true, politeness: { ceilingMs: 10 * HOUR } });
    f.seed('https://a.example/', 'a.example', 1, T0, T0, HOUR); // spacing 1/h, cap 6/day: cap binds
    f.seed('https://b.example/', 'b.example', 1, T0, T0, 2 * HOUR); // spacing 0.5/h, cap 48/day: spacing binds
    f.seed('https://c.example/', 'c.example', 1, T0, T0, HOUR); // no cap
    f.setHostCap('a.example', { crawls: 6, windowMs: 24 * HOUR });
    f.setHostCap('b.example', { crawls: 48, windowMs: 24 * HOUR });
    f.drain(T0 * HOUR, ok, 3);
    expect(seen.map((x) => x.cap).sort()).toEqual([0.25, 2, Infinity]);
    f.tickFreshness(T0 + 1);
    expect(caps).toEqual([0.25, 0.5, 1]);
    f.free();
  });
});

describe('checkpoint of host caps (format minor 5, `caps` section)', () => {
  it('round-trips: a recovered frontier keeps each cap and its starts and continues the same dispatch sequence (fast-check)', () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 40 }), (c, at) => {
        const straight = runCase(c);
        const recovered = runCase(c, at);
        expect(recovered.log).toEqual(straight.log);
      }),
      { seed: 2103, numRuns: 30 },
    );
  });

  it('writes the section only when a host has a cap: without one the file is byte for byte what it was', () => {
    const build = (cap: boolean): Frontier => {
      const f = new Frontier(1, T0, { politeness: { ceilingMs: 100 * HOUR } });
      for (let j = 0; j < 4; j++) f.seed(`https://k${j % 2}.example/${j}`, `k${j % 2}.example`, 1, T0, T0, HOUR);
      if (cap) f.setHostCap('k1.example', { crawls: 3, windowMs: 24 * HOUR });
      f.drain(T0 * HOUR, ok, 3);
      return f;
    };
    const plain = build(false);
    const capped = build(true);
    const a = plain.checkpointBytes();
    const b = capped.checkpointBytes();
    expect(minorOf(a)).toBe(3);
    expect(partitionSections(a).map((s) => s.name)).not.toContain('caps');
    expect(minorOf(b)).toBe(5); // the lowest minor that describes it (6 adds a column this file has not)
    expect(FORMAT_MINOR).toBe(8);
    const img = decodePartition(b);
    expect(img.hosts.map((h) => h.cap?.crawls)).toEqual(img.hosts.map((h) => (h.name === 'k1.example' ? 3 : undefined)));
    const k1 = img.hosts.find((h) => h.name === 'k1.example')!.cap!;
    expect(k1.starts.length).toBeGreaterThan(0);
    // Removing the cap gives the plain frontier's bytes back.
    capped.setHostCap('k1.example', null);
    expect(capped.checkpointBytes()).toEqual(a);
    plain.free();
    capped.free();
  });

  it('an older file (minor 4, no caps section) loads with no capped host; an older reader skips the section', () => {
    const f = new Frontier(1, T0, {});
    f.seed('https://o.example/1', 'o.example', 1, T0, T0, 0);
    f.seed('https://o.example/2', 'o.example', 1, T0, T0, 0);
    f.setHostCap('o.example', { crawls: 1, windowMs: 24 * HOUR });
    f.drain(T0 * HOUR, ok, 1);
    const img = f.checkpoint();
    // As a minor-4 writer had it: no cap on the host, no section.
    const old = encodePartition({ ...img, hosts: img.hosts.map(({ cap: _cap, ...h }) => h) });
    expect(minorOf(old)).toBe(3);
    const g = Frontier.recover(old);
    expect(g.hostSnapshots('o.example')[0]!.cap).toBeUndefined();
    expect(g.dispatch(T0 * HOUR + 1000)).toBeDefined(); // no cap: the second URL goes at once
    g.free();
    // The capped file: the second URL waits for the window.
    const h = Frontier.recover(f.checkpointBytes());
    expect(h.dispatch(T0 * HOUR + 1000)).toBeUndefined();
    expect(h.nextEligible()).toBe((T0 + 24) * HOUR);
    h.free();
    f.free();
  });

  it('rejects a damaged caps record, naming the section and the field', () => {
    const f = new Frontier(1, T0, {});
    f.seed('https://d.example/', 'd.example', 1, T0, T0, 0);
    f.seed('https://e.example/', 'e.example', 1, T0, T0, 0);
    f.setHostCap('d.example', { crawls: 3, windowMs: HOUR });
    f.drain(T0 * HOUR, ok, 2);
    const img = f.checkpoint();
    f.free();
    const withCap = (cap: object): Uint8Array =>
      encodePartition({ ...img, hosts: img.hosts.map((h) => (h.name === 'd.example' ? { ...h, cap: { ...h.cap!, ...cap } } : h)) });
    expect(decodePartition(withCap({})).hosts.find((h) => h.name === 'd.example')!.cap!.crawls).toBe(3);
    for (const [bad, field] of [
      [{ crawls: 0 }, /crawls/],
      [{ windowMs: 0 }, /windowMs/],
      [{ windowMs: Infinity }, /windowMs/],
      [{ starts: [5, 4] }, /ascending/],
      [{ starts: [1, 2, 3, 4] }, /more than/],
      [{ starts: [Number.NaN] }, /start 0/],
    ] as const) {
      const bytes = withCap(bad);
      expect(() => decodePartition(bytes), JSON.stringify(bad)).toThrow(CorruptPartitionError);
      expect(() => decodePartition(bytes)).toThrow(expect.objectContaining({ section: 'caps' }));
      expect(() => decodePartition(bytes)).toThrow(field);
    }
    expect(SectionId.Caps).toBe(10);
  });
});
