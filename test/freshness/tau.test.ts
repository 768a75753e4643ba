import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { TauController, solveWaterLevel } from '../../src/freshness/index.js';

/** Runs the controller against S(τ) = B·(τₒ/τ)^ε (τₒ the fixed point) and returns the demand seen at each tick. */
function run(c: TauController, budget: number, tauStar: number, elasticity: number, ticks: number): number[] {
  const seen: number[] = [];
  for (let t = 0; t < ticks; t++) {
    const s = budget * Math.pow(tauStar / c.tau(), elasticity);
    seen.push(s);
    c.tick(s);
  }
  return seen;
}

describe('TauController', () => {
  it.each([0.5, 1, 1.5, 2])('converges without overshoot on a demand curve of elasticity %s', (elasticity) => {
    for (const [start, tauStar] of [
      [1e-3, 50],
      [1e4, 0.2],
    ] as const) {
      const c = new TauController(1000, { initialTau: start });
      const seen = run(c, 1000, tauStar, elasticity, 400);
      const side = Math.sign(seen[0]! - 1000);
      let settled = -1;
      for (let t = 0; t < seen.length; t++) {
        const inBand = Math.abs(seen[t]! / 1000 - 1) <= 0.01;
        if (inBand && settled < 0) settled = t;
        // Never crosses to the far side of the band: no overshoot.
        if (!inBand) expect(Math.sign(seen[t]! - 1000)).toBe(side);
        // Once inside the band it stays there.
        if (settled >= 0) expect(inBand).toBe(true);
      }
      expect(settled).toBeGreaterThanOrEqual(0);
      expect(settled).toBeLessThan(elasticity === 0.5 ? 250 : 120);
    }
  });

  it('holds still inside the dead band even on noisy readings', () => {
    const c = new TauController(100, { initialTau: 7 });
    for (let t = 0; t < 100; t++) c.tick(100 * (1 + 0.0099 * Math.sin(t)));
    expect(c.tau()).toBe(7);
  });

  it('moves by at most maxStep per tick and in the right direction', () => {
    const c = new TauController(100, { initialTau: 1, maxStep: 1.1 });
    c.tick(1e9);
    expect(c.tau()).toBeCloseTo(1.1, 12);
    c.tick(0);
    c.tick(0);
    expect(c.tau()).toBeCloseTo(1.1 / 1.1 / 1.1, 12);
    c.tick(Number.POSITIVE_INFINITY);
    expect(c.tau()).toBeCloseTo(1, 12);
  });

  it('funds nothing with a non-positive budget, and can be retargeted', () => {
    const c = new TauController(0);
    expect(c.tau()).toBe(Number.POSITIVE_INFINITY);
    expect(c.tick(50)).toBe(Number.POSITIVE_INFINITY);
    c.setBudget(10);
    expect(c.tau()).toBeCloseTo(1e-3, 15);
    expect(c.budget()).toBe(10);
  });

  it('rejects bad budgets, readings and options', () => {
    expect(() => new TauController(Number.NaN)).toThrow(InvalidArgumentError);
    expect(() => new TauController(Number.POSITIVE_INFINITY)).toThrow(/finite budget.*Infinity/);
    expect(() => new TauController(1).tick(-1)).toThrow(/scheduled rate >= 0, received -1/);
    expect(() => new TauController(1).tick(Number.NaN)).toThrow(/received NaN/);
    expect(() => new TauController(1, { gain: 0 })).toThrow(/TauControllerOptions\.gain/);
    expect(() => new TauController(1, { maxStep: 1 })).toThrow(/maxStep/);
    expect(() => new TauController(1, { initialTau: 0 })).toThrow(/initialTau/);
  });
});

describe('TauController state', () => {
  it('logTau/setLogTau restore the exact level (exp∘ln through initialTau need not)', () => {
    const a = new TauController(100, { initialTau: 0.37 });
    for (const s of [310, 250, 180, 140, 120, 111]) a.tick(s);
    const b = new TauController(100);
    b.setLogTau(a.logTau());
    expect(b.tau()).toBe(a.tau());
    for (const s of [90, 95, 130]) expect(b.tick(s)).toBe(a.tick(s));
    b.setLogTau(1e6);
    expect(b.tau()).toBeCloseTo(1e12, -3);
    expect(() => b.setLogTau(Number.NaN)).toThrow(InvalidArgumentError);
  });
});

describe('solveWaterLevel', () => {
  it('finds where a decreasing demand meets the budget', () => {
    const tau = solveWaterLevel((t) => 1000 / t, 40);
    expect(tau).toBeCloseTo(25, 9);
    expect(solveWaterLevel(() => 1e9, 1)).toBeCloseTo(1e12, 0);
    expect(solveWaterLevel(() => 0, 1)).toBeCloseTo(1e-12, 20);
    expect(() => solveWaterLevel(() => 1, 0)).toThrow(/finite budget > 0, received 0/);
  });
});
