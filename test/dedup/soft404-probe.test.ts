/**
 * The soft-404 probe (`SoftDetector`'s `probe` option, `soft404ProbeUrl`): before a body shared by
 * `threshold` URLs of a host is read as its not-found page, one made-up URL beside them asks the
 * server what it answers a URL that does not exist. A site's not-found page comes back; a page's
 * copies (versioned docs, a forge's file at every commit) do not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, MAX_PENDING_PROBES, SOFT404_PROBE_MARK, SoftDetector, type SoftProbe, canonicalize, soft404ProbeUrl, urlKey } from '../../src/index.js';

const O = 'http://docs.test';
const keyOf = (raw: string) => urlKey(canonicalize(raw)!).key;
/** Observes `path` serving `fp` on host 'h', naming nothing. */
const see = (d: SoftDetector, fp: bigint, path: string): boolean => d.observe('h', fp, keyOf(O + path), 0, { url: O + path });
const TOKEN = /^[0-9a-z]{14}$/;

describe('soft404ProbeUrl', () => {
  const W = `${SOFT404_PROBE_MARK}[0-9a-z]{14}`;
  it('alone, makes up the last path segment: a word by the mark and a token (its extension and a trailing slash kept), a number by ten digits', () => {
    expect(soft404ProbeUrl(`${O}/docs/3.1/config.html`, 7n)).toMatch(new RegExp(`^${O}/docs/3\\.1/${W}\\.html$`));
    expect(soft404ProbeUrl(`${O}/post/hello/feed/`, 7n)).toMatch(new RegExp(`^${O}/post/hello/${W}/$`));
    expect(soft404ProbeUrl(`${O}/`, 7n)).toMatch(new RegExp(`^${O}/${W}$`));
    expect(soft404ProbeUrl(`${O}/a/b?lang=en`, 7n)).toMatch(new RegExp(`^${O}/a/${W}\\?lang=en$`));
    // A number: a route that takes only digits would refuse a word (a framework 404, no answer).
    expect(soft404ProbeUrl(`${O}/product/123`, 7n)).toMatch(new RegExp(`^${O}/product/2\\d{9}$`));
    expect(soft404ProbeUrl(`${O}/p/17.html`, 7n)).toMatch(new RegExp(`^${O}/p/2\\d{9}\\.html$`));
    // A dot that is no extension (a version) is part of the name replaced.
    expect(soft404ProbeUrl(`${O}/release/v1.2.3`, 7n)).toMatch(new RegExp(`^${O}/release/${W}$`));
    // No path is the root's; the fragment is no part of what is asked.
    expect(soft404ProbeUrl('http://docs.test', 7n)).toMatch(new RegExp(`^${O}/${W}$`));
    expect(soft404ProbeUrl(`${O}/a/b#top`, 7n)).toBe(soft404ProbeUrl(`${O}/a/b`, 7n));
  });

  it('alone, makes up the last query value with a digit before the path', () => {
    expect(soft404ProbeUrl(`${O}/item.php?id=17`, 7n)).toMatch(new RegExp(`^${O}/item\\.php\\?id=2\\d{9}$`));
    expect(soft404ProbeUrl(`${O}/p?slug=post-2&x=y`, 7n)).toMatch(new RegExp(`^${O}/p\\?slug=${W}&x=y$`));
  });

  it('with another URL of the same body, makes up the part where the two differ, wherever it is', () => {
    expect(soft404ProbeUrl(`${O}/docs/3.1/config.html`, 7n, `${O}/docs/2.8/config.html`)).toMatch(new RegExp(`^${O}/docs/${W}/config\\.html$`));
    expect(soft404ProbeUrl(`${O}/user/17/profile`, 7n, `${O}/user/18/profile`)).toMatch(new RegExp(`^${O}/user/2\\d{9}/profile$`));
    const sha = 'a'.repeat(40);
    expect(soft404ProbeUrl(`${O}/r/raw/commit/${sha}/src/f0.js`, 7n, `${O}/r/raw/commit/${'b'.repeat(40)}/src/f0.js`)).toMatch(new RegExp(`^${O}/r/raw/commit/${W}/src/f0\\.js$`));
    // A commit's hash by a made-up hash of its length (a forge that checks the form would refuse a word).
    const c1 = '3f2a9c01b7e4d5a6c8b9e0f1a2b3c4d5e6f7a8b9';
    const probe = soft404ProbeUrl(`${O}/r/src/commit/${c1}/README.md`, 7n, `${O}/r/src/commit/${'0'.repeat(39)}a/README.md`)!;
    expect(probe).toMatch(/^http:\/\/docs\.test\/r\/src\/commit\/[0-9a-f]{40}\/README\.md$/);
    expect(probe).not.toContain(c1);
    // The id, not the paging beside it.
    expect(soft404ProbeUrl(`${O}/viewtopic.php?t=5&start=0`, 7n, `${O}/viewtopic.php?t=9&start=0`)).toMatch(new RegExp(`^${O}/viewtopic\\.php\\?t=2\\d{9}&start=0$`));
    // Not alike (another length, other keys, another origin): as alone.
    expect(soft404ProbeUrl(`${O}/gone/a/b`, 7n, `${O}/x`)).toMatch(new RegExp(`^${O}/gone/a/${W}$`));
    expect(soft404ProbeUrl(`${O}/p?a=1`, 7n, `${O}/p?b=1`)).toMatch(new RegExp(`^${O}/p\\?a=2\\d{9}$`));
    expect(soft404ProbeUrl(`${O}/a/1`, 7n, 'http://other.test/a/2')).toMatch(new RegExp(`^${O}/a/2\\d{9}$`));
  });

  it('is the same for the same URL, body and salt (a replay asks the same), another for another of them', () => {
    expect(soft404ProbeUrl(`${O}/a/b`, 7n)).toBe(soft404ProbeUrl(`${O}/a/b`, 7n));
    expect(soft404ProbeUrl(`${O}/a/b`, 7n)).not.toBe(soft404ProbeUrl(`${O}/a/b`, 8n));
    expect(soft404ProbeUrl(`${O}/a/b`, 7n)).not.toBe(soft404ProbeUrl(`${O}/a/c`, 7n));
    expect(soft404ProbeUrl(`${O}/a/b`, 7n, undefined, 1)).not.toBe(soft404ProbeUrl(`${O}/a/b`, 7n, undefined, 2));
    expect(soft404ProbeUrl(`${O}/a/1`, 7n, undefined, 1)).not.toBe(soft404ProbeUrl(`${O}/a/1`, 7n, undefined, 2));
  });

  it('answers undefined without an origin and refuses bad arguments', () => {
    expect(soft404ProbeUrl('not a url', 1n)).toBeUndefined();
    expect(() => soft404ProbeUrl(5 as unknown as string, 1n)).toThrow(InvalidArgumentError);
    expect(() => soft404ProbeUrl(`${O}/`, 1 as unknown as bigint)).toThrow(InvalidArgumentError);
    expect(() => soft404ProbeUrl(`${O}/`, 1n, 5 as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => soft404ProbeUrl(`${O}/`, 1n, undefined, Number.NaN)).toThrow(InvalidArgumentError);
  });

  it('keeps the origin, leaves the URL it was made from, and makes up one part only (fast-check)', () => {
    // Empty segments (`//`), bare keys (`?flag`), numbers, hex and words.
    const segment = fc.oneof(fc.stringMatching(/^[a-z0-9._-]{1,12}$/), fc.constant(''), fc.stringMatching(/^\d{1,6}$/), fc.stringMatching(/^[0-9a-f]{7,12}$/));
    const pair = fc.oneof(fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), fc.stringMatching(/^[a-z0-9-]{0,8}$/)).map(([k, v]) => `${k}=${v}`), fc.stringMatching(/^[a-z]{1,6}$/));
    const urlOf = (segments: string[], slash: boolean, pairs: string[]): string => `${O}/${segments.join('/')}${slash && segments.length > 0 ? '/' : ''}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`;
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 5 }), fc.boolean(), fc.array(pair, { maxLength: 4 }), fc.option(fc.array(segment, { maxLength: 5 })), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (segments, slash, pairs, others, fp) => {
        const url = urlOf(segments, slash, pairs);
        const probe = soft404ProbeUrl(`${url}#frag`, fp, others === null ? undefined : urlOf(others, slash, pairs))!;
        expect(probe.startsWith(`${O}/`)).toBe(true);
        expect(probe).not.toBe(url);
        // As many segments and pairs, all as they were but one.
        const partsOf = (u: string): string[] => {
          const q = u.indexOf('?');
          return [...(q < 0 ? u : u.slice(0, q)).slice(O.length).split('/'), ...(q < 0 ? [] : u.slice(q + 1).split('&'))];
        };
        const a = partsOf(url);
        const b = partsOf(probe);
        expect(b).toHaveLength(a.length);
        expect(a.filter((x, i) => x !== b[i])).toHaveLength(1);
      }),
    );
  });
});

describe('SoftDetector with probes', () => {
  it('asks one probe at the threshold and reads the body as pages until its answer', () => {
    const d = new SoftDetector({ probe: true });
    const verdicts = [1, 2, 3, 4, 5, 6, 7].map((v) => see(d, 9n, `/docs/${v}.0/config.html`));
    expect(verdicts).toEqual([false, false, false, false, false, false, false]);
    const probes = d.takeProbes();
    expect(probes).toHaveLength(1);
    expect(probes[0]!.host).toBe('h');
    // Made up where the copies differ: the version (the second URL seen is the other).
    expect(probes[0]!.url).toMatch(new RegExp(`^${O}/docs/${SOFT404_PROBE_MARK}[0-9a-z]{14}/config\\.html$`));
    expect(probes[0]!.shape).toBe(`${O}/docs/${SOFT404_PROBE_MARK}*/config.html`);
    expect(d.takeProbes()).toEqual([]);
    expect(d.isProbing('h', 9n)).toBe(true);
    expect(d.isTemplate('h', 9n)).toBe(false);
  });

  it('a made-up URL not found: the body is a page\'s, never a template', () => {
    const d = new SoftDetector({ probe: true });
    for (let v = 1; v <= 5; v++) see(d, 9n, `/docs/${v}.0/config.html`);
    const [probe] = d.takeProbes();
    expect(d.settleProbe(probe!, { status: 404 })).toBe('page');
    expect(d.isPage('h', 9n)).toBe(true);
    for (let v = 6; v < 40; v++) expect(see(d, 9n, `/docs/${v}.0/config.html`)).toBe(false);
    expect(d.takeProbes()).toEqual([]);
    // 410 says the same; so does another body served for it.
    for (const reply of [{ status: 410 }, { status: 200, fp: 77n }]) {
      const e = new SoftDetector({ probe: true });
      for (let v = 1; v <= 5; v++) e.observe('h', 9n, keyOf(`${O}/d/${v}`), 0, { url: `${O}/d/${v}` });
      expect(e.settleProbe(e.takeProbes()[0]!, reply)).toBe('page');
      expect(e.observe('h', 9n, keyOf(`${O}/d/6`), 0, { url: `${O}/d/6` })).toBe(false);
    }
  });

  it('a made-up URL served the same body, or a reply that says nothing: a template, as without a probe', () => {
    for (const [reply, verdict] of [[{ status: 200, fp: 9n }, 'template'], [{ status: 302 }, 'unknown'], [{ status: 403 }, 'unknown'], [{ status: 200 }, 'unknown'], [{ status: 0 }, 'unknown']] as const) {
      const d = new SoftDetector({ probe: true });
      for (let i = 1; i <= 5; i++) see(d, 9n, `/missing/${i}`);
      expect(d.settleProbe(d.takeProbes()[0]!, reply), `${reply.status}`).toBe(verdict);
      expect(d.isTemplate('h', 9n)).toBe(true);
      expect(see(d, 9n, '/missing/6')).toBe(true);
      expect(d.isProbing('h', 9n)).toBe(false);
    }
  });

  it('unanswered after probeWait more URLs, a template; a late "not found" withdraws it', () => {
    const d = new SoftDetector({ probe: true, probeWait: 3 });
    const verdicts = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => see(d, 9n, `/x/${i}`));
    // Five reach the threshold, three more wait, the ninth ends the wait; the same URL again counts once.
    expect(verdicts).toEqual([false, false, false, false, false, false, false, false, true, true]);
    const e = new SoftDetector({ probe: true, probeWait: 3 });
    for (const i of [1, 2, 3, 4, 5, 6, 6, 6, 7, 8, 8]) see(e, 9n, `/x/${i}`);
    expect(e.isProbing('h', 9n)).toBe(true);
    expect(d.isTemplate('h', 9n)).toBe(true);
    expect(d.settleProbe(d.takeProbes()[0]!, { status: 404 })).toBe('page');
    expect(d.isTemplate('h', 9n)).toBe(false);
    expect(see(d, 9n, '/x/11')).toBe(false);
  });

  it('a probe never answered: once no body waits on it, the next of its shape asks anew, and that answer withdraws the ones confirmed meanwhile', () => {
    const d = new SoftDetector({ probe: true, probeWait: 2 });
    for (let i = 1; i <= 8; i++) see(d, 1n, `/x/a${i}`);
    expect(d.takeProbes()).toHaveLength(1);
    expect(d.isTemplate('h', 1n)).toBe(true);
    for (let i = 1; i <= 5; i++) see(d, 2n, `/x/b${i}`);
    const [again] = d.takeProbes();
    expect(again!.url).toMatch(new RegExp(`^${O}/x/${SOFT404_PROBE_MARK}[0-9a-z]{14}$`));
    expect(d.settleProbe(again!, { status: 404 })).toBe('page');
    expect([d.isPage('h', 1n), d.isPage('h', 2n)]).toEqual([true, true]);
  });

  it('one probe per shape: a second body of the same shape waits on it, a later one is answered without asking', () => {
    const d = new SoftDetector({ probe: true });
    for (let v = 1; v <= 5; v++) see(d, 1n, `/docs/stable/a${v}.html`);
    for (let v = 1; v <= 5; v++) see(d, 2n, `/docs/stable/b${v}.html`);
    // Both vary in the last segment's name: one question, /docs/stable/meguri-soft404-probe-*.html.
    const probes = d.takeProbes();
    expect(probes).toHaveLength(1);
    expect(d.isProbing('h', 1n) && d.isProbing('h', 2n)).toBe(true);
    expect(d.settleProbe(probes[0]!, { status: 404 })).toBe('page');
    for (let v = 1; v <= 5; v++) see(d, 3n, `/docs/stable/c${v}.html`);
    expect(d.takeProbes()).toEqual([]);
    expect(d.isPage('h', 3n)).toBe(true);
    // Another directory is another question.
    for (let v = 1; v <= 5; v++) see(d, 4n, `/docs/latest/d${v}.html`);
    expect(d.takeProbes()).toHaveLength(1);
    // A catch-all's answer holds too: its body is the template, any other a page's.
    const e = new SoftDetector({ probe: true });
    for (let i = 1; i <= 5; i++) see(e, 5n, `/any/${i}`);
    e.settleProbe(e.takeProbes()[0]!, { status: 200, fp: 5n });
    for (let i = 1; i <= 5; i++) see(e, 6n, `/any/${100 + i}`);
    expect(e.takeProbes()).toEqual([]);
    expect([e.isTemplate('h', 5n), e.isPage('h', 6n)]).toEqual([true, true]);
  });

  it('giveUp: the bodies waiting are templates, and nothing is kept for the shape (the next body asks anew)', () => {
    const d = new SoftDetector({ probe: true });
    for (let i = 1; i <= 5; i++) see(d, 9n, `/x/a${i}`);
    d.giveUp(d.takeProbes()[0]!);
    expect(d.isTemplate('h', 9n)).toBe(true);
    for (let i = 1; i <= 5; i++) see(d, 8n, `/x/b${i}`);
    const [next] = d.takeProbes();
    expect(next).toBeDefined();
    expect(d.settleProbe(next!, { status: 200, fp: 8n })).toBe('template');
    expect([d.isTemplate('h', 8n), d.isTemplate('h', 9n)]).toEqual([true, true]);
  });

  it('retract: the body awaiting a probe never asked is a candidate again; its next new URL asks anew, or finds its shape answered', () => {
    const d = new SoftDetector({ probe: true });
    for (let i = 1; i <= 5; i++) see(d, 9n, `/x/${i}`);
    const [p] = d.takeProbes();
    d.retract(p!);
    // A candidate one short of the threshold again (its keys cut there: no list grows).
    expect(d.isProbing('h', 9n)).toBe(false);
    expect(see(d, 9n, '/x/1')).toBe(false);
    expect(d.takeProbes()).toEqual([]);
    expect(see(d, 9n, '/x/6')).toBe(false);
    expect(d.takeProbes()).toHaveLength(1);
    const e = new SoftDetector({ probe: true });
    for (let i = 1; i <= 5; i++) see(e, 9n, `/x/${i}`);
    const [q] = e.takeProbes();
    e.retract(q!);
    expect(e.settleProbe(q!, { status: 404 })).toBe('page');
    expect(see(e, 9n, '/x/6')).toBe(false);
    expect(e.takeProbes()).toEqual([]);
    expect(e.isPage('h', 9n)).toBe(true);
  });

  it('without the option, or without the URL, a body is a template at the threshold as before', () => {
    const off = new SoftDetector();
    expect([1, 2, 3, 4, 5].map((i) => see(off, 9n, `/x/${i}`))).toEqual([false, false, false, false, true]);
    expect(off.takeProbes()).toEqual([]);
    const bare = new SoftDetector({ probe: true });
    expect([1, 2, 3, 4, 5].map((i) => bare.observe('h', 9n, keyOf(`${O}/x/${i}`)))).toEqual([false, false, false, false, true]);
    expect(bare.takeProbes()).toEqual([]);
  });

  it('a copy naming a canonical marks the body a page while it waits', () => {
    const d = new SoftDetector({ probe: true });
    for (let i = 1; i <= 5; i++) see(d, 9n, `/t/${i}`);
    d.observe('h', 9n, keyOf(`${O}/t/6`), 0, { url: `${O}/t/6`, canonical: `${O}/topic` });
    d.observe('h', 9n, keyOf(`${O}/t/7`), 0, { url: `${O}/t/7`, canonical: `${O}/topic` });
    expect([d.isProbing('h', 9n), d.isPage('h', 9n)]).toEqual([false, true]);
    // The answer, when it comes, changes nothing.
    expect(d.settleProbe(d.takeProbes()[0]!, { status: 200, fp: 9n })).toBe('template');
    expect(d.isTemplate('h', 9n)).toBe(false);
  });

  it('bounds the probes not taken and the fingerprints waiting', () => {
    const d = new SoftDetector({ probe: true, threshold: 2, maxFingerprintsPerHost: 4 });
    for (let f = 1; f <= MAX_PENDING_PROBES + 50; f++) {
      d.observe(`h${f % 7}`, BigInt(f), keyOf(`${O}/a${f}/1`), 0, { url: `${O}/a${f}/1` });
      d.observe(`h${f % 7}`, BigInt(f), keyOf(`${O}/a${f}/2`), 0, { url: `${O}/a${f}/2` });
    }
    const probes: readonly SoftProbe[] = d.takeProbes();
    expect(probes).toHaveLength(MAX_PENDING_PROBES);
    expect(probes.at(-1)!.url).toContain(`/a${MAX_PENDING_PROBES + 50}/`);
    for (let h = 0; h < 7; h++) expect(d.trackedFingerprints(`h${h}`)).toBeLessThanOrEqual(4 * 5);
  });

  it('refuses bad arguments', () => {
    const d = new SoftDetector({ probe: true });
    for (let i = 1; i <= 5; i++) see(d, 9n, `/x/${i}`);
    const [probe] = d.takeProbes();
    expect(() => d.settleProbe(null as unknown as SoftProbe, { status: 404 })).toThrow(InvalidArgumentError);
    expect(() => d.settleProbe({ ...probe!, host: {} as unknown as string }, { status: 404 })).toThrow(InvalidArgumentError);
    expect(() => d.settleProbe(probe!, { status: '404' } as unknown as { status: number })).toThrow(/reply/);
    expect(() => d.settleProbe(probe!, { status: 200, fp: 9 } as unknown as { status: number })).toThrow(InvalidArgumentError);
    expect(() => new SoftDetector({ probeWait: 0 })).toThrow(InvalidArgumentError);
    // An unknown host's probe is no error: nothing waits on it, and its answer is kept (a probe
    // asked before a restart answers the next body of its shape).
    const fresh = new SoftDetector({ probe: true });
    expect(fresh.settleProbe(probe!, { status: 404 })).toBe('page');
    for (let i = 10; i <= 14; i++) see(fresh, 8n, `/x/${i}`);
    expect([fresh.takeProbes(), fresh.isPage('h', 8n)]).toEqual([[], true]);
  });
});
