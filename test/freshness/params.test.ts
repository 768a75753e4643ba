import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { defaultParams, freshnessParams } from '../../src/freshness/index.js';

describe('freshness params', () => {
  it('has the section-12 defaults', () => {
    const p = defaultParams();
    expect(p).toEqual({
      alpha: 0.5,
      minRate: 1 / 8760,
      maxRate: 4,
      recencyHalfLife: 8,
      simhashNearDupThreshold: 3,
      refRate: 1 / 24,
      reprobeRate: 1 / 336,
      minReprobeGap: 1,
      hostSpreadWindow: 24,
      trustLastModified: true,
      changePointP: 1e-5,
      rateChangeHazard: 0.25 / 8760,
      learnHazard: true,
      confirmStarvation: true,
    });
    expect(Object.isFrozen(p)).toBe(true);
    expect(freshnessParams()).toBe(p);
    expect(freshnessParams({ alpha: 1 }).alpha).toBe(1);
  });

  it.each([
    [{ alpha: 0 }, /FreshnessParams\.alpha: expected a finite number > 0.*received 0/],
    [{ maxRate: Number.NaN }, /maxRate.*received NaN/],
    [{ simhashNearDupThreshold: 2.5 }, /simhashNearDupThreshold: expected an integer/],
    [{ simhashNearDupThreshold: 65 }, /<= 64/],
    [{ minReprobeGap: 0 }, /minReprobeGap/],
    [{ hostSpreadWindow: -1 }, /hostSpreadWindow/],
    [{ trustLastModified: 'yes' }, /trustLastModified: expected a boolean/],
    [{ changePointP: 0.6 }, /changePointP/],
    [{ changePointP: -1e-5 }, /changePointP/],
    [{ rateChangeHazard: -1 }, /rateChangeHazard/],
    [{ confirmStarvation: 1 }, /confirmStarvation: expected a boolean/],
    [{ minRate: 5 }, /minRate \(5\) must be below maxRate \(4\)/],
    [{ refRate: 10 }, /refRate \(10\) must lie within/],
    [{ reprobeRate: 2 }, /reprobeRate \(2\/h\) is faster than one crawl per minReprobeGap/],
    [{ bogus: 1 }, /unknown option "bogus"/],
  ])('rejects %o', (input, message) => {
    expect(() => freshnessParams(input as never)).toThrow(InvalidArgumentError);
    expect(() => freshnessParams(input as never)).toThrow(message);
  });
});
