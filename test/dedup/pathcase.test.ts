import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PathCase, caseRecordProblem } from '../../src/dedup/pathcase.js';

const O = 'http://iis.test';

describe('PathCase', () => {
  it('learns an origin once two paths were each served the same under two spellings, then takes links to the spelling met first', () => {
    const c = new PathCase();
    expect(c.observe(`${O}/Catalog/Item1.aspx`, 200, 1n, 0xf0n)).toBeUndefined();
    expect(c.observe(`${O}/catalog/item1.aspx`, 200, 1n, 0xf0n)).toBeUndefined(); // one path: not yet
    expect(c.rewrite(`${O}/CATALOG/ITEM1.ASPX`)).toBeUndefined();
    c.observe(`${O}/Catalog/Item2.aspx`, 200, 2n, 0x0fn);
    // Bytes differ (the page echoes the spelling in an attribute), text the same: near-duplicate simhash.
    expect(c.observe(`${O}/CATALOG/ITEM2.ASPX`, 200, 3n, 0x0fn | (1n << 40n))).toEqual({ origin: O, learned: true });
    expect(c.learned()).toEqual([O]);
    // Served spellings: links go there; the served spelling itself is left alone.
    expect(c.rewrite(`${O}/CATALOG/ITEM1.ASPX`)).toBe(`${O}/Catalog/Item1.aspx`);
    expect(c.rewrite(`${O}/Catalog/Item1.aspx`)).toBeUndefined();
    // The query is kept as written, and is part of what must match.
    expect(c.rewrite(`${O}/catalog/item1.aspx?Id=A`)).toBeUndefined();
    expect(c.rewrite(`${O}/CATALOG/item1.aspx?Id=A`)).toBe(`${O}/catalog/item1.aspx?Id=A`);
    expect(c.rewrite(`${O}/CATALOG/item1.aspx?id=a`)).toBeUndefined();
    // A path not served yet: its first linked spelling is the one later links take.
    expect(c.rewrite(`${O}/About.aspx`)).toBeUndefined();
    expect(c.rewrite(`${O}/about.aspx`)).toBe(`${O}/About.aspx`);
    // Other origins are untouched.
    expect(c.rewrite('http://other.test/CATALOG/ITEM1.ASPX')).toBeUndefined();
    // A spelling queued before the lesson is a duplicate of the served one; a served spelling is not.
    expect(c.duplicateOf(`${O}/catalog/ITEM1.aspx`)).toBe(`${O}/Catalog/Item1.aspx`);
    expect(c.duplicateOf(`${O}/Catalog/Item1.aspx`)).toBeUndefined();
    expect(c.duplicateOf(`${O}/about.aspx`)).toBeUndefined(); // linked, never served
  });

  it('never learns a case-sensitive server: different pages, or a 404 / soft-404 for another spelling, ban the origin', () => {
    const two = new PathCase();
    two.observe(`${O}/Readme`, 200, 1n, 0xffn);
    expect(two.observe(`${O}/README`, 200, 2n, 0xff00n)).toBeUndefined(); // banned, nothing was learned
    two.observe(`${O}/a/X`, 200, 5n, 1n);
    two.observe(`${O}/a/x`, 200, 5n, 1n);
    two.observe(`${O}/b/X`, 200, 6n, 1n);
    two.observe(`${O}/b/x`, 200, 6n, 1n);
    expect(two.learned()).toEqual([]);
    expect(two.export()).toEqual([[O, false]]);

    const missing = new PathCase({ minEvidence: 1 });
    missing.observe(`${O}/Page`, 200, 1n, 1n);
    missing.observe(`${O}/page`, 404, undefined, undefined);
    missing.observe(`${O}/Other`, 200, 2n, 2n);
    expect(missing.observe(`${O}/other`, 200, 2n, 2n)).toBeUndefined();
    expect(missing.learned()).toEqual([]);
  });

  it('unlearns an origin when a link taken to a known spelling is missing, or two spellings stop matching', () => {
    const c = new PathCase({ minEvidence: 1 });
    c.observe(`${O}/A`, 200, 1n, 1n);
    expect(c.observe(`${O}/a`, 200, 1n, 1n)).toEqual({ origin: O, learned: true });
    expect(c.rewrite(`${O}/Q`)).toBeUndefined();
    expect(c.rewrite(`${O}/q`)).toBe(`${O}/Q`);
    expect(c.refuted(`${O}/x`, `${O}/y`)).toBeUndefined(); // not this learner's doing
    expect(c.refuted(`${O}/q`, `${O}/Q`)).toEqual({ origin: O, learned: false });
    expect(c.rewrite(`${O}/q`)).toBeUndefined();
    // Banned for the run: new evidence does not bring it back.
    c.observe(`${O}/B`, 200, 2n, 2n);
    expect(c.observe(`${O}/b`, 200, 2n, 2n)).toBeUndefined();
    expect(c.learned()).toEqual([]);

    const d = new PathCase({ minEvidence: 1 });
    d.observe(`${O}/A`, 200, 1n, 1n);
    d.observe(`${O}/a`, 200, 1n, 1n);
    d.observe(`${O}/C`, 200, 3n, 0xffffn);
    expect(d.observe(`${O}/c`, 200, 4n, 0xffff0000n)).toEqual({ origin: O, learned: false });
  });

  it('keeps its lessons through export / import, and checks the records', () => {
    const c = new PathCase({ minEvidence: 1 });
    c.observe(`${O}/A`, 200, 1n, 1n);
    c.observe(`${O}/a`, 200, 1n, 1n);
    c.observe('http://b.test/A', 200, 1n, 1n);
    c.observe('http://b.test/a', 404, undefined, undefined);
    const records = c.export();
    expect(records).toEqual([[O, true], ['http://b.test', false]]);
    const back = new PathCase();
    back.import(records);
    expect(back.learned()).toEqual([O]);
    expect(back.export()).toEqual(records);
    // A banned record wins over a learned one.
    const both = new PathCase();
    both.import([[O, true], [O, false], [O, true]]);
    expect(both.learned()).toEqual([]);
    expect(caseRecordProblem(['http://a.test', 'yes'])).toBe('learned "yes" is not true or false');
    expect(caseRecordProblem(['a.test', true])).toMatch(/not an http\(s\) origin/);
    expect(() => new PathCase().import([['ftp://x', true]] as never)).toThrow(/PathCase.import/);
  });

  it('holds at most maxSpellings spellings of each kind', () => {
    const c = new PathCase({ minEvidence: 1, maxSpellings: 8 });
    c.observe(`${O}/A`, 200, 1n, 1n);
    c.observe(`${O}/a`, 200, 1n, 1n);
    for (let i = 0; i < 100; i++) {
      c.observe(`${O}/s${i}`, 200, BigInt(i + 10), 0n);
      c.rewrite(`${O}/L${i}`);
    }
    // The oldest are forgotten: an early spelling is no longer known, a recent one is.
    expect(c.rewrite(`${O}/l0`)).toBeUndefined();
    expect(c.rewrite(`${O}/l99`)).toBe(`${O}/L99`);
    expect(c.duplicateOf(`${O}/S0`)).toBeUndefined();
    expect(c.duplicateOf(`${O}/S99`)).toBe(`${O}/s99`);
  });

  it('never takes a link to a spelling no page or link used, and never moves its query (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.stringMatching(/^[A-Za-z]{1,4}$/), fc.boolean()), { maxLength: 40 }), fc.stringMatching(/^[A-Za-z]{1,4}$/), (events, probe) => {
        const c = new PathCase({ minEvidence: 1 });
        c.observe(`${O}/Z`, 200, 1n, 1n);
        c.observe(`${O}/z`, 200, 1n, 1n);
        const used = new Set<string>();
        for (const [p, serve] of events) {
          const url = `${O}/${p}?K=v`;
          used.add(url);
          if (serve) c.observe(url, 200, BigInt(p.toLowerCase().length), 0n);
          else c.rewrite(url);
        }
        const to = c.rewrite(`${O}/${probe}?K=v`);
        if (to !== undefined) {
          expect(used.has(to)).toBe(true);
          expect(to.toLowerCase()).toBe(`${O}/${probe}?K=v`.toLowerCase());
          expect(to.endsWith('?K=v')).toBe(true);
        }
      }),
    );
  });
});

describe("PathCase with fold: 'index'", () => {
  const D = 'http://docs.test';
  it('learns a server that serves a directory and its index file the same, then takes links to the spelling met first', () => {
    const c = new PathCase({ fold: 'index' });
    expect(c.observe(`${D}/guide/`, 200, 1n, 0xf0n)).toBeUndefined();
    expect(c.observe(`${D}/guide/index.html`, 200, 1n, 0xf0n)).toBeUndefined(); // one directory: not yet
    c.observe(`${D}/api/index.html`, 200, 2n, 0x0fn);
    expect(c.observe(`${D}/api/`, 200, 2n, 0x0fn)).toEqual({ origin: D, learned: true });
    expect(c.rewrite(`${D}/guide/index.html`)).toBe(`${D}/guide/`);
    expect(c.rewrite(`${D}/api/`)).toBe(`${D}/api/index.html`);
    // Every index name servers use, at the root too; a query stays and must match.
    expect(c.rewrite(`${D}/faq/index.htm`)).toBeUndefined();
    expect(c.rewrite(`${D}/faq/`)).toBe(`${D}/faq/index.htm`);
    for (const name of ['index.php', 'default.aspx', 'Default.asp', 'index.shtml', 'index.jsp', 'INDEX.HTML']) expect(c.rewrite(`${D}/faq/${name}`), name).toBe(`${D}/faq/index.htm`);
    expect(c.rewrite(`${D}/`)).toBeUndefined();
    expect(c.rewrite(`${D}/index.html`)).toBe(`${D}/`);
    expect(c.rewrite(`${D}/guide/index.html?v=2`)).toBeUndefined();
    expect(c.rewrite(`${D}/guide/?v=2`)).toBe(`${D}/guide/index.html?v=2`);
    // Not an index file: a page named index-like, a file without the slash before it, letter case of the rest.
    expect(c.rewrite(`${D}/guide/indexes.html`)).toBeUndefined();
    expect(c.rewrite(`${D}/guideindex.html`)).toBeUndefined();
    expect(c.rewrite(`${D}/Guide/index.html`)).toBeUndefined();
    expect(c.duplicateOf(`${D}/guide/index.html`)).toBe(`${D}/guide/`);
    expect(c.duplicateOf(`${D}/guide/`)).toBeUndefined();
  });

  it('never learns a server with no index file there or another page under it; a missing rewrite unlearns', () => {
    const missing = new PathCase({ fold: 'index', minEvidence: 1 });
    missing.observe(`${D}/`, 200, 1n, 1n);
    missing.observe(`${D}/index.html`, 404, undefined, undefined);
    missing.observe(`${D}/a/`, 200, 2n, 2n);
    expect(missing.observe(`${D}/a/index.html`, 200, 2n, 2n)).toBeUndefined();
    expect(missing.export()).toEqual([[D, false]]);
    const other = new PathCase({ fold: 'index', minEvidence: 1 });
    other.observe(`${D}/blog/`, 200, 1n, 0xffn);
    expect(other.observe(`${D}/blog/index.html`, 200, 2n, 0xff00n)).toBeUndefined();
    expect(other.learned()).toEqual([]);
    const c = new PathCase({ fold: 'index', minEvidence: 1 });
    c.observe(`${D}/a/`, 200, 1n, 1n);
    expect(c.observe(`${D}/a/index.php`, 200, 1n, 1n)).toEqual({ origin: D, learned: true });
    expect(c.refuted(`${D}/b/index.php`, `${D}/c/`)).toBeUndefined(); // not two spellings of one path
    c.rewrite(`${D}/b/`);
    expect(c.rewrite(`${D}/b/index.php`)).toBe(`${D}/b/`);
    expect(c.refuted(`${D}/b/index.php`, `${D}/b/`)).toEqual({ origin: D, learned: false });
    expect(c.rewrite(`${D}/a/`)).toBeUndefined();
  });

  it('a case fold never folds index files and an index fold never folds letter case', () => {
    const cs = new PathCase({ minEvidence: 1 });
    cs.observe(`${D}/a/`, 200, 1n, 1n);
    expect(cs.observe(`${D}/a/index.html`, 200, 1n, 1n)).toBeUndefined();
    const ix = new PathCase({ fold: 'index', minEvidence: 1 });
    ix.observe(`${D}/A/`, 200, 1n, 1n);
    expect(ix.observe(`${D}/a/`, 200, 1n, 1n)).toBeUndefined();
    expect(() => new PathCase({ fold: 'slash' as 'case' })).toThrow(/fold/);
  });
});
