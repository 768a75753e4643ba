// The slot calendar of a saturated host (DESIGN §20 "Slot calendar"): placements land on free
// slots only, so any j of a host's booked due hours span more than j / C − 1 hours (the cap
// up to the whole-hour grid); each lands on the free slot nearest its ideal hour within the
// reach; the durable form round-trips. And through the real Frontier with withFreshness
// (slotCalendar on), a saturated host never runs above its cap.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CALENDAR_BYTES, CALENDAR_SLOTS, SlotCalendar } from '../../src/freshness/calendar.js';
import { type FetchRequest, Frontier, type Outcome, withFreshness } from '../../src/index.js';

const T0 = 480_000;

describe('SlotCalendar', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('place' as const), at: fc.integer({ min: 0, max: 3000 }), reach: fc.integer({ min: 0, max: 200 }) }),
    fc.record({ kind: fc.constant('advance' as const), by: fc.integer({ min: 0, max: 100 }) }),
    fc.record({ kind: fc.constant('free' as const), pick: fc.nat() }),
  );

  it('books only free slots, nearest the ideal hour within the reach; booked hours keep the spacing', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.02, max: 4, noNaN: true }), fc.array(op, { maxLength: 200 }), (perHour, ops) => {
        const cal = new SlotCalendar(perHour, T0);
        let now = T0;
        const held: number[] = []; // booked hours (multiset)
        for (const o of ops) {
          if (o.kind === 'advance') {
            now += o.by;
            cal.advance(now);
            for (let i = held.length - 1; i >= 0; i--) if (held[i]! < now) held.splice(i, 1);
          } else if (o.kind === 'free') {
            if (held.length === 0) continue;
            const i = o.pick % held.length;
            expect(cal.free(held[i]!)).toBe(true);
            held.splice(i, 1);
          } else {
            const ideal = now + o.at;
            const lo = Math.max(now, ideal - o.reach);
            const hi = ideal + o.reach;
            const got = cal.place(ideal, lo, hi);
            // Every slot in the ring strictly nearer the ideal (within [lo, hi]) was booked already.
            const best = got === undefined ? Number.POSITIVE_INFINITY : Math.abs(got - ideal);
            for (let k = cal.base; k < cal.base + CALENDAR_SLOTS; k++) {
              const h = cal.hourOf(k);
              if (h < lo || h > hi || Math.abs(h - ideal) >= best) continue;
              expect(cal.booked(k)).toBe(true);
            }
            if (got !== undefined) {
              expect(got).toBeGreaterThanOrEqual(lo);
              expect(got).toBeLessThanOrEqual(hi);
              held.push(got);
            }
          }
          expect(cal.bookedCount()).toBe(held.length);
        }
        // Any j booked hours in a row span more than j / C − 1 hours.
        const sorted = [...held].sort((a, b) => a - b);
        for (let i = 0; i < sorted.length; i++) {
          for (let j = 1; i + j < sorted.length; j++) expect(sorted[i + j]! - sorted[i]!).toBeGreaterThan(j / perHour - 1 - 1e-9);
        }
        // The durable form round-trips.
        const buf = new DataView(new ArrayBuffer(CALENDAR_BYTES));
        cal.write(buf, 0);
        const back = SlotCalendar.read(buf, 0)!;
        expect(back.base).toBe(cal.base);
        expect(back.bookedCount()).toBe(cal.bookedCount());
        for (let k = cal.base; k < cal.base + CALENDAR_SLOTS; k++) expect(back.booked(k)).toBe(cal.booked(k));
      }),
      { numRuns: 150 },
    );
  });

  it('rejects a durable form with a bad rate', () => {
    const buf = new DataView(new ArrayBuffer(CALENDAR_BYTES));
    buf.setFloat64(0, -1, true);
    expect(SlotCalendar.read(buf, 0)).toBeUndefined();
  });
});

describe('withFreshness slotCalendar on a saturated capped host', () => {
  it('never exceeds the cap, and spreads the booked dues (fast-check over caps and page counts)', () => {
    fc.assert(
      fc.property(fc.constantFrom(0.25, 0.5, 1), fc.integer({ min: 20, max: 60 }), (cap, pages) => {
        const delayMs = 3_600_000 / cap;
        const hook = withFreshness(null, 10, { slotCalendar: true });
        const f = new Frontier(1, T0, { freshness: hook, scheduleIndex: true, stateMachine: true, politeness: { ceilingMs: 4 * delayMs } });
        for (let i = 0; i < pages; i++) f.seed(`https://c.example/p/${i}`, 'c.example', 1 + (i % 5), T0, T0, delayMs);
        const fetch = (r: FetchRequest, atMs: number): Outcome => {
          const i = Number(r.url.slice(r.url.lastIndexOf('/') + 1));
          const version = Math.floor(atMs / 3_600_000 / (3 * (1 + (i % 20))));
          return { row: r.row, url: r.url, status: 200, contentFp: BigInt(1 + i * 100_003 + version), simhash: (BigInt(i * 7919 + version) * 0x9e3779b97f4a7c15n) & 0xffff_ffff_ffff_ffffn };
        };
        const log = f.drain(T0 * 3_600_000, fetch, { untilMs: (T0 + 24 * 30) * 3_600_000 });
        // The cap: never two starts closer than 1/C, so never more than C·W + 1 in a window W.
        for (let k = 1; k < log.length; k++) expect(log[k]!.atMs - log[k - 1]!.atMs).toBeGreaterThanOrEqual(delayMs);
        // The host is saturated (it gets ≥ 90 % of its cap after the first day) and its state
        // carries a calendar (version 3 of the freshness state; 4 with the learned hazard).
        const late = log.filter((d) => d.atMs >= (T0 + 24) * 3_600_000).length;
        expect(late).toBeGreaterThan(0.9 * cap * 24 * 29);
        const state = hook.exportState(Uint32Array.of(0));
        expect(new DataView(state.buffer).getUint16(4, true)).toBe(4);
        expect(new DataView(state.buffer).getUint32(40 + 20, true)).toBe(1); // one calendar
        // It round-trips through a new hook, and a calendar of a host past the count is refused.
        const again = withFreshness(null, 10, { slotCalendar: true });
        again.importState(state);
        expect(again.exportState(Uint32Array.of(0))).toEqual(state);
        const bad = state.slice();
        new DataView(bad.buffer).setUint32(40 + 20 + 4, 5, true);
        expect(() => withFreshness(null, 10).importState(bad)).toThrow(/calendar 0 of host 5/);
        f.free();
      }),
      { numRuns: 6 },
    );
  });
});
