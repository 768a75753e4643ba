// The batched link path (issue 15) against the one-by-one path it replaced: keying a page's
// links in one batch gives what `linkKey` gives link by link, and `report` with links builds
// the same frontier — byte for byte — as reporting the page without links and then
// `discover`-ing each link in order (the old path), whatever the mix of known, new, repeated,
// non-canonical, nofollow and invalid links, with and without a seen filter, traps or a router.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Discovery, type FrontierOptions, Frontier, type SeenFilterSeam, canonicalKey, urlKey } from '../../src/index.js';
import { linkKey, linkKeyBatch } from '../../src/frontier/deps.js';

const RAW = fc.oneof(
  // canonical: the batched path
  fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 30 })).map(([h, p]) => `https://h${h}.example/p/${p}`),
  fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 30 })).map(([h, p]) => `https://sub${h}.h${h % 2}.example/q?x=${p}`),
  // not canonical as given: canonicalized one by one
  fc.integer({ min: 0, max: 30 }).map((p) => `HTTPS://H1.EXAMPLE:443/p/${p}/../${p}`),
  fc.integer({ min: 0, max: 30 }).map((p) => `https://h2.example`),
  // not frontier URLs: dropped
  fc.constantFrom('mailto:x@example.com', 'javascript:void(0)', 'ftp://h1.example/f', 'https://', '::::'),
  fc.constantFrom('https://-bad-.example/x', 'https://a..b/x', 'https://xn--/p'),
);

describe('linkKeyBatch', () => {
  it('keys, URLs and groups equal a loop of linkKey (fast-check, seed 4242)', () => {
    fc.assert(
      fc.property(fc.array(RAW, { maxLength: 40 }), fc.constantFrom('registrable', 'host', 'origin' as const), (raws, grouping) => {
        const n = raws.length;
        const keys = new Uint32Array(n * 4);
        const urls: (string | undefined)[] = new Array(n);
        const hosts: string[] = new Array(n);
        linkKeyBatch(raws, grouping, keys, urls, hosts);
        const one = new Uint32Array(4);
        raws.forEach((raw, i) => {
          const c = linkKey(raw, undefined, grouping, one);
          expect(urls[i]).toBe(c?.url);
          if (c === undefined) return;
          expect(hosts[i]).toBe(c.host);
          expect([...keys.subarray(i * 4, i * 4 + 4)]).toEqual([...one]);
        });
      }),
      { seed: 4242, numRuns: 300 },
    );
  });

  it('agrees with urlKey and canonicalKey on their own', () => {
    const raws = ['https://h1.example/a', 'HTTPS://H1.EXAMPLE/a', 'https://h1.example'];
    const keys = new Uint32Array(12);
    const urls: (string | undefined)[] = [];
    const hosts: string[] = [];
    linkKeyBatch(raws, 'registrable', keys, urls, hosts);
    expect([...keys.subarray(0, 4)]).toEqual([...urlKey('https://h1.example/a').key]);
    expect(urls[1]).toBe(canonicalKey('HTTPS://H1.EXAMPLE/a')!.url);
    expect(urls[2]).toBe(canonicalKey('https://h1.example')!.url);
  });
});

/** A consistent seen-filter seam (exact membership), as the frontier expects of one. */
function filter(): SeenFilterSeam {
  const set = new Set<string>();
  const id = (k: Uint32Array, i: number): string => Array.from(k.subarray(i * 4, i * 4 + 4)).join('.');
  return { maybeContains: (k, i) => set.has(id(k, i)), add: (k, i) => void set.add(id(k, i)), serialize: () => new TextEncoder().encode([...set].sort().join()) };
}

const VARIANTS: Record<string, () => Partial<FrontierOptions>> = {
  plain: () => ({}),
  full: () => ({ stateMachine: true, prioritizer: true, grouping: 'host', seenFilter: filter(), urlBudget: 9, depthCap: 3 }),
  traps: () => ({ traps: { observe: (url) => url.endsWith('7'), passes: (url) => !url.endsWith('3') }, prioritizer: { damping: 0.5 } }),
  router: () => ({ linkRouter: (ds: Discovery[]) => ds.filter((d) => !d.url.includes('/p/1')) }),
};

describe('report with links = report, then discover each link in order', () => {
  for (const [name, opts] of Object.entries(VARIANTS)) {
    it(`${name}: same dispatches and checkpoint bytes (fast-check, seed 99)`, () => {
      fc.assert(
        fc.property(fc.array(fc.array(fc.tuple(RAW, fc.boolean()), { maxLength: 25 }), { minLength: 1, maxLength: 8 }), (pages) => {
          const a = new Frontier(1, 0, opts());
          // The old path: the router discovers what it routes one by one, at the point where
          // report used to (before the host is re-placed), and hands nothing back.
          const bOpts = opts();
          const route = bOpts.linkRouter ?? ((ds: Discovery[]) => ds);
          let clock = 0;
          const b: Frontier = new Frontier(1, 0, {
            ...bOpts,
            linkRouter: (ds) => {
              for (const d of route(ds)) b.discover(d, clock);
              return [];
            },
          });
          for (const f of [a, b]) for (let h = 0; h < 3; h++) f.seed(`https://h${h}.example/p/${h}`, `h${h}.example`, 1, 0, 0);
          let now = 0;
          let p = 0;
          while (p < pages.length) {
            const ra = a.dispatch(now);
            const rb = b.dispatch(now);
            expect(rb?.url).toBe(ra?.url);
            if (ra === undefined || rb === undefined) {
              const next = a.nextEligible();
              expect(b.nextEligible()).toBe(next);
              if (next === undefined) break;
              now = next;
              continue;
            }
            const links = pages[p++]!.map(([url, nofollow]) => ({ url, nofollow }));
            a.report({ row: ra.row, url: ra.url, status: 200, links }, now);
            clock = now;
            b.report({ row: rb.row, url: rb.url, status: 200, links }, now);
          }
          expect(b.len()).toBe(a.len());
          expect(b.checkpointBytes()).toEqual(a.checkpointBytes());
          a.free();
          b.free();
        }),
        { seed: 99, numRuns: 30 },
      );
    });
  }
});
