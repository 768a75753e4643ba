// withFreshness: the rescheduler as the frontier's freshness option. Per outcome it must
// schedule exactly what the pure functions schedule for the same fetches (observeChange →
// estimate → targetInterval → setNextDue, the oracle below); its background pass seeds and
// steps τ and re-times waiting URLs in the schedule index; its state round-trips.
import { describe, expect, it } from 'vitest';
import {
  CorruptPartitionError,
  type FetchRequest,
  type FreshnessRows,
  Frontier,
  InvalidArgumentError,
  type Outcome,
  UrlStatus,
  decodePartition,
  defaultParams,
  encodePartition,
  desiredRate,
  estimate,
  freshnessParams,
  lastModifiedExposure,
  newFreshnessRecord,
  observeChange,
  setNextDue,
  solveWaterLevel,
  targetInterval,
  withFreshness,
} from '../../src/index.js';

const HOUR = 3_600_000;
const T0 = 480_000;

/** The frontier's column `id` of the partition, as numbers. */
function column(f: Frontier, id: number): number[] {
  const c = f.checkpoint().columns.find((x) => x.id === id);
  if (!c) throw new Error(`no column ${id}`);
  return Array.from(c.data);
}

describe('withFreshness: options', () => {
  it('validates the budget, the params and the options', () => {
    expect(() => withFreshness(null, -1)).toThrow(InvalidArgumentError);
    expect(() => withFreshness(null, Number.NaN)).toThrow(/budgetPerHour/);
    expect(() => withFreshness(null, Number.POSITIVE_INFINITY)).toThrow(/budgetPerHour/);
    expect(() => withFreshness({ minRate: 5, maxRate: 1 }, 1)).toThrow(/minRate/);
    expect(() => withFreshness(null, 1, { cadenceHours: 0 })).toThrow(/cadenceHours/);
    expect(() => withFreshness(null, 1, { cadenceHours: 1.5 })).toThrow(/cadenceHours/);
    expect(() => withFreshness(null, 1, { reviseTolerance: -0.1 })).toThrow(/reviseTolerance/);
    expect(() => withFreshness(null, 1, { tau: { gain: 2 } })).toThrow(/gain/);
    const hook = withFreshness(undefined, 3);
    expect(hook.params).toBe(defaultParams());
    expect(hook.budget()).toBe(3);
    expect(hook.lastTickHours()).toBe(-1);
  });

  it('is accepted as the frontier option; a frontier without a background-pass hook ticks nothing', () => {
    const f = new Frontier(1, T0, { freshness: withFreshness(null, 1), scheduleIndex: true });
    expect(f.tickFreshness(T0)).toBe(0);
    expect(() => f.tickFreshness(-1)).toThrow(InvalidArgumentError);
    const g = new Frontier(1, T0, { freshness: (_r, now) => now + 5 });
    expect(g.tickFreshness(T0)).toBe(0);
    f.free();
    g.free();
  });
});

describe('withFreshness: per outcome, the same schedule as the pure functions', () => {
  // One page, changing at known hours, on an honest server (Last-Modified = the time of the
  // last real change, untouched by cosmetic churn) that answers 304 for every other unchanged
  // fetch; one change is cosmetic (same words, one simhash bit).
  const changes = [T0 + 5, T0 + 9, T0 + 30, T0 + 31, T0 + 70, T0 + 71, T0 + 72, T0 + 140];
  const cosmeticAt = T0 + 31;
  function bodyAt(hour: number, n: number, prevVersion: number): Partial<Outcome> {
    let version = 0;
    let last = T0 - 100;
    let words = 0;
    for (const c of changes) {
      if (c >= hour) break; // a change dated 2 minutes past hour c shows from the next hour on
      version++;
      if (c === cosmeticAt) continue;
      last = c;
      words++;
    }
    const lastModified = last * 3600 + 120;
    if (version === prevVersion && n % 2 === 1) return { status: 304 };
    return { status: 200, contentFp: BigInt(1000 + version), simhash: BigInt(words) * 0x0101_0101_0101n ^ BigInt(version & 1), lastModified };
  }

  it('λ, Last-Modified exposure, first fetch and next due match observeChange → estimate → targetInterval → setNextDue', () => {
    const p = freshnessParams({ reprobeRate: 1 / 48 });
    const hook = withFreshness(p, 0.5);
    const f = new Frontier(1, T0, { freshness: hook, scheduleIndex: true, stateMachine: true });
    f.seed('https://a.example/page', 'a.example', 2, T0, T0, 0);
    const oracle = newFreshnessRecord({ priority: Math.fround(2), spreadKey: 0 });
    let prevVersion = -1;
    let fetches = 0;
    let now = T0 * HOUR;
    while (fetches < 25) {
      const req = f.dispatch(now);
      if (!req) {
        now = f.nextEligible()!;
        continue;
      }
      const hour = now / HOUR;
      const body = bodyAt(hour, fetches, prevVersion);
      const o = { row: req.row, url: req.url, ...body } as Outcome;
      prevVersion = body.status === 200 ? Number(body.contentFp! - 1000n) : prevVersion;
      // The oracle at the same τ the hook will use (the pass ran inside dispatch).
      const tau = hook.tau();
      oracle.spreadKey = (req.key[2] ?? 0) >>> 0;
      const previousLambda = oracle.lambda;
      observeChange(oracle, o, hour, p);
      oracle.lmHours = Math.fround(oracle.lmHours);
      oracle.lmAgeHours = Math.fround(oracle.lmAgeHours);
      oracle.unchangedHours = Math.fround(oracle.unchangedHours);
      oracle.changedLogHours = Math.fround(oracle.changedLogHours);
      oracle.lambda = Math.fround(estimate(oracle, p));
      const want = setNextDue(oracle, targetInterval(oracle, undefined, tau, p, previousLambda), hour, p);
      f.report(o, now);
      fetches++;
      expect(column(f, 12)[0]).toBe(oracle.lambda);
      expect(column(f, 44)[0]).toBe(oracle.lmHours);
      expect(column(f, 43)[0]).toBe(oracle.firstCrawled);
      expect(column(f, 45)[0]).toBe(oracle.unchangedHours);
      expect(column(f, 46)[0]).toBe(oracle.changedLogHours);
      expect(column(f, 47)[0]).toBe(oracle.lmAgeHours);
      expect(f.dueUrls(0xffff_ffff)[0]!.dueHours).toBe(want);
      // The first fetch's date (changed 100 h before, 2 minutes past the hour) is its estimate: e^(−γ)/A, not the prior.
      if (fetches === 1) expect(oracle.lambda).toBeCloseTo(Math.exp(-0.5772156649) / (100 - 2 / 60), 6);
      now = Math.max(now, f.nextEligible()!);
    }
    // The page stayed trusted (honest server), saw real changes, and the cosmetic one was not counted.
    expect(oracle.lmHours).toBeGreaterThan(0);
    expect(oracle.lmAgeHours).toBeGreaterThan(0); // the first response was dated: its age is kept
    expect(oracle.changeCount).toBeGreaterThanOrEqual(2);
    expect(oracle.changeCount).toBeLessThan(changes.length);
    f.free();
  });

  it("reads a first response's Last-Modified on the server's own clock when it sends a Date", () => {
    const f = new Frontier(1, T0, { freshness: withFreshness(freshnessParams(), 0.5), scheduleIndex: true, stateMachine: true });
    f.seed('https://a.example/dated', 'a.example', 2, T0, T0, 0);
    f.seed('https://a.example/stamped', 'a.example', 2, T0, T0, 0);
    let now = T0 * HOUR;
    const serverClock = T0 * 3600 - 600; // ten minutes behind ours
    const ages = new Map<string, number>();
    while (ages.size < 2) {
      const req = f.dispatch(now);
      if (!req) {
        now = f.nextEligible()!;
        continue;
      }
      const stamped = req.url.endsWith('stamped');
      // Changed two hours before on its clock; or stamped with its clock (five minutes old on ours).
      const lastModified = stamped ? serverClock : serverClock - 7200;
      f.report({ row: req.row, url: req.url, status: 200, contentFp: 1n, simhash: 0n, lastModified, serverDate: serverClock }, now);
      ages.set(req.url, column(f, 47)[req.row]!);
      now = Math.max(now, f.nextEligible()!);
    }
    expect(ages.get('https://a.example/dated')).toBe(2); // not 2 h 10 min, our clock's reading
    expect(ages.get('https://a.example/stamped')).toBe(0); // a stamp, though ten minutes old on our clock
    f.free();
  });

  it('lastModifiedExposure follows observeChange for every verdict', () => {
    expect(lastModifiedExposure(5, 'first', 0, 1000 * 3600, 0, 2000, false)).toBe(0);
    expect(lastModifiedExposure(5, 'first', 0, 0, 0, 2000, false)).toBe(-1);
    expect(lastModifiedExposure(5, 'none', 7200, 7200, 2, 6, false)).toBe(9);
    expect(lastModifiedExposure(5, 'none', 7200, 9000, 2, 6, false)).toBe(-1); // stamped
    expect(lastModifiedExposure(5, 'none', 7200, 0, 2, 6, true)).toBe(9); // 304
    expect(lastModifiedExposure(5, 'real', 7200, 5 * 3600, 2, 6, false)).toBe(6); // changed at 5, fetched at 6
    expect(lastModifiedExposure(5, 'real', 7200, 7 * 3600, 2, 6, false)).toBe(-1); // dated after the fetch
    expect(lastModifiedExposure(-1, 'none', 7200, 7200, 2, 6, false)).toBe(-1); // untrusted for good
    expect(() => lastModifiedExposure(0, 'odd' as 'none', 0, 0, 0, 1, false)).toThrow(InvalidArgumentError);
  });
});

/**
 * A hand-built column view: n rows over `caps.length` hosts. Fetch state is by slot, as the
 * frontier keeps it: row r has slot n − r (reversed, so a pass that indexed those arrays by
 * row would read another row's values), slot 0 stays zero.
 */
function rowsOf(n: number, caps: number[], fill: (r: number) => { host: number; priority: number; lambda: number; status?: number; crawled?: number }): FreshnessRows {
  const v = {
    rows: n,
    status: new Uint8Array(n),
    priority: new Float32Array(n),
    slot: new Uint32Array(n).map((_, r) => n - r),
    lambda: new Float32Array(n + 1),
    host: new Uint32Array(n),
    key: new Uint32Array(4 * n),
    crawlCount: new Uint16Array(n + 1),
    firstCrawled: new Uint32Array(n + 1),
    lastCrawled: new Uint32Array(n + 1),
    nextDue: new Uint32Array(n),
    hosts: caps.length,
    hostCapacity: Float64Array.from(caps),
    moved: new Uint32Array(n),
  };
  for (let r = 0; r < n; r++) {
    const x = fill(r);
    v.host[r] = x.host;
    v.priority[r] = x.priority;
    v.lambda[v.slot[r]!] = x.lambda;
    v.status[r] = x.status ?? UrlStatus.Scheduled;
    v.key[4 * r + 2] = Math.imul(r + 1, 0x9e3779b9) >>> 0;
    if (x.crawled !== undefined) {
      v.crawlCount[v.slot[r]!] = 1;
      v.firstCrawled[v.slot[r]!] = x.crawled;
      v.lastCrawled[v.slot[r]!] = x.crawled;
      v.nextDue[r] = x.crawled + 24 * 14;
    }
  }
  return v;
}

describe('withFreshness: the background pass', () => {
  const p = defaultParams();

  it('seeds τ by solveWaterLevel over the capped demand, then keeps to its cadence', () => {
    const caps = [Number.POSITIVE_INFINITY, 0.05, 1000];
    const rows = rowsOf(300, caps, (r) => ({ host: r % 3, priority: 0.5 + (r % 7), lambda: (1 + (r % 11)) / 100 }));
    const budget = 2;
    const hook = withFreshness(p, budget);
    expect(hook.tick(rows, T0, false)).toBe(0);
    const view = newFreshnessRecord();
    const demand = (tau: number): number => {
      const d = [0, 0, 0];
      for (let r = 0; r < rows.rows; r++) {
        view.priority = rows.priority[r]!;
        view.lambda = rows.lambda[rows.slot[r]!]!;
        d[rows.host[r]!]! += desiredRate(view, tau, p);
      }
      return d.reduce((s, x, h) => s + Math.min(x, caps[h]!), 0);
    };
    const want = solveWaterLevel(demand, budget);
    // (The hook sums rates in fixed point, 2⁻²⁰ crawls/hour: a few ppm apart.)
    expect(hook.tau() / want).toBeCloseTo(1, 4);
    expect(demand(hook.tau()) / budget).toBeCloseTo(1, 2);
    // Same 6-hour block: no pass; the next block: a pass; forced: a pass.
    expect(hook.tick(rows, T0 + 5, false)).toBe(-1);
    expect(hook.tick(rows, T0 + 6, false)).toBe(0);
    expect(hook.lastTickHours()).toBe(T0 + 6);
    expect(hook.tick(rows, T0 + 7, true)).toBe(0);
  });

  it('steps τ toward the budget and brings forward URLs parked at the re-probe interval', () => {
    const rows = rowsOf(200, [Number.POSITIVE_INFINITY], (r) => ({ host: 0, priority: 1, lambda: 0.02 + (r % 5) / 100, status: UrlStatus.Crawled, crawled: T0 }));
    // At τ → ∞ every URL keeps the fortnightly re-probe: 200/336 ≈ 0.6 crawls/hour.
    const hook = withFreshness(p, 0.8);
    hook.tick(rows, T0, true);
    const tight = hook.tau();
    expect(tight).toBeLessThan(1e6);
    // A tenfold budget: τ falls by bounded steps, and each pass re-times waiting URLs.
    hook.setBudget(8);
    let moved = 0;
    for (let k = 1; k <= 12; k++) {
      const m = hook.tick(rows, T0 + 6 * k, false);
      for (let i = 0; i < m; i++) {
        const r = rows.moved[i]!;
        expect(rows.nextDue[r]).toBeGreaterThanOrEqual(T0 + 6 * k + 1);
      }
      moved += m;
      expect(hook.tau()).toBeGreaterThanOrEqual(tight / 1.25 ** k - 1e-15);
    }
    expect(hook.tau()).toBeLessThan(tight / 3);
    expect(moved).toBeGreaterThan(0);
    // Waiting URLs now come round far sooner than the fortnight they were parked at.
    const mean = rows.nextDue.reduce((s, d) => s + d - T0, 0) / rows.rows;
    expect(mean).toBeLessThan(24 * 14 * 0.5);
  });

  it('books a share of each host\'s politeness capacity (politenessShare): share ½ at capacity 2c schedules what share 1 does at c', () => {
    expect(() => withFreshness(p, 1, { politenessShare: 0 })).toThrow(InvalidArgumentError);
    expect(() => withFreshness(p, 1, { politenessShare: 1.5 })).toThrow(InvalidArgumentError);
    // Host 1 is saturated (its own water level), host 2 is not, host 0 has no cap.
    const caps = [Number.POSITIVE_INFINITY, 0.02, 5];
    const fill = (r: number) => ({ host: r % 3, priority: 1 + (r % 4), lambda: 0.01 * (1 + (r % 9)), status: UrlStatus.Crawled, crawled: T0 - 100 + (r % 50) });
    const whole = rowsOf(90, caps, fill);
    const halved = rowsOf(90, caps.map((c) => 2 * c), fill);
    const a = withFreshness(p, 1);
    const b = withFreshness(p, 1, { politenessShare: 0.5 });
    for (let k = 0; k < 4; k++) {
      const ma = a.tick(whole, T0 + 6 * k, true);
      const mb = b.tick(halved, T0 + 6 * k, true);
      expect(mb).toBe(ma);
      expect(Array.from(halved.moved.subarray(0, mb))).toEqual(Array.from(whole.moved.subarray(0, ma)));
      expect(b.tau()).toBe(a.tau());
    }
    const order = Uint32Array.of(0, 1, 2);
    expect(b.exportState(order)).toEqual(a.exportState(order));
    expect(Array.from(halved.nextDue)).toEqual(Array.from(whole.nextDue));
    // The frontier's capacities are read, never written.
    expect(Array.from(halved.hostCapacity)).toEqual(caps.map((c) => 2 * c));
  });

  it('re-times waiting URLs in the frontier\'s schedule index', () => {
    const hook = withFreshness({ reprobeRate: 1 / 400 }, 0.3);
    const f = new Frontier(1, T0, { freshness: hook, scheduleIndex: true, stateMachine: true });
    for (let i = 0; i < 40; i++) f.seed(`https://b.example/${i}`, 'b.example', 1 + (i % 3), T0, T0, 0);
    let n = 0;
    const fetch = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200, contentFp: BigInt(++n), simhash: BigInt(n) * 0xffffn });
    f.drain(T0 * HOUR, fetch, { untilMs: T0 * HOUR + HOUR - 1 });
    const before = new Map(f.dueUrls(0xffff_ffff).map((d) => [d.url, d.dueHours]));
    hook.setBudget(2);
    let moved = 0;
    for (let k = 1; k <= 8; k++) moved += f.tickFreshness(T0 + k);
    expect(moved).toBeGreaterThan(0);
    const after = f.dueUrls(0xffff_ffff);
    const earlier = after.filter((d) => d.dueHours < before.get(d.url)!);
    expect(earlier.length).toBeGreaterThan(0);
    // The index follows the column: each URL is dispatched at its revised hour.
    const first = earlier.reduce((a, b) => (a.dueHours <= b.dueHours ? a : b));
    const log = f.drain(T0 * HOUR, fetch, { untilMs: first.dueHours * HOUR + HOUR - 1 });
    const at = log.find((d) => d.url === first.url);
    expect(at).toBeDefined();
    expect(Math.floor(at!.atMs / HOUR)).toBe(first.dueHours);
    f.free();
  });
});

describe('withFreshness: state and partitions', () => {
  const p = defaultParams();

  it('exports τ exactly and per-host state in the order recovery numbers hosts', () => {
    const rows = rowsOf(90, [Number.POSITIVE_INFINITY, 0.02, 5], (r) => ({ host: r % 3, priority: 1 + (r % 4), lambda: 0.01 * (1 + (r % 9)) }));
    const a = withFreshness(p, 1);
    a.tick(rows, T0, true);
    a.tick(rows, T0 + 6, false);
    const order = Uint32Array.of(2, 0, 1);
    const blob = a.exportState(order);
    const b = withFreshness(p, 1);
    b.importState(blob);
    expect(b.tau()).toBe(a.tau());
    expect(b.lastTickHours()).toBe(T0 + 6);
    expect(b.exportState(Uint32Array.of(0, 1, 2))).toEqual(blob);
    // A host the state has not met yet (id 3) is written as unknown.
    const wider = a.exportState(Uint32Array.of(3, 0, 1, 2));
    expect(new DataView(wider.buffer).getFloat64(40, true)).toBe(-1);
  });

  it('gives over-demanded hosts their own water level, keeps it in the state, and still reads version-1 state', () => {
    // Host 1 can take 0.02 crawls/hour for 30 URLs: its demand at τ is far over it.
    const rows = rowsOf(90, [Number.POSITIVE_INFINITY, 0.02, 5], (r) => ({ host: r % 3, priority: 1 + (r % 4), lambda: 0.01 * (1 + (r % 9)) }));
    const a = withFreshness(p, 1);
    a.tick(rows, T0, true);
    const blob = a.exportState(Uint32Array.of(0, 1, 2));
    expect(new DataView(blob.buffer).getUint16(4, true)).toBe(4); // the learned hazard's version
    const levels = [0, 1, 2].map((i) => new DataView(blob.buffer).getFloat64(40 + 3 * 12 + i * 8, true));
    expect(levels[1]!).toBeGreaterThan(a.tau()); // saturated: its own, higher level
    expect(levels[0]).toBe(0);
    // The host's demand is now what its level schedules: within its capacity.
    expect(new DataView(blob.buffer).getFloat64(40 + 8, true)).toBeLessThanOrEqual(0.02 * (1 + 1e-6));
    // Version 1 (no levels): loads, and the levels come back at the next pass.
    const v1 = blob.slice(0, 40 + 3 * 12);
    new DataView(v1.buffer).setUint16(4, 1, true);
    const b = withFreshness(p, 1);
    b.importState(v1);
    expect(b.tau()).toBe(a.tau());
    b.tick(rows, T0 + 6, true);
    expect(new DataView(b.exportState(Uint32Array.of(0, 1, 2)).buffer).getFloat64(40 + 3 * 12 + 8, true)).toBeGreaterThan(0);
  });

  it('refuses a state blob that is not its format', () => {
    const good = withFreshness(p, 1).exportState(new Uint32Array(2));
    const hook = withFreshness(p, 1);
    const bad = (mutate: (b: Uint8Array) => Uint8Array) => () => hook.importState(mutate(good.slice()));
    expect(bad((b) => b.subarray(0, 20))).toThrow(CorruptPartitionError);
    expect(bad((b) => ((b[0] = 0), b))).toThrow(/MGFS/);
    expect(bad((b) => ((b[4] = 9), b))).toThrow(/version/);
    expect(bad((b) => b.subarray(0, b.length - 4))).toThrow(/hosts need/);
    expect(bad((b) => (new DataView(b.buffer).setFloat64(8, Number.NaN, true), b))).toThrow(/ln τ/);
    expect(bad((b) => (new DataView(b.buffer).setFloat64(40, -5, true), b))).toThrow(/demand/);
  });

  it('writes the freshness columns only with freshness on; a partition without them loads with freshness on, and the reverse', () => {
    const fetch = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200, contentFp: 7n, lastModified: (T0 - 10) * 3600 });
    const plain = new Frontier(1, T0, { scheduleIndex: true, stateMachine: true });
    for (let i = 0; i < 6; i++) plain.seed(`https://c.example/${i}`, 'c.example', 1, T0 - 30, T0 + (i % 2) * 5, 0);
    plain.drain(T0 * HOUR + 3 * HOUR, fetch, { untilMs: T0 * HOUR + 3 * HOUR + 60_000 });
    const old = plain.checkpointBytes();
    const ids = decodePartition(old).columns.map((c) => c.id);
    expect(ids).not.toContain(43);
    expect(ids).not.toContain(44);

    const fresh = Frontier.recover(old, { freshness: withFreshness(p, 1), scheduleIndex: true, stateMachine: true });
    const crawled = column(fresh, 9);
    const first = column(fresh, 43);
    const lm = column(fresh, 44);
    const last = column(fresh, 7);
    for (let r = 0; r < crawled.length; r++) {
      expect(first[r]).toBe(crawled[r] === 0 ? 0 : last[r]);
      expect(lm[r]).toBe(crawled[r] === 0 ? 0 : -1);
    }
    expect(crawled.filter((c) => c > 0).length).toBe(3);
    // It carries on: the rest is crawled and scheduled by the hook.
    fresh.drain(T0 * HOUR + 6 * HOUR, fetch, { untilMs: T0 * HOUR + 6 * HOUR + 60_000 });
    expect(column(fresh, 9).every((c) => c === 1)).toBe(true);
    const withCols = fresh.checkpointBytes();
    expect(decodePartition(withCols).columns.map((c) => c.id)).toEqual(expect.arrayContaining([43, 44]));
    expect(decodePartition(withCols).freshness.length).toBeGreaterThan(0);

    // Freshness off reading a partition with the columns: they are skipped, and dropped on write.
    const off = Frontier.recover(withCols, { scheduleIndex: true, stateMachine: true });
    const ids2 = decodePartition(off.checkpointBytes()).columns.map((c) => c.id);
    expect(ids2).not.toContain(43);
    expect(off.len()).toBe(6);
    plain.free();
    fresh.free();
    off.free();
  });

  it('keeps the estimator\'s interval statistics in the checkpoint (minor 4); a minor-3 partition without them loads, and they are rebuilt from the counts at the next fetch', () => {
    // Pages that change at every other fetch, fetched on whole hours.
    let k = 0;
    const fetch = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200, contentFp: BigInt(1 + (k++ >> 1)), simhash: (BigInt(k) * 0x0101_0101_0101_0101n) & 0xffff_ffff_ffff_ffffn });
    const options = { freshness: withFreshness(freshnessParams({ reprobeRate: 1 / 6, minReprobeGap: 1 }), 4), scheduleIndex: true, stateMachine: true };
    const f = new Frontier(1, T0, options);
    for (let i = 0; i < 4; i++) f.seed(`https://d.example/${i}`, 'd.example', 1, T0, T0, 0);
    f.drain(T0 * HOUR, fetch, { untilMs: (T0 + 200) * HOUR });
    const bytes = f.checkpointBytes();
    const image = decodePartition(bytes);
    expect(image.formatMinor).toBe(4);
    const crawls = column(f, 9);
    const unchanged = column(f, 45);
    const logs = column(f, 46);
    expect(crawls.every((c) => c > 2)).toBe(true);
    expect(unchanged.every((u) => Number.isFinite(u) && u >= 0)).toBe(true);
    expect(logs.every((l) => Number.isFinite(l))).toBe(true);
    // Recovered: the same statistics, the same bytes.
    const again = Frontier.recover(bytes, { ...options, freshness: withFreshness(freshnessParams({ reprobeRate: 1 / 6, minReprobeGap: 1 }), 4) });
    expect(column(again, 45)).toEqual(unchanged);
    expect(column(again, 46)).toEqual(logs);
    expect(again.checkpointBytes()).toEqual(bytes);

    // The same partition as a build before minor 4 wrote it: no interval columns.
    const old = encodePartition({ ...image, formatMinor: 3, columns: image.columns.filter((c) => c.id !== 45 && c.id !== 46) });
    expect(new DataView(old.buffer, old.byteOffset).getUint16(10, true)).toBe(3);
    const hook = withFreshness(freshnessParams({ reprobeRate: 1 / 6, minReprobeGap: 1 }), 4);
    const g = Frontier.recover(old, { ...options, freshness: hook });
    expect(column(g, 45).every((u) => Number.isNaN(u))).toBe(true); // unknown until the next fetch
    const lambdaBefore = column(g, 12);
    expect(lambdaBefore).toEqual(column(f, 12));
    g.drain((T0 + 200) * HOUR, fetch, { untilMs: (T0 + 260) * HOUR });
    const rebuilt = column(g, 45);
    const crawlsAfter = column(g, 9);
    for (let r = 0; r < rebuilt.length; r++) {
      if (crawlsAfter[r]! > crawls[r]!) {
        expect(Number.isFinite(rebuilt[r]!)).toBe(true);
        expect(Number.isFinite(column(g, 46)[r]!)).toBe(true);
      }
    }
    expect(crawlsAfter.some((c, r) => c > crawls[r]!)).toBe(true);
    f.free();
    again.free();
    g.free();
  });

  it('keeps the first fetch\'s Last-Modified age in column 47 (minor 6) only when some response was dated; a file without it loads with none', () => {
    // Four pages, page i first served dated (i + 1) × 100 h before its first fetch, then changing
    // at every other fetch with honest dates (half an hour before the fetch).
    const fetches = [0, 0, 0, 0];
    const firstAt = [0, 0, 0, 0];
    const fetch = (r: FetchRequest, nowMs: number): Outcome => {
      const i = Number(r.url.slice(-1));
      const version = fetches[i]!++ >> 1;
      if (version === 0 && fetches[i] === 1) firstAt[i] = nowMs / HOUR;
      const dated = version === 0 ? T0 - (i + 1) * 100 : nowMs / HOUR - 0.5;
      return { row: r.row, url: r.url, status: 200, contentFp: BigInt(1 + version), simhash: (BigInt(version + 1) * 0x0101_0101_0101_0101n) & 0xffff_ffff_ffff_ffffn, lastModified: Math.floor(dated * 3600) };
    };
    const params = freshnessParams({ reprobeRate: 1 / 6, minReprobeGap: 1 });
    const options = { freshness: withFreshness(params, 4), scheduleIndex: true, stateMachine: true };
    const f = new Frontier(1, T0, options);
    for (let i = 0; i < 4; i++) f.seed(`https://d.example/${i}`, 'd.example', 1, T0, T0, 0);
    f.drain(T0 * HOUR, fetch, { untilMs: (T0 + 100) * HOUR });
    expect(fetches.every((n) => n >= 3)).toBe(true);
    const bytes = f.checkpointBytes();
    const image = decodePartition(bytes);
    expect(image.formatMinor).toBe(6);
    // Each age is its page's first fetch time less its first date (file rows are in key order).
    const ages = column(f, 47);
    const want = firstAt.map((t, i) => t - (T0 - (i + 1) * 100)).sort((a, b) => a - b);
    const got = [...ages].sort((a, b) => a - b);
    for (let i = 0; i < 4; i++) expect(got[i]).toBeCloseTo(want[i]!, 3);
    const again = Frontier.recover(bytes, { ...options, freshness: withFreshness(params, 4) });
    expect(column(again, 47)).toEqual(ages);
    expect(again.checkpointBytes()).toEqual(bytes);

    // The same partition as a minor-5 build wrote it: no column 47. It loads with no age known
    // (such a URL is estimated from the changes seen after its first fetch, as before), and is
    // written without the column again.
    const old = encodePartition({ ...image, formatMinor: 5, columns: image.columns.filter((c) => c.id !== 47) });
    expect(new DataView(old.buffer, old.byteOffset).getUint16(10, true)).toBe(4); // the lowest minor that describes it
    const g = Frontier.recover(old, { ...options, freshness: withFreshness(params, 4) });
    expect(g.checkpoint().columns.some((c) => c.id === 47)).toBe(false);
    expect(column(g, 12)).toEqual(column(f, 12)); // the stored λ is the file's
    f.free();
    again.free();
    g.free();
  });

  it('writes no age column when no first response was dated: the bytes of minor 4', () => {
    const fetch = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200, contentFp: 5n, simhash: 9n });
    const f = new Frontier(1, T0, { freshness: withFreshness(freshnessParams({ reprobeRate: 1 / 6, minReprobeGap: 1 }), 4), scheduleIndex: true, stateMachine: true });
    for (let i = 0; i < 3; i++) f.seed(`https://e.example/${i}`, 'e.example', 1, T0, T0, 0);
    f.drain(T0 * HOUR, fetch, { untilMs: (T0 + 20) * HOUR });
    const image = decodePartition(f.checkpointBytes());
    expect(image.formatMinor).toBe(4);
    expect(image.columns.some((c) => c.id === 47)).toBe(false);
    expect(column(f, 44)).toEqual([-1, -1, -1]); // undated: never trusted
    f.free();
  });

  it('a function hook sees the first-fetch hour and may store a Last-Modified exposure', () => {
    const seen: string[] = [];
    const f = new Frontier(1, T0, {
      scheduleIndex: true,
      freshness: (rec, now) => {
        seen.push(`${rec.firstCrawled}:${rec.previousCrawled}:${rec.status}:${rec.sentLastModified}:${rec.lmHours}:${rec.host}`);
        rec.lmHours = 2.5;
        return now + 3;
      },
    });
    f.seed('https://d.example/x', 'd.example', 1, T0, T0, 0);
    let k = 0;
    f.drain(T0 * HOUR, (r) => ({ row: r.row, url: r.url, status: k++ === 0 ? 200 : 304, lastModified: k === 1 ? 1234 : undefined }), { untilMs: (T0 + 7) * HOUR });
    expect(seen).toEqual([`${T0}:0:200:1234:0:0`, `${T0}:${T0}:304:0:2.5:0`, `${T0}:${T0 + 3}:304:0:2.5:0`]);
    expect(column(f, 44)).toEqual([2.5]);
    f.free();
  });
});
