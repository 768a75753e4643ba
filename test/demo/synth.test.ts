import { describe, expect, it } from 'vitest';
import { SyntheticUrls } from '../../demo/src/synth.js';
import { InvalidArgumentError, canonicalize } from '../../src/index.js';

describe('SyntheticUrls', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = new SyntheticUrls({ seed: 7 }).fill([], 2000);
    const b = new SyntheticUrls({ seed: 7 }).fill([], 2000);
    const c = new SyntheticUrls({ seed: 8 }).fill([], 2000);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('counts in `fresh` exactly the distinct canonical URLs it emitted, and every line canonicalizes', () => {
    for (const seed of [1, 2, 3]) {
      const s = new SyntheticUrls({ seed, dupRate: 0.4, hosts: 50 });
      const lines = s.fill([], 10_000);
      const forms = new Set<string>();
      for (const l of lines) {
        const c = canonicalize(l);
        expect(c, l).not.toBeNull();
        forms.add(c!);
      }
      expect(forms.size).toBe(s.fresh);
      // The variants really are re-spellings: many lines are not in canonical form already.
      expect(lines.filter((l) => canonicalize(l) !== l).length).toBeGreaterThan(10_000 * 0.4 * 0.9);
    }
  });

  it('emits only new pages at dupRate 0, and about dupRate re-spellings otherwise', () => {
    const none = new SyntheticUrls({ dupRate: 0 });
    none.fill([], 5000);
    expect(none.fresh).toBe(5000);
    const some = new SyntheticUrls({ dupRate: 0.25, seed: 11 });
    some.fill([], 40_000);
    // Binomial(40k, 0.25): sd ≈ 87; 6 sd either side.
    expect(Math.abs(40_000 - some.fresh - 10_000)).toBeLessThan(520);
  });

  it('uses every kind of re-spelling the canonicalizer undoes', () => {
    const lines = new SyntheticUrls({ seed: 5, dupRate: 0.5 }).fill([], 4000);
    const has = (re: RegExp): boolean => lines.some((l) => re.test(l));
    expect(has(/^https?:\/\/[^/]*[A-Z]/)).toBe(true); // host or scheme case
    expect(has(/:(80|443)\//)).toBe(true);
    expect(has(/#/)).toBe(true);
    expect(has(/[?&](utm_|gclid|fbclid|msclkid)/)).toBe(true);
    expect(has(/%2D/)).toBe(true);
    expect(has(/\.\//)).toBe(true);
    expect(has(/^https?:\/\/[^/]*\.(:\d+)?\//)).toBe(true); // trailing dot
  });

  it('rejects bad options', () => {
    expect(() => new SyntheticUrls({ seed: -1 })).toThrow(/seed/);
    expect(() => new SyntheticUrls({ dupRate: 1 })).toThrow(/dupRate/);
    expect(() => new SyntheticUrls({ dupRate: Number.NaN })).toThrow(/dupRate/);
    expect(() => new SyntheticUrls({ hosts: 0 })).toThrow(/hosts/);
    expect(() => new SyntheticUrls({ hosts: 2.5 })).toThrow(InvalidArgumentError);
  });
});
