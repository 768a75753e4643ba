// One content-change classifier (issue 15): `changeKindLanes` is what classifyChange, the
// engine's Page.change, the frontier's report and freshness's observeChange all ask. These
// tests pin the edges the former copies disagreed on — a zero simhash, the threshold's source,
// lanes above 2^31 and the threshold's extremes — and check every layer against one oracle.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ChangeKind,
  type CrawledRecord,
  Frontier,
  NEAR_DUP_DISTANCE,
  changeKindLanes,
  classifyChange,
  freshnessParams,
  hammingLanes,
  newFreshnessRecord,
  observeChange,
} from '../../src/index.js';

const M32 = 0xffffffffn;
const lo = (v: bigint): number => Number(v & M32);
const hi = (v: bigint): number => Number((v >> 32n) & M32);
const popcount = (v: bigint): number => [...v.toString(2)].filter((c) => c === '1').length;

/** The slow, obviously-correct rule. */
function oracle(oldFp: bigint, newFp: bigint, oldSim: bigint, newSim: bigint, k = NEAR_DUP_DISTANCE): ChangeKind {
  if (oldFp === newFp) return ChangeKind.NoChange;
  if (oldSim === 0n || newSim === 0n) return ChangeKind.Real;
  return popcount(oldSim ^ newSim) <= k ? ChangeKind.Cosmetic : ChangeKind.Real;
}

const lanesOf = (oldFp: bigint, newFp: bigint, oldSim: bigint, newSim: bigint, k?: number): ChangeKind =>
  changeKindLanes(lo(oldFp), hi(oldFp), lo(newFp), hi(newFp), lo(oldSim), hi(oldSim), lo(newSim), hi(newSim), k);

describe('changeKindLanes', () => {
  const sim = 0x8123456789abcdefn; // both lanes above 2^31
  it.each([
    ['zero old simhash', 1n, 2n, 0n, sim, ChangeKind.Real],
    ['zero new simhash (within 3 bits of a sparse old one)', 1n, 2n, 0b101n, 0n, ChangeKind.Real],
    ['both zero', 1n, 2n, 0n, 0n, ChangeKind.Real],
    ['high lanes, one bit', 0xffffffff00000000n, 0xfffffffe00000000n, sim, sim ^ (1n << 63n), ChangeKind.Cosmetic],
    ['equal fingerprints above 2^31', 0x80000000_80000000n, 0x80000000_80000000n, sim, 0n, ChangeKind.NoChange],
    ['exactly the threshold', 1n, 2n, sim, sim ^ 0b111n, ChangeKind.Cosmetic],
    ['one past the threshold', 1n, 2n, sim, sim ^ 0b1111n, ChangeKind.Real],
  ])('%s', (_n, a, b, c, d, want) => {
    expect(lanesOf(a, b, c, d)).toBe(want);
    expect(classifyChange(a, b, c, d)).toBe(want);
  });

  it('threshold extremes: 0 is exact equality of simhashes, 64 makes any two non-zero simhashes near', () => {
    expect(lanesOf(1n, 2n, sim, sim, 0)).toBe(ChangeKind.Cosmetic);
    expect(lanesOf(1n, 2n, sim, sim ^ 1n, 0)).toBe(ChangeKind.Real);
    expect(lanesOf(1n, 2n, sim, ~sim & ((1n << 64n) - 1n), 64)).toBe(ChangeKind.Cosmetic);
    expect(lanesOf(1n, 2n, 0n, sim, 64)).toBe(ChangeKind.Real);
  });

  it('agrees with the oracle, and hammingLanes with popcount (fast-check, seed 1515)', () => {
    const u64 = fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.constantFrom(0n, 1n, 1n << 63n, (1n << 64n) - 1n));
    const near = fc.tuple(u64, fc.array(fc.integer({ min: 0, max: 63 }), { maxLength: 5 })).map(([s, bits]) => [s, bits.reduce((x, b) => x ^ (1n << BigInt(b)), s)] as const);
    fc.assert(
      fc.property(u64, u64, near, fc.integer({ min: 0, max: 64 }), (a, b, [s, t], k) => {
        expect(lanesOf(a, b, s, t, k)).toBe(oracle(a, b, s, t, k));
        expect(lanesOf(a, a, s, t, k)).toBe(ChangeKind.NoChange);
        expect(hammingLanes(lo(s), hi(s), lo(t), hi(t))).toBe(popcount(s ^ t));
      }),
      { seed: 1515, numRuns: 2000 },
    );
  });
});

describe('every layer asks the same classifier', () => {
  it("observeChange: a zero new simhash is no signal (a real change), and the threshold is the params'", () => {
    const r = newFreshnessRecord();
    observeChange(r, { row: 0, url: 'u', status: 200, contentFp: 1n, simhash: 0b11n }, 0);
    // Before one classifier, popcount(0b11 ^ 0) = 2 ≤ 3 made this cosmetic here only.
    expect(observeChange(r, { row: 0, url: 'u', status: 200, contentFp: 2n, simhash: 0n }, 1)).toBe(true);
    const strict = freshnessParams({ simhashNearDupThreshold: 0 });
    const q = newFreshnessRecord();
    observeChange(q, { row: 0, url: 'u', status: 200, contentFp: 1n, simhash: 0xf0n }, 0, strict);
    expect(observeChange(q, { row: 0, url: 'u', status: 200, contentFp: 2n, simhash: 0xf1n }, 1, strict)).toBe(true);
  });

  it("the frontier's verdict (the record its freshness hook reads) matches the oracle (fast-check, seed 77)", () => {
    const u64 = fc.oneof(fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }), fc.constantFrom(1n, 1n << 63n));
    const sim = fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }));
    fc.assert(
      fc.property(u64, u64, sim, fc.array(fc.integer({ min: 0, max: 63 }), { maxLength: 5 }), (fp1, fp2, s1, bits) => {
        const s2 = bits.reduce((x, b) => x ^ (1n << BigInt(b)), s1);
        const seen: CrawledRecord['change'][] = [];
        const f = new Frontier(1, 0, {
          freshness: (rec, now) => {
            seen.push(rec.change);
            return now + 1;
          },
          scheduleIndex: true,
        });
        f.seed('https://a.example/', 'a.example', 1, 0, 0);
        let now = 0;
        for (const [fp, s] of [[fp1, s1], [fp2, s2]] as const) {
          let r = f.dispatch(now);
          while (r === undefined) r = f.dispatch((now = f.nextEligible()!));
          f.report({ row: r.row, url: r.url, status: 200, contentFp: fp, simhash: s }, now);
        }
        f.free();
        const want = oracle(fp1, fp2, s1, s2);
        expect(seen).toEqual(['first', want === ChangeKind.NoChange ? 'none' : want === ChangeKind.Cosmetic ? 'cosmetic' : 'real']);
      }),
      { seed: 77, numRuns: 150 },
    );
  });
});
