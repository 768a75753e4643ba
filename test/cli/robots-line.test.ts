// The end summary's robots.txt line and "nothing fetched" reason: a crawl whose only host's
// robots.txt does not answer (a wrong port) ended saying "0 network errors" and, when the host
// was given up, "nothing fetched: no page answered" — nothing said robots.txt was the cause.
import { describe, expect, it } from 'vitest';
import { echoLine, nothingFetched, robotsLine } from '../../src/cli/crawl.js';
import { Engine, type CrawlSummary, type UnreachableRobots } from '../../src/engine/index.js';

const waiting: UnreachableRobots = { host: '127.0.0.1', gaveUp: false, reason: 'robots.txt unreachable (no response: ECONNREFUSED, 1 of 5 tries failed), retry at 00:03:18 UTC' };
const given: UnreachableRobots = { host: 'b.test', gaveUp: true, reason: 'robots.txt of http://b.test unreachable, given up after 5 tries (HTTP 503); its URLs were not fetched' };

describe('robotsLine', () => {
  it('is empty without such hosts, names up to three, and says a waiting host is tried again', () => {
    expect(robotsLine([])).toBe('');
    expect(robotsLine([waiting])).toBe(`  robots    127.0.0.1: ${waiting.reason} — their URLs wait until robots.txt answers (RFC 9309), and a resume tries again`);
    expect(robotsLine([given])).toBe(`  robots    b.test: ${given.reason}`);
    const many = Array.from({ length: 100 }, (_, i) => ({ ...given, host: `h${i}.test` }));
    expect(robotsLine(many)).toMatch(/^ {2}robots {4}h0\.test: .*; h1\.test: .*; h2\.test: .*; 97\+ more hosts \(meguri hosts --why\)$/);
  });
});

describe('nothingFetched', () => {
  it('gives an unreachable robots.txt as the reason, before a failing host', async () => {
    // A real summary's shape, with nothing fetched.
    const base = new Engine({ agent: 'T/1.0', seeds: [] }).summary();
    const s = (extra: Partial<CrawlSummary>): CrawlSummary => ({ ...base, ...extra });
    expect(nothingFetched(s({ robotsUnreachable: [waiting] }))).toBe('robots.txt of 127.0.0.1 unreachable — a host is not fetched while its robots.txt does not answer (RFC 9309); check the URL and port');
    expect(nothingFetched(s({ robotsUnreachable: [waiting, given], failingHosts: [{ host: 'c.test', failures: 1, reason: 'HTTP 500', byKind: [{ kind: 'HTTP 500', failures: 1 }] }] }))).toMatch(/^robots\.txt of 127\.0\.0\.1 and 1 more unreachable/);
    expect(nothingFetched(s({}))).toBe('no page answered');
    // A cluster node that asked for nothing: the other nodes held the hosts (before: "no page answered").
    expect(nothingFetched(s({}), true, true)).toBe("this node asked for no page: the crawl's hosts were held by the other nodes (a host is one node's at a time; a one-site crawl runs on one node) — meguri stats --redis … --crawl … --store … shows the crawl");
    expect(nothingFetched(s({ counts: { ...base.counts, networkErrors: 2 } }), true, true)).toBe('no page answered');
    expect(nothingFetched(s({ failingHosts: [{ host: 'staging.test', failures: 3, reason: 'HTTP 401', byKind: [{ kind: 'HTTP 401', failures: 3 }] }] }))).toBe(
      'staging.test: HTTP 401, a password is wanted — give the seed as https://user:password@host/ (sent to that origin only, never saved)',
    );
    // A bare 403 everywhere: a rule against this client (a challenge or a note keeps its own words).
    expect(nothingFetched(s({ failingHosts: [{ host: 'shop.test', failures: 1, reason: 'HTTP 403', byKind: [{ kind: 'HTTP 403', failures: 1 }] }] }))).toMatch(/^shop\.test: HTTP 403, the server refuses this client — .* ask the site's owner to allow your --agent$/);
    expect(nothingFetched(s({ failingHosts: [{ host: 'shop.test', failures: 1, reason: 'HTTP 403, a bot challenge', byKind: [{ kind: 'HTTP 403', failures: 1 }] }] }))).toBe('shop.test: HTTP 403, a bot challenge');
  });
});

describe('echoLine', () => {
  it('is empty without echoes and counts the links not followed', () => {
    const counts = new Engine({ agent: 'T/1.0', seeds: [] }).summary().counts;
    expect(echoLine(counts)).toBe('');
    expect(echoLine({ ...counts, echoLinks: 9 })).toBe(
      "  echoes    9 links not followed: pages repeating a parent directory's relative navigation one level deeper (a catch-all path such as /index.php/…)",
    );
  });
});
