/**
 * SlashRules: a section's trailing-slash redirects, learned from three of them and undone by a
 * page served where the rule would move it (src/dedup/slashes.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SlashRules, slashRecordProblem } from '../../src/dedup/index.js';

const O = 'http://site.test';

/** Three URLs of /blog/ answered with a 301 to themselves with a slash. */
function adding(n = 3, rules = new SlashRules()): SlashRules {
  for (let i = 0; i < n; i++) rules.observe(`${O}/blog/p${i}`, 301, `${O}/blog/p${i}/`);
  return rules;
}

describe('SlashRules', () => {
  it('learns "add" after three permanent redirects, then adds the slash to dotless paths of that section only', () => {
    const r = adding(2);
    expect(r.rewrite(`${O}/blog/x`)).toBeUndefined();
    expect(r.observe(`${O}/blog/p2?a=1`, 308, `${O}/blog/p2/?a=1`)).toEqual({ section: `${O}/blog/`, rule: 'add', learned: true });
    expect(r.learned()).toEqual([{ section: `${O}/blog/`, rule: 'add' }]);
    expect(r.rewrite(`${O}/blog/x`)).toBe(`${O}/blog/x/`);
    expect(r.rewrite(`${O}/blog/2024/x?page=2`)).toBe(`${O}/blog/2024/x/?page=2`);
    // Already slashed, a file, the section's own root, another section or origin: untouched.
    expect(r.rewrite(`${O}/blog/x/`)).toBeUndefined();
    expect(r.rewrite(`${O}/blog/logo.png`)).toBeUndefined();
    expect(r.rewrite(`${O}/blog/v1.2`)).toBeUndefined();
    expect(r.rewrite(`${O}/blog/`)).toBeUndefined();
    expect(r.rewrite(`${O}/docs/x`)).toBeUndefined();
    expect(r.rewrite('https://site.test/blog/x')).toBeUndefined();
  });

  it('learns "strip" the same way, never stripping the origin root', () => {
    const r = new SlashRules();
    for (let i = 0; i < 3; i++) r.observe(`${O}/posts/p${i}/`, 301, `${O}/posts/p${i}`);
    expect(r.learned()).toEqual([{ section: `${O}/posts/`, rule: 'strip' }]);
    expect(r.rewrite(`${O}/posts/x/`)).toBe(`${O}/posts/x`);
    // /posts/ itself is in the root section, which learned nothing.
    expect(r.rewrite(`${O}/posts/`)).toBeUndefined();
    expect(r.rewrite(`${O}/posts/x`)).toBeUndefined();
    // The root section: /about/ → /about.
    const root = new SlashRules();
    for (const p of ['a', 'b', 'c']) root.observe(`${O}/${p}/`, 301, `${O}/${p}`);
    expect(root.rewrite(`${O}/d/`)).toBe(`${O}/d`);
    expect(root.rewrite(`${O}/`)).toBeUndefined();
  });

  it('counts only permanent redirects that move just the slash, each URL once', () => {
    const r = new SlashRules();
    for (let i = 0; i < 3; i++) r.observe(`${O}/blog/t${i}`, 302, `${O}/blog/t${i}/`); // temporary
    r.observe(`${O}/blog/a`, 301, `${O}/blog/b/`); // another path
    r.observe(`${O}/blog/c`, 301, `https://site.test/blog/c/`); // another origin
    r.observe(`${O}/blog/d?x=1`, 301, `${O}/blog/d/`); // the query dropped
    r.observe(`${O}/blog/e.html`, 301, `${O}/blog/e.html/`); // a file
    for (let i = 0; i < 3; i++) r.observe(`${O}/blog/same`, 301, `${O}/blog/same/`);
    expect(r.learned()).toEqual([]);
  });

  it('a page served where the rule would move it bans the rule — before the redirects or after (unlearned)', () => {
    const before = new SlashRules();
    before.observe(`${O}/blog/feed`, 200, undefined);
    adding(5, before);
    expect(before.learned()).toEqual([]);
    const after = adding();
    // A slashed page or a file served: no contradiction of "add".
    expect(after.observe(`${O}/blog/x/`, 200, undefined)).toBeUndefined();
    expect(after.observe(`${O}/blog/style.css`, 200, undefined)).toBeUndefined();
    expect(after.observe(`${O}/blog/feed`, 200, undefined)).toEqual({ section: `${O}/blog/`, rule: 'add', learned: false });
    expect(after.rewrite(`${O}/blog/x`)).toBeUndefined();
    adding(6, after);
    expect(after.learned()).toEqual([]);
    // A redirect the other way unlearns too.
    const flip = adding();
    flip.observe(`${O}/blog/z/`, 301, `${O}/blog/z`);
    expect(flip.learned()).toEqual([]);
  });

  it('duplicateOf names the page a URL would redirect to, once that page was served this run', () => {
    const r = adding();
    expect(r.duplicateOf(`${O}/blog/x`)).toBeUndefined();
    r.observe(`${O}/blog/x/`, 200, undefined);
    expect(r.duplicateOf(`${O}/blog/x`)).toBe(`${O}/blog/x/`);
    expect(r.duplicateOf(`${O}/blog/x/`)).toBeUndefined();
    // Remembered pages are bounded: the oldest is forgotten.
    const small = adding(3, new SlashRules({ maxServed: 2 }));
    for (const p of ['a', 'b', 'c']) small.observe(`${O}/blog/${p}/`, 200, undefined);
    expect(['a', 'b', 'c'].map((p) => small.duplicateOf(`${O}/blog/${p}`))).toEqual([undefined, `${O}/blog/b/`, `${O}/blog/c/`]);
  });

  it('refuted: a link taken by the rule that missed bans it', () => {
    const r = adding();
    expect(r.refuted(`${O}/blog/x`, `${O}/blog/y/`)).toBeUndefined();
    expect(r.refuted(`${O}/blog/x`, `${O}/blog/x/`)).toEqual({ section: `${O}/blog/`, rule: 'add', learned: false });
    expect(r.rewrite(`${O}/blog/x`)).toBeUndefined();
    expect(r.export()).toEqual([[`${O}/blog/`, null, ['add']]]);
  });

  it('export and import carry learned and banned rules, and refuse a bad record', () => {
    const r = adding();
    r.observe(`${O}/other/x/`, 200, undefined); // bans "strip" in /other/
    const records = r.export();
    expect(records).toEqual([
      [`${O}/blog/`, 'add', []],
      [`${O}/other/`, null, ['strip']],
    ]);
    const back = new SlashRules();
    back.import(records);
    expect(back.rewrite(`${O}/blog/q`)).toBe(`${O}/blog/q/`);
    expect(back.export()).toEqual(records);
    // Learned and banned at once: banned.
    const both = new SlashRules();
    both.import([[`${O}/blog/`, 'add', ['add']]]);
    expect(both.learned()).toEqual([]);
    for (const bad of [null, [`${O}/blog/`, 'add'], ['ftp://x/', 'add', []], [`${O}/a/b/`, 'add', []], [`${O}/blog/`, 'sideways', []], [`${O}/blog/`, null, ['add', 'add', 'strip']], [`${O}/blog/`, null, 'add']]) {
      expect(slashRecordProblem(bad), JSON.stringify(bad)).toBeTypeOf('string');
      expect(() => new SlashRules().import([bad as never])).toThrow(/SlashRules.import/);
    }
  });

  it('stays bounded in sections, and refuses bad arguments and options', () => {
    const r = new SlashRules({ maxSections: 2 });
    for (const s of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) r.observe(`${O}/${s}/p${i}`, 301, `${O}/${s}/p${i}/`);
    expect(r.learned().map((l) => l.section)).toEqual([`${O}/a/`, `${O}/b/`]);
    expect(() => r.observe(1 as unknown as string, 301, undefined)).toThrow(/url must be a string/);
    expect(() => new SlashRules({ minEvidence: 0 })).toThrow(/minEvidence/);
  });

  it('rewrite only toggles the final slash of a path in a learned section, and a rewritten URL is left alone (fast-check)', () => {
    const r = adding();
    for (let i = 0; i < 3; i++) r.observe(`${O}/posts/p${i}/`, 301, `${O}/posts/p${i}`);
    const segment = fc.stringMatching(/^[a-z0-9.]{1,6}$/);
    fc.assert(
      fc.property(fc.constantFrom('blog', 'posts', 'docs'), fc.array(segment, { maxLength: 3 }), fc.boolean(), fc.option(fc.stringMatching(/^[a-z]=[0-9]$/), { nil: undefined }), (section, segs, slash, q) => {
        const url = `${O}/${[section, ...segs].join('/')}${slash ? '/' : ''}${q === undefined ? '' : `?${q}`}`;
        const out = r.rewrite(url);
        if (out === undefined) return;
        const strip = (u: string): string => u.replace(/\/(\?|$)/, '$1');
        expect(strip(out)).toBe(strip(url));
        expect(out).not.toBe(url);
        expect(r.rewrite(out)).toBeUndefined();
      }),
    );
  });
});
