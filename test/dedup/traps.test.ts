import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/core/mix.js';
import {
  HostFlags,
  InvalidArgumentError,
  PATTERN_KIND_NAMES,
  PatternKind,
  TrapDetector,
  UrlStatus,
  type AdmitHost,
  admit,
  canonicalize,
  flagTrapSuspect,
  isTrapSuspect,
  urlKey,
} from '../../src/index.js';
import { sessionSplit } from '../../src/dedup/traps.js';

/** 2026-07-15T00:00Z in epoch hours: the campaign clock of every test here. */
const NOW = Date.UTC(2026, 6, 15) / 3_600_000;

/** A seeded generator (mulberry32), so every synthetic stream is reproducible. */
const rng = mulberry32;

function token(r: () => number, n = 26): string {
  const abc = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < n; i++) s += abc[Math.floor(r() * abc.length)];
  return s;
}

const keyOf = (canon: string) => urlKey(canon).key;

describe('TrapDetector.violation', () => {
  const d = new TrapDetector();
  it.each([
    // calendar: the horizon is 2027-07, the past limit 1996-07
    ['https://e.com/events/2026/08/', 'None'],
    ['https://e.com/events/2027/07/', 'None'],
    ['https://e.com/events/2027/08/', 'Calendar'],
    ['https://e.com/events/2052/07/31/', 'Calendar'],
    ['https://e.com/events/1996/07/', 'None'],
    ['https://e.com/events/1996/06/', 'Calendar'],
    ['https://e.com/events/1971/07/', 'Calendar'],
    // past what a walk could reach before its host is flagged (flagThreshold 20 + 5 years out): ids
    ['https://e.com/events/2052/08/', 'None'],
    ['https://e.com/events/2099/12/31/', 'None'],
    ['https://e.com/events/1971/06/', 'None'],
    ['https://e.com/events/1850/01/', 'None'],
    ['https://e.com/a/9101/10', 'None'],
    ['https://e.com/t/some-topic/1234/10', 'None'],
    // dates spelled as dates are read whatever the year (a walk back from ?date=1970-01-01 is one)
    ['https://e.com/cal?year=2053', 'Calendar'],
    ['https://e.com/cal?year=1970', 'Calendar'],
    ['https://e.com/cal?date=1969-12-01', 'Calendar'],
    ['https://e.com/cal?date=9101-10-01', 'Calendar'],
    ['https://e.com/events/month/1969-12/', 'Calendar'],
    ['https://e.com/day-1850-01-12.html', 'Calendar'],
    ['https://e.com/events/2031/13/', 'None'],
    ['https://e.com/events/month/2031-05/', 'Calendar'],
    ['https://e.com/day-2031-05-12.html', 'Calendar'],
    ['https://e.com/day-2031-05-32.html', 'None'],
    ['https://e.com/cal?date=2031-05-01', 'Calendar'],
    ['https://e.com/cal?when=2031/05', 'Calendar'],
    ['https://e.com/cal?year=2031', 'Calendar'],
    ['https://e.com/cal?year=2027&month=7', 'None'],
    ['https://e.com/cal?month=8&year=2027', 'Calendar'],
    ['https://e.com/cal?year=2027', 'None'],
    ['https://e.com/cal?year=1996', 'None'],
    ['https://e.com/cal?year=1995', 'Calendar'],
    ['https://e.com/cal?ym=203105', 'Calendar'],
    ['https://e.com/cal?date=20310512', 'Calendar'],
    // numbers that only look like dates
    ['https://e.com/item?id=20310512', 'None'],
    ['https://e.com/item/20310512', 'None'],
    ['https://e.com/thread/2100/3', 'None'],
    ['https://e.com/2019/05/some-post', 'None'],
    ['https://e.com/blog/2024-03-01-title', 'None'],
    ['https://e.com/sku/4521-77', 'None'],
    // faceted
    ['https://e.com/shop?a=1&b=2&c=3&d=4', 'None'],
    ['https://e.com/shop?a=1&b=2&c=3&d=4&e=5', 'Faceted'],
    ['https://e.com/shop?a=1&b=2&c=3&d=4&page=2&sort=price&q=shoes&lang=en', 'None'],
    ['https://e.com/shop?color=a&color=b&color=c&color=d&color=e', 'Faceted'],
    // session
    ['https://e.com/p?sessid=9f8e7d6c5b4a39281726', 'Session'],
    ['https://e.com/p?usersid=9f8e7d6c5b4a39281726', 'Session'],
    ['https://e.com/p?sessid=short', 'None'],
    ['https://e.com/p?sessid=aaaaaaaaaaaaaaaaaaaa1', 'None'],
    ['https://e.com/p;sid=9f8e7d6c5b4a39281726', 'Session'],
    ['https://e.com/(S(lit3py55t21z5v55vlm25s55))/page.aspx', 'Session'],
    ['https://e.com/session/9f8e7d6c5b4a39281726/page', 'Session'],
    ['https://github.com/a/b/commit/9f8e7d6c5b4a392817269f8e7d6c5b4a39281726', 'None'],
    ['https://e.com/p?token=9f8e7d6c5b4a39281726', 'None'],
    ['https://e.com/p?ref=thisisaverylongslugwithoutdigits', 'None'],
    // repeated: a segment (not all digits) three times anywhere in the path
    ['https://e.com/index.php/guide/api/guide/faq/guide/', 'Repeated'],
    ['https://e.com/a/a/a', 'Repeated'],
    ['https://e.com/docs/guide/api/guide/', 'None'],
    ['https://e.com/2024/01/01/01/post', 'None'],
    ['https://e.com/en/docs/en/intro', 'None'],
    ['https://e.com/a/b?x=/a/a/a', 'None'],
    // several at once: calendar is named first
    ['https://e.com/2031/05?sessid=9f8e7d6c5b4a39281726&a=1&b=2&c=3&d=4&e=5', 'Calendar'],
    ['https://e.com/p?sessid=9f8e7d6c5b4a39281726&a=1&b=2&c=3&d=4&e=5', 'Session'],
  ])('%s → %s', (url, kind) => {
    expect(PATTERN_KIND_NAMES[d.violation(url, NOW)]).toBe(kind);
  });

  it('reads a long path in one pass: a thousand distinct segments bear nothing, one repeated at the end is found', () => {
    const long = Array.from({ length: 1000 }, (_, i) => `s${i}`).join('/');
    expect(d.violation(`https://e.com/${long}`, NOW)).toBe(PatternKind.None);
    expect(d.violation(`https://e.com/${long}/x/s999/y/s999`, NOW)).toBe(PatternKind.Repeated);
  });

  it('moves the horizon with the clock it is given', () => {
    const url = 'https://e.com/events/2027/08/';
    expect(d.violation(url, NOW)).toBe(PatternKind.Calendar);
    expect(d.violation(url, Date.UTC(2026, 7, 1) / 3_600_000)).toBe(PatternKind.None);
    expect(new TrapDetector({ calendarHorizonMonths: 24 }).violation(url, NOW)).toBe(PatternKind.None);
    expect(new TrapDetector({ calendarPastYears: 100 }).violation('https://e.com/events/1950/01/', NOW)).toBe(PatternKind.None);
    // The dates read reach flagThreshold + 5 years past either limit: a higher threshold, further.
    expect(new TrapDetector({ flagThreshold: 100 }).violation('https://e.com/events/2099/12/31/', NOW)).toBe(PatternKind.Calendar);
    expect(new TrapDetector({ calendarPastYears: 100 }).violation('https://e.com/events/1902/01/', NOW)).toBe(PatternKind.Calendar);
    expect(new TrapDetector({ facetLimit: 6 }).violation('https://e.com/shop?a=1&b=2&c=3&d=4&e=5', NOW)).toBe(PatternKind.None);
  });

  it('validates its options and arguments', () => {
    expect(() => new TrapDetector({ facetLimit: 0 })).toThrow(/TrapDetectorOptions\.facetLimit/);
    expect(() => new TrapDetector({ flagThreshold: 2.5 })).toThrow(InvalidArgumentError);
    expect(() => d.violation('https://e.com/', -1)).toThrow(/nowHours/);
    // A fresh detector validates its first clock too (no horizon is cached yet).
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new TrapDetector().violation('https://e.com/events/2026/08/', bad)).toThrow(/nowHours/);
      expect(() => new TrapDetector().observe('e.com', keyOf('https://e.com/a/'), 'https://e.com/a/', bad)).toThrow(/nowHours/);
    }
    expect(() => d.violation('https://e.com/', Number.NaN)).toThrow(/nowHours/);
    expect(() => d.violation(7 as unknown as string, NOW)).toThrow(InvalidArgumentError);
    expect(() => d.observe({} as unknown as string, keyOf('https://e.com/'), 'https://e.com/', NOW)).toThrow(/host reference/);
    expect(() => d.observe('e.com', new Uint32Array(2), 'https://e.com/', NOW)).toThrow(/KeyArray/);
  });
});

/** Runs discoveries through observe → passes → admit, as the frontier's intake will. */
function intake(detector: TrapDetector, host: AdmitHost, hostRef: string, url: string, depth = 1): number {
  const canon = canonicalize(url);
  if (canon === null) throw new Error(`not a frontier URL: ${url}`);
  const { becameSuspect } = detector.observe(hostRef, keyOf(canon), canon, NOW);
  if (becameSuspect) flagTrapSuspect(host);
  return admit(depth, host, detector.passes(hostRef, canon, NOW));
}

describe('synthetic trap sites', () => {
  it('parks an infinite calendar while the same host’s articles are admitted', () => {
    const detector = new TrapDetector();
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: 0 };
    const r = rng(1);
    let beyondAdmitted = 0;
    let beyondTrapped = 0;
    let articles = 0;
    let articlesAdmitted = 0;
    // The calendar walks forward a month per page for 40 years, interleaved with articles.
    for (let month = 0; month < 480; month++) {
      const y = 2026 + Math.floor((6 + month) / 12);
      const m = ((6 + month) % 12) + 1;
      const status = intake(detector, host, 'events.example.org', `https://events.example.org/calendar/${y}/${String(m).padStart(2, '0')}/`);
      if (month > 12) {
        if (status === UrlStatus.Scheduled) beyondAdmitted++;
        else beyondTrapped++;
      } else {
        expect(status).toBe(UrlStatus.Scheduled); // inside the horizon: a real calendar page
      }
      for (let k = 0; k < 2; k++) {
        articles++;
        const s = intake(detector, host, 'events.example.org', `https://events.example.org/news/2025/0${1 + (k % 9)}/story-${token(r, 8)}`);
        if (s === UrlStatus.Scheduled) articlesAdmitted++;
      }
    }
    expect(detector.flags('events.example.org')).toEqual({ calendar: true, faceted: false, session: false, repeated: false });
    expect(isTrapSuspect(host)).toBe(true);
    expect(articlesAdmitted).toBe(articles);
    expect(beyondAdmitted).toBe(detector.options.flagThreshold - 1);
    expect(beyondTrapped).toBe(480 - 13 - beyondAdmitted);
    expect(detector.trackedUrls('events.example.org')).toBe(0);
  });

  it('flags a session-id explosion and parks only the tokenized URLs', () => {
    const detector = new TrapDetector();
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: 0 };
    const r = rng(2);
    const statuses: number[] = [];
    // Every page links to ten pages, each link carrying a fresh token under a name
    // canonicalization does not know (it strips jsessionid, sessid=<token> and the like).
    for (let i = 0; i < 300; i++) {
      statuses.push(intake(detector, host, 'shop.example.net', `https://shop.example.net/item/${i % 10}?sessionkey=${token(r)}`));
    }
    expect(detector.suspect('shop.example.net')).toBe(true);
    expect(detector.flags('shop.example.net').session).toBe(true);
    // The first token of each of the ten pages is no copy; the next copies under other tokens count.
    expect(statuses.filter((s) => s === UrlStatus.Scheduled)).toHaveLength(10 + detector.options.flagThreshold - 1);
    expect(intake(detector, host, 'shop.example.net', 'https://shop.example.net/item/3')).toBe(UrlStatus.Scheduled);
    expect(intake(detector, host, 'shop.example.net', `https://shop.example.net/item/3;sid=${token(r)}`)).toBe(UrlStatus.Trapped);
  });

  it('flags a facet explosion but still admits product pages and light filters', () => {
    const detector = new TrapDetector();
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: 0 };
    const facets = ['color', 'size', 'brand', 'material', 'fit', 'price', 'rating'];
    const r = rng(3);
    for (let i = 0; i < 400; i++) {
      const chosen = facets.filter(() => r() < 0.7).map((f) => `${f}=${Math.floor(r() * 5)}`);
      intake(detector, host, 'store.example.com', `https://store.example.com/c/shoes?${chosen.join('&')}`);
      intake(detector, host, 'store.example.com', `https://store.example.com/p/${i}`);
    }
    expect(detector.flags('store.example.com')).toEqual({ calendar: false, faceted: true, session: false, repeated: false });
    expect(intake(detector, host, 'store.example.com', 'https://store.example.com/p/99999')).toBe(UrlStatus.Scheduled);
    expect(intake(detector, host, 'store.example.com', 'https://store.example.com/c/shoes?color=1&size=2&page=3')).toBe(UrlStatus.Scheduled);
    expect(intake(detector, host, 'store.example.com', 'https://store.example.com/c/shoes?color=1&size=2&brand=3&fit=4&price=1')).toBe(
      UrlStatus.Trapped,
    );
  });

  it('flags relative links under a catch-all path and parks only the URLs repeating a segment', () => {
    const detector = new TrapDetector();
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: 0 };
    // Every page answers any path below it and links guide/, api/, faq/ relative to itself.
    const names = ['guide', 'api', 'faq'];
    let frontier = ['https://docs.example/index.php/'];
    const statuses: number[] = [];
    for (let depth = 0; depth < 7; depth++) {
      frontier = frontier.flatMap((u) => names.map((n) => `${u}${n}/`));
      for (const u of frontier) statuses.push(intake(detector, host, 'docs.example', u));
    }
    expect(detector.flags('docs.example').repeated).toBe(true);
    // Before the flag every URL was admitted; after it, those with a triple segment are parked.
    expect(statuses.filter((s) => s === UrlStatus.Trapped).length).toBeGreaterThan(1000);
    expect(intake(detector, host, 'docs.example', 'https://docs.example/index.php/guide/api/faq/')).toBe(UrlStatus.Scheduled);
    expect(intake(detector, host, 'docs.example', 'https://docs.example/index.php/api/api/x/api/')).toBe(UrlStatus.Trapped);
  });

  it('does not flag real sites with a few dated, filtered or hashed URLs (precision)', () => {
    const detector = new TrapDetector();
    const r = rng(4);
    const host = 'news.example.com';
    // Two thousand archive articles over twenty years, a few future events, a few very old
    // scanned pages, some filtered searches, commit-hash pages and tracking-free links.
    for (let i = 0; i < 2000; i++) {
      const y = 2006 + (i % 20);
      const url = canonicalize(`https://${host}/${y}/${String(1 + (i % 12)).padStart(2, '0')}/story-${token(r, 10)}`)!;
      expect(detector.observe(host, keyOf(url), url, NOW).kind).toBe(PatternKind.None);
    }
    const oddities = [
      ...Array.from({ length: 6 }, (_, i) => `https://${host}/events/2028-0${i + 1}-15/launch`),
      ...Array.from({ length: 5 }, (_, i) => `https://${host}/archive/1962/0${i + 1}/scan`),
      ...Array.from({ length: 8 }, (_, i) => `https://${host}/search?q=x&a=${i}&b=1&c=2&d=3&e=4`),
      ...Array.from({ length: 500 }, () => `https://${host}/commit/${token(r, 40)}`),
      ...Array.from({ length: 300 }, (_, i) => `https://${host}/item?id=${20100101 + i * 37}`),
    ];
    for (const raw of oddities) {
      const url = canonicalize(raw)!;
      expect(detector.observe(host, keyOf(url), url, NOW).becameSuspect).toBe(false);
    }
    expect(detector.suspect(host)).toBe(false);
    expect(detector.flags(host)).toEqual({ calendar: false, faceted: false, session: false, repeated: false });
    expect(detector.passes(host, canonicalize(`https://${host}/events/2031/01/`)!, NOW)).toBe(true);
  });

  it('counts no /YYYY/MM pair a walk could not reach: ids past 2052 followed by 10–12 do not flag a host', () => {
    // A Q&A site's share links (/a/<answer>/<user>), a forum's post links (/t/<slug>/<topic>/<post>),
    // an album's photos: four-digit ids then 10–12 read as /YYYY/MM. Before, twenty of them flagged
    // the host and parked the rest as calendar pages. (Ids from 1971 to 2052 still count: the
    // window is what a walk reaches before its flag.)
    const detector = new TrapDetector();
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: 0 };
    let admitted = 0;
    let n = 0;
    for (let id = 2100; id < 9999; id += 37) {
      for (const tail of ['10', '11', '12']) {
        n++;
        for (const url of [`https://qa.example/a/${id}/${tail}`, `https://qa.example/t/some-topic/${id}/${tail}`]) {
          if (intake(detector, host, 'qa.example', url) === UrlStatus.Scheduled) admitted++;
        }
      }
    }
    expect(admitted).toBe(2 * n);
    expect(detector.suspect('qa.example')).toBe(false);
    expect(detector.trackedUrls('qa.example')).toBe(0);
    // Within reach they still count: twenty years just past the horizon flag the host …
    for (let y = 2028; y < 2048; y++) intake(detector, host, 'qa.example', `https://qa.example/events/${y}/10/`);
    expect(detector.flags('qa.example').calendar).toBe(true);
    // … and a flagged host parks a date however far out (a walk that jumped past what counts).
    expect(detector.passes('qa.example', 'https://qa.example/events/2099/10/', NOW)).toBe(false);
    expect(detector.passes('qa.example', 'https://qa.example/events/1850/01/', NOW)).toBe(false);
    // (the same hour's narrow reading is unchanged by the wide one)
    expect(detector.violation('https://qa.example/events/1850/01/', NOW)).toBe(PatternKind.None);
    expect(detector.passes('qa.example', 'https://qa.example/a/9101/10', NOW)).toBe(false);
    expect(detector.passes('qa.example', 'https://qa.example/a/9101/13', NOW)).toBe(true);
  });

  it('counts distinct URLs: one trap URL rediscovered a thousand times flags nothing', () => {
    const detector = new TrapDetector();
    const url = 'https://loop.example/cal/2040/01/';
    for (let i = 0; i < 1000; i++) expect(detector.observe('loop.example', keyOf(url), url, NOW).becameSuspect).toBe(false);
    expect(detector.suspect('loop.example')).toBe(false);
    expect(detector.trackedUrls('loop.example')).toBe(1);
  });

  it('keeps per-host memory bounded and reports becameSuspect once', () => {
    const detector = new TrapDetector({ flagThreshold: 8 });
    const r = rng(5);
    let became = 0;
    for (let i = 0; i < 5000; i++) {
      // A fresh token on each URL, and each page the token-stripped URL of a hundred earlier ones.
      const url = `https://big.example/p?sessid=${token(r)}&a=1&b=2&c=3&d=4&e=${i % 100}`;
      const obs = detector.observe('big.example', keyOf(url), url, NOW);
      if (obs.becameSuspect) became++;
      expect(detector.trackedUrls('big.example')).toBeLessThanOrEqual(4 * 8);
      expect(detector.sessionPaths('big.example')).toBeLessThanOrEqual(100);
    }
    expect(became).toBe(1);
    expect(detector.flags('big.example')).toEqual({ calendar: false, faceted: true, session: true, repeated: false });
    expect(detector.trackedUrls('big.example')).toBe(0);
    expect(detector.sessionPaths('big.example')).toBe(0);
    // Token-stripped URLs never met twice: at most 256 remembered, the oldest forgotten.
    const wide = new TrapDetector();
    for (let i = 0; i < 3000; i++) {
      const url = `https://wide.example/(S(${token(r, 24)}))/item.aspx?id=${i}`;
      wide.observe('wide.example', keyOf(url), url, NOW);
    }
    expect(wide.sessionPaths('wide.example')).toBe(256);
    expect(wide.suspect('wide.example')).toBe(false);
  });

  it('the session rule remembers at most 32,768 token-stripped URLs over every host; past that a new host counts every session URL, as before copies were asked for', () => {
    // A review measured 400 MB for 1,000 hosts each keeping one session over 1,024 URLs.
    const detector = new TrapDetector();
    const r = rng(11);
    for (let h = 0; h < 200; h++) {
      const host = `h${h}.example`;
      const session = token(r, 24);
      for (let i = 0; i < 300; i++) {
        const url = `https://${host}/(S(${session}))/item.aspx?id=${i}`;
        detector.observe(host, keyOf(url), url, NOW);
      }
    }
    let total = 0;
    for (let h = 0; h < 200; h++) total += detector.sessionPaths(`h${h}.example`);
    expect(total).toBe(32_768);
    // Hosts remembered within the bound keep one session and are no trap; the ones past it are
    // flagged as before (every distinct session URL counted).
    expect(detector.suspect('h0.example')).toBe(false);
    expect(detector.suspect('h199.example')).toBe(true);
  });

  it('never flags a site that keeps one session: every URL carries the same token (ASP.NET cookieless)', () => {
    // The first request is redirected into /(S(token))/ and relative links stay in it: every URL
    // of the site bears a session signature, none is a copy. Before, the 20th URL flagged the
    // host and the rest of the site was parked.
    const detector = new TrapDetector();
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: 0 };
    const r = rng(7);
    const t = token(r, 24);
    const urls = [`https://aspx.example/(S(${t}))/`, ...Array.from({ length: 500 }, (_, i) => `https://aspx.example/(S(${t}))/product.aspx?id=${i + 1}`)];
    // Rediscovered from every page: the same URLs again.
    const statuses = [...urls, ...urls].map((u) => intake(detector, host, 'aspx.example', u));
    expect(statuses.every((s) => s === UrlStatus.Scheduled)).toBe(true);
    expect(detector.suspect('aspx.example')).toBe(false);
    expect(detector.observe('aspx.example', keyOf(urls[3]!), urls[3]!, NOW).kind).toBe(PatternKind.Session);
    // A site that mints a session per visit links the same pages under new tokens: a trap.
    const minting = new TrapDetector();
    const h2: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: 0 };
    let scheduled = 0;
    for (let visit = 0; visit < 10; visit++) {
      const v = token(r, 24);
      for (let i = 1; i <= 30; i++) if (intake(minting, h2, 'mint.example', `https://mint.example/(S(${v}))/product.aspx?id=${i}`) === UrlStatus.Scheduled) scheduled++;
    }
    expect(minting.flags('mint.example').session).toBe(true);
    // The first visit's 30 pages, then copies until the flag.
    expect(scheduled).toBe(30 + minting.options.flagThreshold - 1);
  });

  it('reads the token-stripped URL of each session place (sessionSplit)', () => {
    const t = '9f8e7d6c5b4a39281726';
    expect(sessionSplit(`https://e.com/(S(lit3py55t21z5v55vlm25s55))/page.aspx?a=1`)).toEqual({ rest: 'https://e.com/(S())/page.aspx?a=1', token: 'lit3py55t21z5v55vlm25s55' });
    expect(sessionSplit(`https://e.com/a;sid=${t}/b?x=1`)).toEqual({ rest: 'https://e.com/a;sid=/b?x=1', token: t });
    expect(sessionSplit(`https://e.com/session/${t}/page`)).toEqual({ rest: 'https://e.com/session//page', token: t });
    expect(sessionSplit(`https://e.com/p?a=1&usersid=${t}`)).toEqual({ rest: 'https://e.com/p?a=1&usersid=', token: t });
    // Not a token: left as it is.
    expect(sessionSplit('https://e.com/p?sid=short&q=1')).toEqual({ rest: 'https://e.com/p?sid=short&q=1', token: '' });
  });

  it('is pure: the same stream gives the same verdicts and flags', () => {
    const run = (): string => {
      const detector = new TrapDetector({ flagThreshold: 5 });
      const r = rng(6);
      const out: string[] = [];
      for (let i = 0; i < 300; i++) {
        const pick = r();
        const url =
          pick < 0.3 ? `https://h${i % 3}.example/cal/${2030 + (i % 50)}/0${1 + (i % 9)}/` : pick < 0.6 ? `https://h${i % 3}.example/p?sid_x=${token(r)}` : `https://h${i % 3}.example/a/${i}`;
        const o = detector.observe(`h${i % 3}`, keyOf(url), url, NOW);
        out.push(`${o.kind}${o.becameSuspect ? '!' : ''}`);
      }
      for (let h = 0; h < 3; h++) out.push(JSON.stringify(detector.flags(`h${h}`)));
      return out.join(',');
    };
    expect(run()).toBe(run());
  });
});

describe('admit', () => {
  it('schedules within budget and depth, counting admissions', () => {
    const host: AdmitHost = { urlBudget: 3, depthCap: 2, admitted: 0, flags: 0 };
    expect(admit(0, host, true)).toBe(UrlStatus.Scheduled);
    expect(admit(2, host, true)).toBe(UrlStatus.Scheduled);
    expect(admit(3, host, true)).toBe(UrlStatus.Trapped);
    expect(host.admitted).toBe(2);
    expect(admit(1, host, true)).toBe(UrlStatus.Scheduled);
    expect(admit(1, host, true)).toBe(UrlStatus.Trapped);
    expect(host.admitted).toBe(3);
    host.urlBudget = 10; // raising the budget releases admission
    expect(admit(1, host, true)).toBe(UrlStatus.Scheduled);
  });

  it('treats zero budget and zero depth cap as unlimited', () => {
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 1e9, flags: 0 };
    expect(admit(1e6, host, false)).toBe(UrlStatus.Scheduled);
  });

  it('applies the heuristics only to flagged hosts', () => {
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: HostFlags.Dead };
    expect(admit(1, host, false)).toBe(UrlStatus.Scheduled);
    expect(isTrapSuspect(host)).toBe(false);
    flagTrapSuspect(host);
    flagTrapSuspect(host);
    expect(isTrapSuspect(host)).toBe(true);
    expect(host.flags).toBe(HostFlags.Dead | HostFlags.TrapSuspect);
    expect(admit(1, host, false)).toBe(UrlStatus.Trapped);
    expect(admit(1, host, true)).toBe(UrlStatus.Scheduled);
  });

  it('rejects a bad depth', () => {
    const host: AdmitHost = { urlBudget: 0, depthCap: 0, admitted: 0, flags: 0 };
    expect(() => admit(-1, host, true)).toThrow(InvalidArgumentError);
    expect(() => admit(Number.NaN, host, true)).toThrow(/depth/);
  });
});
