// Feed autodiscovery: a site's home page names its feed (`<link rel=alternate
// type=application/rss+xml>`), the site's own list of what is new. Before, the crawl never read
// it: a post listed only there (a news site's home page shows the latest few) was not found,
// and a `--recrawl` crawl had no cheap page to notice new posts by. Now a seed's feed is
// followed, read as a sitemap (its items are links, it is no page for --max-pages).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT, inProcess, loopbackSite } from './helpers.js';

describe('meguri crawl and the feed a seed names', () => {
  const requested: string[] = [];
  const head = '<head><link rel="alternate" type="application/rss+xml" title="News" href="/feed.xml"></head>';
  const site = loopbackSite('meguri-feeds-', (req, res) => {
    const url = req.url ?? '/';
    requested.push(url);
    if (url === '/robots.txt') return void res.writeHead(404).end();
    if (url === '/feed.xml') {
      const items = ['/news/3', '/news/2', '/news/1'].map((p) => `<item><title>${p}</title><link>${site.base}${p}</link></item>`).join('');
      return void res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(`<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>${items}</channel></rss>`);
    }
    // The home page shows the latest post only; each post names the feed too, and its own
    // comment feed (a page below the seed: not followed), and links home.
    if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html>${head}<body><a href="/news/3">latest</a></body></html>`);
    if (/^\/news\/\d$/.test(url)) {
      const comments = `<link rel="alternate" type="application/rss+xml" href="${url}/comments.xml">`;
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html>${head.replace('</head>', `${comments}</head>`)}<body><p>post ${url}</p><a href="/">home</a></body></html>`);
    }
    res.writeHead(404).end();
  });

  it('reads it as a sitemap: the posts listed only there are crawled, the feed is no page', async () => {
    const data = join(site.dir, 'crawl');
    const run = await inProcess(['crawl', `${site.base}/`, '--data', data, '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h']);
    expect(run.code).toBe(0);
    const rows = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; sitemap?: boolean });
    const pages = rows.filter((r) => r.sitemap !== true).map((r) => r.url.replace(site.base, '')).sort();
    expect(pages).toEqual(['/', '/news/1', '/news/2', '/news/3']);
    expect(rows.filter((r) => r.sitemap === true).map((r) => r.url.replace(site.base, ''))).toEqual(['/feed.xml']);
    expect(requested.filter((u) => u === '/feed.xml')).toHaveLength(1);
    expect(requested.filter((u) => u.endsWith('/comments.xml'))).toEqual([]);
    expect(run.out).toContain('in the campaign (4 OK)');
  });
});
