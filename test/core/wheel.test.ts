import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, TimingWheel, UseAfterFreeError } from '../../src/index.js';

const U32_MAX = 0xffffffff;

/** The sorted-array model: a Map id → tick; advance filters and sorts by (tick, id). */
class Model {
  readonly ticks = new Map<number, number>();
  advance(now: number): number[] {
    const due = [...this.ticks.entries()].filter(([, t]) => t <= now).sort((a, b) => a[1] - b[1] || a[0] - b[0]);
    for (const [id] of due) this.ticks.delete(id);
    return due.map(([id]) => id);
  }
  next(): number | undefined {
    let best: number | undefined;
    for (const t of this.ticks.values()) if (best === undefined || t < best) best = t;
    return best;
  }
}

/** Ticks relative to the current clock: past, near, far, and absolute anywhere. */
const tickArb = fc.oneof(
  fc.record({ rel: fc.integer({ min: -300, max: 0 }) }),
  fc.record({ rel: fc.integer({ min: 0, max: 70 }) }),
  fc.record({ rel: fc.integer({ min: 0, max: 300_000 }) }),
  fc.record({ rel: fc.integer({ min: 0, max: 2 ** 31 }) }),
  fc.record({ abs: fc.integer({ min: 0, max: U32_MAX }) }),
);
type TickSpec = { rel: number } | { abs: number };
const resolveTick = (spec: TickSpec, now: number): number =>
  'abs' in spec ? spec.abs : Math.min(U32_MAX, Math.max(0, now + spec.rel));

type Op =
  | { kind: 'schedule'; id: number; tick: TickSpec }
  | { kind: 'batch'; entries: { id: number; tick: TickSpec }[] }
  | { kind: 'cancel'; id: number }
  | { kind: 'advance'; tick: TickSpec }
  | { kind: 'peek' }
  | { kind: 'rebuild' };

function ops(idArb: fc.Arbitrary<number>): fc.Arbitrary<Op[]> {
  const entry = fc.record({ id: idArb, tick: tickArb });
  const op: fc.Arbitrary<Op> = fc.oneof(
    { arbitrary: entry.map((e) => ({ kind: 'schedule', ...e }) as Op), weight: 5 },
    { arbitrary: fc.array(entry, { maxLength: 30 }).map((entries) => ({ kind: 'batch', entries }) as Op), weight: 2 },
    { arbitrary: idArb.map((id) => ({ kind: 'cancel', id }) as Op), weight: 2 },
    { arbitrary: tickArb.map((tick) => ({ kind: 'advance', tick }) as Op), weight: 3 },
    { arbitrary: fc.constant({ kind: 'peek' } as Op), weight: 2 },
    { arbitrary: fc.constant({ kind: 'rebuild' } as Op), weight: 1 },
  );
  return fc.array(op, { maxLength: 80 });
}

function runAgainstModel(start: number, list: Op[]): void {
  let wheel = new TimingWheel({ now: start });
  const model = new Model();
  let now = start;
  try {
    for (const o of list) {
      switch (o.kind) {
        case 'schedule': {
          const t = resolveTick(o.tick, now);
          wheel.schedule(o.id, t);
          model.ticks.set(o.id, t);
          break;
        }
        case 'batch': {
          const ids = Uint32Array.from(o.entries, (e) => e.id);
          const ticks = Uint32Array.from(o.entries, (e) => resolveTick(e.tick, now));
          wheel.scheduleBatch(ids, ticks);
          ids.forEach((id, i) => model.ticks.set(id, ticks[i]!));
          break;
        }
        case 'cancel':
          expect(wheel.cancel(o.id)).toBe(model.ticks.delete(o.id));
          break;
        case 'advance': {
          const t = resolveTick(o.tick, now);
          expect([...wheel.advance(t)]).toEqual(model.advance(t));
          now = Math.max(now, t);
          expect(wheel.now).toBe(now);
          break;
        }
        case 'peek':
          expect(wheel.nextTick()).toBe(model.next());
          for (const [id, t] of model.ticks) expect(wheel.tickOf(id)).toBe(t);
          break;
        case 'rebuild': {
          const ids = Uint32Array.from(model.ticks.keys());
          const ticks = Uint32Array.from(model.ticks.values());
          wheel.free();
          wheel = TimingWheel.rebuild(ids, ticks, now);
          break;
        }
      }
      expect(wheel.len).toBe(model.ticks.size);
    }
    expect([...wheel.advance(U32_MAX)]).toEqual(model.advance(U32_MAX));
    expect(wheel.len).toBe(0);
    expect(wheel.nextTick()).toBeUndefined();
  } finally {
    wheel.free();
  }
}

describe('TimingWheel against a sorted-array model', () => {
  it('agrees for dense ids (row numbers), including past and far-future ticks', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), ops(fc.integer({ min: 0, max: 200 })), runAgainstModel),
      { seed: 0x5748, numRuns: 200 },
    );
  });

  it('agrees for sparse ids anywhere in the u32 range', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: U32_MAX }), ops(fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: U32_MAX }))), runAgainstModel),
      { seed: 0x5749, numRuns: 200 },
    );
  });
});

describe('TimingWheel behaviour', () => {
  it('returns ids due at one tick sorted by id, and past ticks at the next advance', () => {
    using w = new TimingWheel({ now: 100 });
    w.scheduleBatch(Uint32Array.of(9, 3, 7, 1), Uint32Array.of(105, 105, 104, 50));
    expect(w.nextTick()).toBe(50);
    expect([...w.advance(100)]).toEqual([1]);
    expect([...w.advance(104)]).toEqual([7]);
    w.schedule(4, 104); // at the clock: overdue, due at the next advance
    w.schedule(2, 105);
    expect([...w.advance(105)]).toEqual([4, 2, 3, 9]);
  });

  it('moves a rescheduled id and keeps one entry per id', () => {
    using w = new TimingWheel();
    w.schedule(5, 1_000_000);
    w.schedule(5, 10);
    expect(w.len).toBe(1);
    expect(w.tickOf(5)).toBe(10);
    expect([...w.advance(999_999)]).toEqual([5]);
    expect([...w.advance(2_000_000)]).toEqual([]);
  });

  it('skips years of empty ticks in one advance', () => {
    using w = new TimingWheel({ now: 0 });
    const hoursIn50Years = 50 * 365 * 24;
    w.schedule(1, hoursIn50Years);
    w.schedule(2, U32_MAX);
    expect([...w.advance(hoursIn50Years - 1)]).toEqual([]);
    expect(w.nextTick()).toBe(hoursIn50Years);
    expect([...w.advance(U32_MAX)]).toEqual([1, 2]);
  });

  it('writes into a caller buffer when it is large enough', () => {
    using w = new TimingWheel();
    w.scheduleBatch(Uint32Array.of(1, 2, 3), Uint32Array.of(1, 1, 2));
    const buf = new Uint32Array(8);
    const got = w.advance(1, buf);
    expect(got.buffer).toBe(buf.buffer);
    expect([...got]).toEqual([1, 2]);
    const small = new Uint32Array(0);
    expect([...w.advance(5, small)]).toEqual([3]);
  });

  it('rebuilds from 200,000 (id, tick) columns and drains them in order', () => {
    const n = 200_000;
    const ids = new Uint32Array(n);
    const ticks = new Uint32Array(n);
    let s = 7;
    for (let i = 0; i < n; i++) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      ids[i] = i;
      ticks[i] = 400_000 + (s % 20_000); // epoch-hours, a couple of years spread
    }
    using w = TimingWheel.rebuild(ids, ticks, 405_000);
    expect(w.len).toBe(n);
    // Dense ids: 12 bytes of entry arrays per id, plus the output buffer.
    expect(w.memoryBytes / n).toBeLessThan(20);
    let prevTick = 0;
    let prevId = -1;
    let total = 0;
    let disorder = 0;
    for (let now = 405_000; now <= 420_000; now += 977) {
      for (const id of w.advance(now)) {
        const t = ticks[id]!;
        if (t < prevTick || (t === prevTick && id <= prevId) || t > now) disorder++;
        prevTick = t;
        prevId = id;
        total++;
      }
    }
    expect(disorder).toBe(0);
    expect(total + w.len).toBe(n);
  });

  it('rejects bad arguments and use after free', () => {
    expect(() => new TimingWheel({ now: -1 })).toThrow(InvalidArgumentError);
    expect(() => new TimingWheel({ now: 2 ** 32 })).toThrow(/TimingWheel\.now/);
    expect(() => new TimingWheel({ clock: 1 } as unknown as { now: number })).toThrow(/unknown option "clock"/);
    const w = new TimingWheel();
    expect(() => w.schedule(1.5, 3)).toThrow(/id must be an integer/);
    expect(() => w.schedule(1, -3)).toThrow(/tick must be an integer/);
    expect(() => w.advance(Number.NaN)).toThrow(InvalidArgumentError);
    expect(() => w.scheduleBatch(new Uint32Array(2), new Uint32Array(3))).toThrow(/equal length/);
    expect(() => TimingWheel.rebuild(new Uint32Array(1), new Uint32Array(0), 0)).toThrow(InvalidArgumentError);
    w.free();
    expect(() => w.schedule(1, 1)).toThrow(UseAfterFreeError);
    expect(() => w.advance(1)).toThrow(UseAfterFreeError);
  });
});
