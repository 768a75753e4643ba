import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admitStats } from '../../src/dedup/intake.js';
import { InvalidArgumentError, SeenSet, admitLinksBatch, canonicalize, keyToHex, urlKey } from '../../src/index.js';

const linkArb = fc.constantFrom(
  '/a', '/b', 'x/y', '?p=2', '/a?b=1&a=2', 'https://e.com/z',
  '/a', '/a?utm_source=x', '/b/../a', 'https://e.com/a', 'https://E.com/a#f', '../c', 'c', '?q=1', 'mailto:x@y.z', 'javascript:void(0)',
  '//cdn.e.net/x.js', 'https://other.org/p?b=2&a=1', 'https://other.org/p?a=1&b=2', 'https://bücher.de/', '',
);

describe('admitLinksBatch', () => {
  it('matches canonicalize + urlKey + a Set model, page after page, by both routes (fast-check, seed 22)', () => {
    const before = { ...admitStats };
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('https://e.com/dir/page', 'https://e.com/', 'http://x.org/a/b?c'), fc.array(linkArb, { maxLength: 30 })), {
          maxLength: 8,
        }),
        (pages) => {
          const seen = new SeenSet({ capacity: 64 });
          const model = new Set<string>();
          try {
            for (const [page, links] of pages) {
              const got = admitLinksBatch(seen, page, links);
              const fresh: string[] = [];
              links.forEach((l, i) => {
                const c = canonicalize(l, page);
                expect(got.canonical[i]).toBe(c);
                const isNew = c !== null && !model.has(c);
                if (isNew) {
                  model.add(c!);
                  fresh.push(c!);
                }
                expect(got.verdicts[i]).toBe(isNew ? 1 : 0);
              });
              expect(got.fresh).toEqual(fresh);
              fresh.forEach((u, k) => expect(keyToHex(got.freshKeys, k)).toBe(keyToHex(urlKey(u).key)));
            }
            expect(seen.len).toBe(model.size);
          } finally {
            seen.free();
          }
        },
      ),
      { seed: 22, numRuns: 200 },
    );
    // Both routes ran: pages the core finished in one call, and pages it handed back.
    expect(admitStats.fused).toBeGreaterThan(before.fused + 50);
    expect(admitStats.split).toBeGreaterThan(before.split + 50);
  });

  it('rejects a non-array', () => {
    const seen = new SeenSet();
    expect(() => admitLinksBatch(seen, 'https://e.com/', 'x' as unknown as string[])).toThrow(InvalidArgumentError);
    seen.free();
  });
});
