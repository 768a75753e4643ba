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
        fc.array(fc.tuple(fc.constantFrom('https://e.com/dir/page', 'https://e.com/', 'http://x.org/a/b?c', 'https://bücher.de/p', 'https://e.com:8080/q'), fc.array(linkArb, { maxLength: 30 })), {
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
    // Both routes ran: pages the core finished in one call, and pages it finished but for a few links.
    expect(admitStats.fused).toBeGreaterThan(before.fused + 50);
    expect(admitStats.partial).toBeGreaterThan(before.partial + 50);
  });

  it('hands back only the links the core cannot answer, and repairs the first occurrence', () => {
    const seen = new SeenSet({ capacity: 64 });
    const page = 'https://e.com/dir/page';
    try {
      admitLinksBatch(seen, page, ['/warm', 'https://f.org/warm']); // both origins now in the key table
      const links: string[] = [];
      for (let k = 0; k < 58; k++) links.push(k % 2 === 0 ? `/p/${k}` : `https://f.org/q/${k}?b=1&a=${k}`);
      links.splice(10, 0, 'https://e.com/x/./y'); // declined (dot segment) …
      links.push('/x/y'); // … and the same URL, answered by the core, later on the page
      const before = { ...admitStats };
      const got = admitLinksBatch(seen, page, links);
      expect(admitStats.partial).toBe(before.partial + 1);
      expect(admitStats.pending).toBe(before.pending + 1);
      expect(got.canonical[10]).toBe('https://e.com/x/y');
      expect(got.verdicts[10]).toBe(1);
      expect(got.verdicts[59]).toBe(0);
      expect(got.fresh.length).toBe(59);
      expect(seen.len).toBe(2 + 59);
      // The same page again: all seen, and still one pending link.
      const again = admitLinksBatch(seen, page, links);
      expect([...again.verdicts].every((v) => v === 0)).toBe(true);
      expect(admitStats.pending).toBe(before.pending + 2);
      // A page of known origins and plain links goes in one call.
      admitLinksBatch(seen, page, links.filter((_, i) => i !== 10));
      expect(admitStats.fused).toBe(before.fused + 1);
      // A large page with many declined links (the repair's indexed branch).
      const big: string[] = [];
      for (let k = 0; k < 200; k++) big.push(`/big/./${k}`);
      for (let k = 0; k < 2000; k++) big.push(`/big/${k % 400}`);
      const b = admitLinksBatch(seen, page, big);
      const model = new Set<string>();
      big.forEach((l, i) => {
        const c = canonicalize(l, page)!;
        expect(b.verdicts[i]).toBe(model.has(c) ? 0 : 1);
        model.add(c);
      });
    } finally {
      seen.free();
    }
  });

  it('rejects a non-array', () => {
    const seen = new SeenSet();
    expect(() => admitLinksBatch(seen, 'https://e.com/', 'x' as unknown as string[])).toThrow(InvalidArgumentError);
    seen.free();
  });
});
