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
  it('replaces the last path segment, keeping its extension, a trailing slash and the query', () => {
    const url = soft404ProbeUrl(`${O}/docs/3.1/config.html`, 7n)!;
    expect(url.startsWith(`${O}/docs/3.1/${SOFT404_PROBE_MARK}`)).toBe(true);
    expect(url.endsWith('.html')).toBe(true);
    expect(url.slice(`${O}/docs/3.1/${SOFT404_PROBE_MARK}`.length, -'.html'.length)).toMatch(TOKEN);
    expect(soft404ProbeUrl(`${O}/post/hello/feed/`, 7n)).toMatch(new RegExp(`^${O}/post/hello/${SOFT404_PROBE_MARK}[0-9a-z]{14}/$`));
    expect(soft404ProbeUrl(`${O}/`, 7n)).toMatch(new RegExp(`^${O}/${SOFT404_PROBE_MARK}[0-9a-z]{14}$`));
    expect(soft404ProbeUrl(`${O}/a/b?lang=en`, 7n)).toMatch(new RegExp(`^${O}/a/${SOFT404_PROBE_MARK}[0-9a-z]{14}\\?lang=en$`));
    // A dot that is no extension (a version) is part of the name replaced.
    expect(soft404ProbeUrl(`${O}/release/v1.2.3456789`, 7n)).toMatch(new RegExp(`^${O}/release/${SOFT404_PROBE_MARK}[0-9a-z]{14}$`));
    // The fragment is no part of what is asked.
    expect(soft404ProbeUrl(`${O}/a/b#top`, 7n)).toBe(soft404ProbeUrl(`${O}/a/b`, 7n));
  });

  it('replaces the last query value with a digit: a number by nine digits, a worded one by the mark and a token', () => {
    expect(soft404ProbeUrl(`${O}/item.php?id=17`, 7n)).toMatch(new RegExp(`^${O}/item\\.php\\?id=[1-9]\\d{8}$`));
    expect(soft404ProbeUrl(`${O}/viewtopic.php?t=5&start=20&view=print`, 7n)).toMatch(new RegExp(`^${O}/viewtopic\\.php\\?t=5&start=[1-9]\\d{8}&view=print$`));
    expect(soft404ProbeUrl(`${O}/p?slug=post-2&x=y`, 7n)).toMatch(new RegExp(`^${O}/p\\?slug=${SOFT404_PROBE_MARK}[0-9a-z]{14}&x=y$`));
  });

  it('is the same for the same URL and body (a replay asks the same), another for another body', () => {
    expect(soft404ProbeUrl(`${O}/a/b`, 7n)).toBe(soft404ProbeUrl(`${O}/a/b`, 7n));
    expect(soft404ProbeUrl(`${O}/a/b`, 7n)).not.toBe(soft404ProbeUrl(`${O}/a/b`, 8n));
    expect(soft404ProbeUrl(`${O}/a/b`, 7n)).not.toBe(soft404ProbeUrl(`${O}/a/c`, 7n));
  });

  it('answers undefined without an origin and refuses bad arguments', () => {
    expect(soft404ProbeUrl('not a url', 1n)).toBeUndefined();
    expect(() => soft404ProbeUrl(5 as unknown as string, 1n)).toThrow(InvalidArgumentError);
    expect(() => soft404ProbeUrl(`${O}/`, 1 as unknown as bigint)).toThrow(InvalidArgumentError);
  });

  it('keeps the origin, leaves the URL it was made from, and changes one place only (fast-check)', () => {
    const segment = fc.stringMatching(/^[a-z0-9._-]{1,12}$/);
    const pair = fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), fc.stringMatching(/^[a-z0-9-]{0,8}$/)).map(([k, v]) => `${k}=${v}`);
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 5 }), fc.boolean(), fc.array(pair, { maxLength: 4 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (segments, slash, pairs, fp) => {
        const url = `${O}/${segments.join('/')}${slash && segments.length > 0 ? '/' : ''}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`;
        const probe = soft404ProbeUrl(url, fp)!;
        expect(probe.startsWith(`${O}/`)).toBe(true);
        expect(probe).not.toBe(url);
        // Made up in the query or in the path, the other part as it was.
        const q = url.indexOf('?');
        const pq = probe.indexOf('?');
        if (pq >= 0 && q >= 0 && probe.slice(0, pq) === url.slice(0, q)) expect(probe.slice(pq + 1).split('&')).toHaveLength(pairs.length);
        else expect(q < 0 ? pq : probe.slice(pq)).toBe(q < 0 ? -1 : url.slice(q));
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
    expect(probes[0]!.url).toMatch(new RegExp(`^${O}/docs/5\\.0/${SOFT404_PROBE_MARK}[0-9a-z]{14}\\.html$`));
    expect(probes[0]!.shape).toBe(`${O}/docs/5.0/${SOFT404_PROBE_MARK}*.html`);
    expect(d.takeProbes()).toEqual([]);
    expect(d.isProbing('h', 9n)).toBe(true);
    expect(d.isTemplate('h', 9n)).toBe(false);
  });

  it('a made-up URL not found: the body is a page\'s, never a template', () => {
    const d = new SoftDetector({ probe: true });
    for (let v = 1; v <= 5; v++) see(d, 9n, `/docs/${v}.0/config.html`);
    const [probe] = d.takeProbes();
    expect(d.settleProbe(probe!, { status: 404 })).toBe(1);
    expect(d.isPage('h', 9n)).toBe(true);
    for (let v = 6; v < 40; v++) expect(see(d, 9n, `/docs/${v}.0/config.html`)).toBe(false);
    expect(d.takeProbes()).toEqual([]);
    // 410 says the same; so does another body served for it.
    for (const reply of [{ status: 410 }, { status: 200, fp: 77n }]) {
      const e = new SoftDetector({ probe: true });
      for (let v = 1; v <= 5; v++) e.observe('h', 9n, keyOf(`${O}/d/${v}`), 0, { url: `${O}/d/${v}` });
      expect(e.settleProbe(e.takeProbes()[0]!, reply)).toBe(1);
      expect(e.observe('h', 9n, keyOf(`${O}/d/6`), 0, { url: `${O}/d/6` })).toBe(false);
    }
  });

  it('a made-up URL served the same body, or a reply that says nothing: a template, as without a probe', () => {
    for (const reply of [{ status: 200, fp: 9n }, { status: 302 }, { status: 403 }, { status: 200 }, { status: 0 }]) {
      const d = new SoftDetector({ probe: true });
      for (let i = 1; i <= 5; i++) see(d, 9n, `/missing/${i}`);
      expect(d.settleProbe(d.takeProbes()[0]!, reply), JSON.stringify(reply, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).toBe(0);
      expect(d.isTemplate('h', 9n)).toBe(true);
      expect(see(d, 9n, '/missing/6')).toBe(true);
      expect(d.isProbing('h', 9n)).toBe(false);
    }
  });

  it('unanswered after probeWait more URLs, a template; a late "not found" withdraws it', () => {
    const d = new SoftDetector({ probe: true, probeWait: 3 });
    const verdicts = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => see(d, 9n, `/x/${i}`));
    // Five reach the threshold, three more wait, the ninth ends the wait; the same URL again counts once.
    expect(verdicts).toEqual([false, false, false, false, false, false, false, true, true]);
    const e = new SoftDetector({ probe: true, probeWait: 3 });
    for (const i of [1, 2, 3, 4, 5, 6, 6, 6, 7]) see(e, 9n, `/x/${i}`);
    expect(e.isProbing('h', 9n)).toBe(true);
    expect(d.isTemplate('h', 9n)).toBe(true);
    expect(d.settleProbe(d.takeProbes()[0]!, { status: 404 })).toBe(1);
    expect(d.isTemplate('h', 9n)).toBe(false);
    expect(see(d, 9n, '/x/10')).toBe(false);
  });

  it('one probe per shape: a second body of the same directory waits on it, a later one is answered without asking', () => {
    const d = new SoftDetector({ probe: true });
    for (let v = 1; v <= 5; v++) see(d, 1n, `/docs/stable/a${v}.html`);
    for (let v = 1; v <= 5; v++) see(d, 2n, `/docs/stable/b${v}.html`);
    const probes = d.takeProbes();
    expect(probes).toHaveLength(1);
    expect(d.isProbing('h', 1n) && d.isProbing('h', 2n)).toBe(true);
    expect(d.settleProbe(probes[0]!, { status: 404 })).toBe(2);
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
    for (let i = 1; i <= 5; i++) see(e, 6n, `/any/copy${i}`);
    expect(e.takeProbes()).toEqual([]);
    expect([e.isTemplate('h', 5n), e.isPage('h', 6n)]).toEqual([true, true]);
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
    expect(d.settleProbe(d.takeProbes()[0]!, { status: 200, fp: 9n })).toBe(0);
    expect(d.isTemplate('h', 9n)).toBe(false);
  });

  it('bounds the probes not taken and the fingerprints waiting', () => {
    const d = new SoftDetector({ probe: true, threshold: 2, maxFingerprintsPerHost: 4 });
    for (let f = 1; f <= MAX_PENDING_PROBES + 50; f++) {
      d.observe(`h${f % 7}`, BigInt(f), keyOf(`${O}/a${f}/1`), 0, { url: `${O}/a${f}/1` });
      d.observe(`h${f % 7}`, BigInt(f), keyOf(`${O}/a${f}/2`), 0, { url: `${O}/a${f}/2` });
    }
    const probes: SoftProbe[] = d.takeProbes();
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
    // An unknown host's probe is no error: nothing waits on it.
    expect(new SoftDetector({ probe: true }).settleProbe(probe!, { status: 404 })).toBe(0);
  });
});
