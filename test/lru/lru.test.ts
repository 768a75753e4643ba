import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evictOldest, lruSet, lruTouch } from '../../src/lru/index.js';

describe('evictOldest', () => {
  it('evicts in the order a fresh iterator would, whatever was inserted, touched, deleted or cleared between (property)', () => {
    const op = fc.oneof(
      fc.record({ k: fc.constant('set' as const), key: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ k: fc.constant('touch' as const), key: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ k: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ k: fc.constant('evict' as const) }),
      fc.record({ k: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.boolean(), (ops, asSet) => {
        const map = new Map<number, number>();
        const set = new Set<number>();
        // The reference: an array in recency order.
        const ref: number[] = [];
        for (const o of ops) {
          if (o.k === 'evict') {
            const got = asSet ? evictOldest(set) : evictOldest(map);
            expect(got).toBe(ref.shift());
          } else if (o.k === 'clear') {
            map.clear();
            set.clear();
            ref.length = 0;
          } else {
            const at = ref.indexOf(o.key);
            if (o.k === 'delete') {
              map.delete(o.key);
              set.delete(o.key);
              if (at >= 0) ref.splice(at, 1);
            } else if (o.k === 'set' || at >= 0) {
              lruTouch(map, o.key, o.key);
              set.delete(o.key);
              set.add(o.key);
              if (at >= 0) ref.splice(at, 1);
              ref.push(o.key);
            }
          }
          expect(asSet ? [...set] : [...map.keys()]).toEqual(ref);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads the value before the entry goes; lruSet bounds a map and tells what it evicted', () => {
    const m = new Map([['a', 1], ['b', 2]]);
    let seen: number | undefined;
    expect(evictOldest(m, (k) => (seen = m.get(k)))).toBe('a');
    expect(seen).toBe(1);
    expect(evictOldest(new Set())).toBeUndefined();
    const evicted: [number, string][] = [];
    const lru = new Map<string, number>();
    for (const [i, k] of ['a', 'b', 'c', 'a', 'd', 'e'].entries()) lruSet(lru, k, i, 3, (v, key) => evicted.push([v, key]));
    expect([...lru]).toEqual([['a', 3], ['d', 4], ['e', 5]]);
    expect(evicted).toEqual([[1, 'b'], [2, 'c']]);
  });
});
