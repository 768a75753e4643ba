import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, Prioritizer, domainHash, resolvePrioritizerParams } from '../../src/index.js';

describe('OPIC prioritizer', () => {
  it('conserves cash: endowed = cash + history (+ the damped share), on any crawl order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 20 }),
        fc.array(fc.record({ page: fc.nat(), links: fc.array(fc.nat(), { maxLength: 5 }) }), { maxLength: 60 }),
        fc.constantFrom(0, 0.15, 0.5),
        (n, crawls, damping) => {
          const p = new Prioritizer({ damping });
          p.ensureRows(n);
          let endowed = 0;
          for (let i = 0; i < n; i++) {
            p.endow(i, i % 3 === 0 ? 2 : 0);
            endowed += i % 3 === 0 ? 2 : 1;
          }
          let damped = 0;
          let sunk = 0;
          let crawled = 0;
          for (const c of crawls) {
            const row = c.page % n;
            const cash = p.cash(row);
            crawled += cash;
            const each = p.crawl(row, c.links.length);
            if (c.links.length === 0) sunk += cash;
            else damped += cash * damping;
            for (const l of c.links) p.credit(l % n, each);
          }
          let cash = 0;
          let history = 0;
          for (let i = 0; i < n; i++) {
            cash += p.cash(i);
            history += p.history(i);
          }
          // Cash only leaves circulation through damping and through pages with no out-links.
          expect(cash).toBeCloseTo(endowed - damped - sunk, 2);
          expect(history).toBeCloseTo(crawled, 2);
        },
      ),
      { seed: 301, numRuns: 200 },
    );
  });

  it('counts distinct linking domains and raises the host budget with them', () => {
    const p = new Prioritizer({ budgetBase: 10, budgetPerDomain: 5 });
    p.ensureHost(1);
    expect(p.hostBudget(1)).toBe(10);
    expect(p.linkFrom(1, 'x.example')).toBe(true);
    expect(p.linkFrom(1, 'x.example')).toBe(false);
    expect(p.linkFrom(1, 'y.example')).toBe(true);
    expect(p.inDegree(1)).toBe(2);
    expect(p.hostBudget(1)).toBe(20);
    expect(new Prioritizer().hostBudget(1)).toBe(0);
  });

  it('blends importance, imported rank, host score and in-degree', () => {
    const p = new Prioritizer({ importanceWeight: 1, rankWeight: 2, hostWeight: 3, inDegreeWeight: 4 });
    p.ensureRows(1);
    p.ensureHost(0);
    p.endow(0, 1.5);
    p.setRank(0, 0.25);
    p.linkFrom(0, 'a.example');
    expect(p.priority(0, 0, 0.5)).toBeCloseTo(1.5 + 0.5 + 1.5 + 4 * Math.log2(2));
  });

  it('round-trips host state and rejects a mismatched blob', () => {
    const p = new Prioritizer();
    p.linkFrom(0, 'a');
    p.linkFrom(2, 'b');
    p.linkFrom(2, 'c');
    const blob = p.encodeHosts([2, 0, 1]);
    const q = new Prioritizer();
    q.restoreHosts(blob, 3);
    expect([q.inDegree(0), q.inDegree(1), q.inDegree(2)]).toEqual([2, 1, 0]);
    expect(() => q.restoreHosts(blob, 4)).toThrow(/holds 3 hosts/);
    expect(() => q.restoreHosts(blob.subarray(0, blob.length - 1), 3)).toThrow(/prioritizer/);
  });

  it('validates its parameters', () => {
    expect(() => resolvePrioritizerParams({ damping: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => resolvePrioritizerParams({ seedCash: 0 })).toThrow(/seedCash/);
    expect(domainHash('a.example')).toBe(domainHash('a.example'));
    expect(domainHash('a.example')).not.toBe(domainHash('b.example'));
  });
});
