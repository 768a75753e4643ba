// The shared 32-bit mixers (src/core/mix.ts): one definition for the politeness jitter, the
// simulated web, tests, benchmarks and the demo, pinned to published values.
import { describe, expect, it } from 'vitest';
import { fmix32, mulberry32, mulberry32Step } from '../../src/core/mix.js';

describe('fmix32', () => {
  it("matches MurmurHash3's finalizer on known inputs", () => {
    expect(fmix32(0)).toBe(0);
    expect(fmix32(1)).toBe(0x514e28b7);
    expect(fmix32(0xdeadbeef)).toBe(233162409);
  });

  it('is a bijection on a sample (no two of 2^16 consecutive inputs collide)', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 1 << 16; i++) seen.add(fmix32(0x9e3779b9 + i * 0x10001));
    expect(seen.size).toBe(1 << 16);
  });
});

describe('mulberry32', () => {
  it('gives the reference stream for seed 42 (0.6011037519201636, …)', () => {
    const r = mulberry32(42);
    expect([r(), r(), r()].map((x) => x * 2 ** 32)).toEqual([2581720956, 1925393290, 3661312704]);
  });

  it('the external-state step walks the same stream', () => {
    const r = mulberry32(7);
    const state = Uint32Array.of(0, 7);
    for (let i = 0; i < 100; i++) expect(mulberry32Step(state, 1)).toBe(r());
    expect(state[0]).toBe(0);
  });
});
