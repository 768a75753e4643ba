import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PathCase, type ServedPage, caseRecordProblem } from '../../src/dedup/pathcase.js';

const O = 'http://iis.test';

/** A page served with these fingerprints (and rel=canonical). */
const pg = (contentFp: bigint | undefined, simhash: bigint | undefined, churnFp?: bigint, canonical?: string): ServedPage => ({ contentFp, simhash, churnFp, canonical });

/**
 * Spends a learned origin's early checks (`isCheck`: its 1st, 2nd, 4th, 8th and 16th refusals):
 * 16 paths served under one spelling and met in a link under another (`spell(i)`: [served, other]).
 * Its next 15 refusals are refusals.
 */
function pastEarlyChecks(c: PathCase, spell: (i: number) => [string, string]): void {
  for (let i = 0; i < 16; i++) {
    const [served, other] = spell(i);
    c.observe(served, 200, pg(BigInt(1000 + i), 0x1234n));
    c.rewrite(other);
  }
}
const caseSpellings = (i: number): [string, string] => [`${O}/Warm${i}`, `${O}/warm${i}`];

describe('PathCase', () => {
  it('learns an origin once two paths were each served the same under two spellings, then takes links to the spelling met first', () => {
    const c = new PathCase();
    expect(c.observe(`${O}/Catalog/Item1.aspx`, 200, pg(1n, 0xf0n))).toBeUndefined();
    expect(c.observe(`${O}/catalog/item1.aspx`, 200, pg(1n, 0xf0n))).toBeUndefined(); // one path: not yet
    expect(c.rewrite(`${O}/CATALOG/ITEM1.ASPX`)).toBeUndefined();
    c.observe(`${O}/Catalog/Item2.aspx`, 200, pg(2n, 0x0fn, 7n));
    // Bytes differ (the page echoes the spelling in an attribute, as ASP.NET's form action), text the same.
    expect(c.observe(`${O}/CATALOG/ITEM2.ASPX`, 200, pg(3n, 0x0fn, 7n))).toEqual({ origin: O, learned: true });
    expect(c.learned()).toEqual([O]);
    pastEarlyChecks(c, caseSpellings);
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
    two.observe(`${O}/Readme`, 200, pg(1n, 0xffn));
    expect(two.observe(`${O}/README`, 200, pg(2n, 0xff00n))).toBeUndefined(); // banned, nothing was learned
    two.observe(`${O}/a/X`, 200, pg(5n, 1n));
    two.observe(`${O}/a/x`, 200, pg(5n, 1n));
    two.observe(`${O}/b/X`, 200, pg(6n, 1n));
    two.observe(`${O}/b/x`, 200, pg(6n, 1n));
    expect(two.learned()).toEqual([]);
    expect(two.export()).toEqual([[O, false]]);

    const missing = new PathCase({ minEvidence: 1 });
    missing.observe(`${O}/Page`, 200, pg(1n, 1n));
    missing.observe(`${O}/page`, 404, pg(undefined, undefined));
    missing.observe(`${O}/Other`, 200, pg(2n, 2n));
    expect(missing.observe(`${O}/other`, 200, pg(2n, 2n))).toBeUndefined();
    expect(missing.learned()).toEqual([]);
  });

  it('unlearns an origin when a link taken to a known spelling is missing, or two spellings stop matching', () => {
    const c = new PathCase({ minEvidence: 1 });
    c.observe(`${O}/A`, 200, pg(1n, 1n));
    expect(c.observe(`${O}/a`, 200, pg(1n, 1n))).toEqual({ origin: O, learned: true });
    pastEarlyChecks(c, caseSpellings);
    expect(c.rewrite(`${O}/Q`)).toBeUndefined();
    expect(c.rewrite(`${O}/q`)).toBe(`${O}/Q`);
    expect(c.refuted(`${O}/x`, `${O}/y`)).toBeUndefined(); // not this learner's doing
    expect(c.refuted(`${O}/q`, `${O}/Q`)).toEqual({ origin: O, learned: false });
    expect(c.rewrite(`${O}/q`)).toBeUndefined();
    // Banned for the run: new evidence does not bring it back.
    c.observe(`${O}/B`, 200, pg(2n, 2n));
    expect(c.observe(`${O}/b`, 200, pg(2n, 2n))).toBeUndefined();
    expect(c.learned()).toEqual([]);

    const d = new PathCase({ minEvidence: 1 });
    d.observe(`${O}/A`, 200, pg(1n, 1n));
    d.observe(`${O}/a`, 200, pg(1n, 1n));
    d.observe(`${O}/C`, 200, pg(3n, 0xffffn));
    expect(d.observe(`${O}/c`, 200, pg(4n, 0xffff0000n))).toEqual({ origin: O, learned: false });
  });

  it('learns nothing from spellings near in text where one names a canonical (a MediaWiki redirect); the same text counts whatever its canonical, near text naming none counts', () => {
    // MediaWiki serves /wiki/Nasa as /wiki/NASA's text plus "(Redirected from Nasa)", naming
    // /wiki/NASA canonical. Before, two such pairs (simhashes within 3 bits) taught the origin,
    // and /wiki/PI, /wiki/CAT… were then taken for /wiki/Pi, /wiki/Cat and never fetched.
    const W = 'http://wiki.test';
    const c = new PathCase();
    c.observe(`${W}/wiki/NASA`, 200, pg(1n, 0xf0f0n, 11n, `${W}/wiki/NASA`));
    expect(c.observe(`${W}/wiki/Nasa`, 200, pg(2n, 0xf0f1n, 12n, `${W}/wiki/NASA`))).toBeUndefined();
    c.observe(`${W}/wiki/United_Nations`, 200, pg(3n, 0x0f0fn, 13n, `${W}/wiki/United_Nations`));
    expect(c.observe(`${W}/wiki/United_nations`, 200, pg(4n, 0x0f0en, 14n, `${W}/wiki/United_Nations`))).toBeUndefined();
    expect(c.learned()).toEqual([]);
    expect(c.rewrite(`${W}/wiki/Pi`)).toBeUndefined();
    expect(c.rewrite(`${W}/wiki/PI`)).toBeUndefined();
    // The same text counts whatever the canonical: an IIS site names one spelling on every page.
    const iis = new PathCase();
    iis.observe(`${O}/Products/Shoes`, 200, pg(5n, 0x3333n, 15n, `${O}/Products/Shoes`));
    expect(iis.observe(`${O}/products/shoes`, 200, pg(5n, 0x3333n, 15n, `${O}/Products/Shoes`))).toBeUndefined();
    iis.observe(`${O}/About`, 200, pg(6n, 0x5555n, 16n, `${O}/About`));
    expect(iis.observe(`${O}/about`, 200, pg(6n, 0x5555n, 16n, `${O}/About`))).toEqual({ origin: O, learned: true });
    // Near in text without a canonical (a breadcrumb echoing the path asked) is evidence; the
    // sampled checks guard a wrong lesson.
    const n = new PathCase({ minEvidence: 1 });
    n.observe(`${O}/A`, 200, pg(1n, 0xf0n, 1n));
    expect(n.observe(`${O}/a`, 200, pg(2n, 0xf1n, 2n))).toEqual({ origin: O, learned: true });
  });

  it('keeps checking a lesson: its 1st, 2nd, 4th, 8th and 16th refused spellings, then every 32nd, are fetched as written', () => {
    const c = new PathCase({ minEvidence: 1 });
    c.observe(`${O}/A`, 200, pg(1n, 1n));
    c.observe(`${O}/a`, 200, pg(1n, 1n));
    const kept: number[] = [];
    for (let i = 1; i <= 70; i++) {
      c.observe(`${O}/P${i}`, 200, pg(BigInt(100 + i), 5n));
      if (c.rewrite(`${O}/p${i}`) === undefined) kept.push(i);
    }
    expect(kept).toEqual([1, 2, 4, 8, 16, 32, 64]);
    // A spelling met again keeps its first answer: a check stays one, a refusal one.
    expect(c.rewrite(`${O}/p1`)).toBeUndefined();
    expect(c.rewrite(`${O}/p3`)).toBe(`${O}/P3`);
    // At dispatch: a check met at a link is let through; a spelling queued before the lesson is
    // counted there (refusal 71 is refused, and so on), `duplicateOf` counts nothing.
    expect(c.refuses(`${O}/p2`)).toBe(false);
    expect(c.refuses(`${O}/p3`)).toBe(true);
    expect(c.duplicateOf(`${O}/P71`)).toBeUndefined();
    c.observe(`${O}/Q`, 200, pg(9n, 9n));
    expect(c.duplicateOf(`${O}/q`)).toBe(`${O}/Q`);
    expect(c.refuses(`${O}/q`)).toBe(true);
    expect(c.refuses(`${O}/q`)).toBe(true);
    expect(c.refuses(`${O}/Q`)).toBe(false); // the spelling served
    // Read back from a checkpoint, a lesson's first refusals are checks again.
    const back = new PathCase();
    back.import(c.export());
    back.observe(`${O}/R`, 200, pg(7n, 7n));
    expect(back.refuses(`${O}/r`)).toBe(false);
    expect(back.refuses(`${O}/rR`)).toBe(false); // no other spelling served: nothing to refuse
  });

  it('a check served as another page unlearns the lesson and gives back the spellings it took away from links', () => {
    // A wiki whose two redirects (no canonical) served their targets byte for byte: learned.
    const W = 'http://wiki.test';
    const c = new PathCase();
    c.observe(`${W}/wiki/NASA`, 200, pg(1n, 0xf0f0n, 1n));
    c.observe(`${W}/wiki/Nasa`, 200, pg(1n, 0xf0f0n, 1n));
    c.observe(`${W}/wiki/Sun`, 200, pg(2n, 0x0f0fn, 2n));
    expect(c.observe(`${W}/wiki/SUN`, 200, pg(2n, 0x0f0fn, 2n))).toEqual({ origin: W, learned: true });
    c.observe(`${W}/wiki/Pi`, 200, pg(3n, 0x1111n, 3n));
    c.observe(`${W}/wiki/Cat`, 200, pg(4n, 0x2222n, 4n));
    c.observe(`${W}/wiki/Ram`, 200, pg(5n, 0x4444n, 5n));
    // The first other spelling met is a check, the second a check too, the third is taken away.
    expect(c.rewrite(`${W}/wiki/PI`)).toBeUndefined();
    expect(c.rewrite(`${W}/wiki/CAT`)).toBeUndefined();
    expect(c.rewrite(`${W}/wiki/RAM`)).toBe(`${W}/wiki/Ram`);
    c.observe(`${W}/wiki/Bird`, 200, pg(6n, 0x8888n, 6n));
    expect(c.refuses(`${W}/wiki/BIRD`)).toBe(false); // the 4th: a check at dispatch
    c.observe(`${W}/wiki/Moon`, 200, pg(7n, 0x9999n, 7n));
    expect(c.refuses(`${W}/wiki/MOON`)).toBe(true); // the 5th, refused at dispatch (a row: queued again by the engine)
    expect(c.takeOwed()).toEqual([]);
    // The check /wiki/PI is another article: the lesson falls, and /wiki/RAM is owed to the crawl.
    expect(c.observe(`${W}/wiki/PI`, 200, pg(8n, 0xeeeen << 20n, 8n))).toEqual({ origin: W, learned: false });
    expect(c.learned()).toEqual([]);
    expect(c.takeOwed()).toEqual([`${W}/wiki/RAM`]);
    expect(c.takeOwed()).toEqual([]);
    expect(c.rewrite(`${W}/wiki/RAM`)).toBeUndefined();
    expect(c.refuses(`${W}/wiki/MOON`)).toBe(false);
    // A 404 at a check unlearns the same way.
    const d = new PathCase({ minEvidence: 1 });
    d.observe(`${O}/A`, 200, pg(1n, 1n));
    d.observe(`${O}/a`, 200, pg(1n, 1n));
    d.observe(`${O}/B`, 200, pg(2n, 2n));
    expect(d.rewrite(`${O}/b`)).toBeUndefined(); // the 1st: a check
    expect(d.observe(`${O}/b`, 404)).toEqual({ origin: O, learned: false });
  });

  it('keeps its lessons through export / import, and checks the records', () => {
    const c = new PathCase({ minEvidence: 1 });
    c.observe(`${O}/A`, 200, pg(1n, 1n));
    c.observe(`${O}/a`, 200, pg(1n, 1n));
    c.observe('http://b.test/A', 200, pg(1n, 1n));
    c.observe('http://b.test/a', 404, pg(undefined, undefined));
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
    c.observe(`${O}/A`, 200, pg(1n, 1n));
    c.observe(`${O}/a`, 200, pg(1n, 1n));
    pastEarlyChecks(c, caseSpellings);
    for (let i = 0; i < 100; i++) {
      c.observe(`${O}/s${i}`, 200, pg(BigInt(i + 10), 0n));
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
        c.observe(`${O}/Z`, 200, pg(1n, 1n));
        c.observe(`${O}/z`, 200, pg(1n, 1n));
        const used = new Set<string>();
        for (const [p, serve] of events) {
          const url = `${O}/${p}?K=v`;
          used.add(url);
          if (serve) c.observe(url, 200, pg(BigInt(p.toLowerCase().length), 0n));
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
    expect(c.observe(`${D}/guide/`, 200, pg(1n, 0xf0n))).toBeUndefined();
    expect(c.observe(`${D}/guide/index.html`, 200, pg(1n, 0xf0n))).toBeUndefined(); // one directory: not yet
    c.observe(`${D}/api/index.html`, 200, pg(2n, 0x0fn));
    expect(c.observe(`${D}/api/`, 200, pg(2n, 0x0fn))).toEqual({ origin: D, learned: true });
    pastEarlyChecks(c, (i) => [`${D}/warm${i}/`, `${D}/warm${i}/index.html`]);
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
    missing.observe(`${D}/`, 200, pg(1n, 1n));
    missing.observe(`${D}/index.html`, 404, pg(undefined, undefined));
    missing.observe(`${D}/a/`, 200, pg(2n, 2n));
    expect(missing.observe(`${D}/a/index.html`, 200, pg(2n, 2n))).toBeUndefined();
    expect(missing.export()).toEqual([[D, false]]);
    const other = new PathCase({ fold: 'index', minEvidence: 1 });
    other.observe(`${D}/blog/`, 200, pg(1n, 0xffn));
    expect(other.observe(`${D}/blog/index.html`, 200, pg(2n, 0xff00n))).toBeUndefined();
    expect(other.learned()).toEqual([]);
    const c = new PathCase({ fold: 'index', minEvidence: 1 });
    c.observe(`${D}/a/`, 200, pg(1n, 1n));
    expect(c.observe(`${D}/a/index.php`, 200, pg(1n, 1n))).toEqual({ origin: D, learned: true });
    pastEarlyChecks(c, (i) => [`${D}/warm${i}/`, `${D}/warm${i}/index.html`]);
    expect(c.refuted(`${D}/b/index.php`, `${D}/c/`)).toBeUndefined(); // not two spellings of one path
    c.rewrite(`${D}/b/`);
    expect(c.rewrite(`${D}/b/index.php`)).toBe(`${D}/b/`);
    expect(c.refuted(`${D}/b/index.php`, `${D}/b/`)).toEqual({ origin: D, learned: false });
    expect(c.rewrite(`${D}/a/`)).toBeUndefined();
  });

  it('takes a spelling naming the other one canonical as evidence (a static site generator), one naming a third URL not', () => {
    const c = new PathCase({ fold: 'index' });
    c.observe(`${D}/guide/`, 200, pg(1n, 0xf0n, 1n, `${D}/guide/`));
    expect(c.observe(`${D}/guide/index.html`, 200, pg(1n, 0xf0n, 1n, `${D}/guide/`))).toBeUndefined();
    c.observe(`${D}/old/`, 200, pg(2n, 0x0fn, 2n, `${D}/new/`));
    expect(c.observe(`${D}/old/index.html`, 200, pg(2n, 0x0fn, 2n, `${D}/new/`))).toBeUndefined(); // a third URL: no evidence
    c.observe(`${D}/api/index.html`, 200, pg(3n, 0x3n, 3n, `${D}/api/`));
    expect(c.observe(`${D}/api/`, 200, pg(3n, 0x3n, 3n))).toEqual({ origin: D, learned: true });
  });

  it('a case fold never folds index files and an index fold never folds letter case', () => {
    const cs = new PathCase({ minEvidence: 1 });
    cs.observe(`${D}/a/`, 200, pg(1n, 1n));
    expect(cs.observe(`${D}/a/index.html`, 200, pg(1n, 1n))).toBeUndefined();
    const ix = new PathCase({ fold: 'index', minEvidence: 1 });
    ix.observe(`${D}/A/`, 200, pg(1n, 1n));
    expect(ix.observe(`${D}/a/`, 200, pg(1n, 1n))).toBeUndefined();
    expect(() => new PathCase({ fold: 'slash' as 'case' })).toThrow(/fold/);
  });
});
