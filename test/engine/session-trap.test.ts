/**
 * The session trap rule (`TrapDetector`, src/dedup/traps.ts) on an ASP.NET cookieless-session
 * shop: a URL without `/(S(token))/` is redirected into a new session, and the pages link
 * relatively, so the whole crawl stays in the one session it was given — every URL carries the
 * token, none is a copy. Before, the 20th such URL flagged the host and the rest of the shop was
 * parked as a trap (60 products: 18 fetched, 43 parked). A shop that mints a new session on
 * every page (each page's links carry a token of their own) is still a trap: its copies are
 * parked once 20 were met. The engine with its HTTP fetcher on loopback.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { AGENT, loopbackSite } from './helpers.js';

const PRODUCTS = 60;
/** Requests per path (the token taken out), per site. */
const asked = { stable: [] as string[], minting: [] as string[] };

const page = (res: ServerResponse, body: string): void => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head><title>Shop</title></head><body>${body}</body></html>`);
};
const token = (): string => randomBytes(12).toString('hex');

/** The shop: `/` and `/default.aspx` list the products, each product links home and the next. `mint`: every page links under a new session. */
function shop(mint: boolean, log: string[]): Parameters<typeof loopbackSite>[0] {
  return (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/robots.txt') return void res.writeHead(404).end();
    const m = /^\/\(S\(([a-f0-9]{24})\)\)(\/.*)$/.exec(u.pathname);
    if (m === null) return void res.writeHead(302, { location: `/(S(${token()}))${u.pathname}${u.search}` }).end();
    const path = m[2]!;
    log.push(`${path}${u.search}`);
    const to = (rel: string): string => (mint ? `/(S(${token()}))/${rel}` : rel);
    const id = Number(u.searchParams.get('id'));
    if (path === '/' || path === '/default.aspx') return page(res, `<h1>Shop</h1>${Array.from({ length: PRODUCTS }, (_, i) => `<a href="${to(`product.aspx?id=${i + 1}`)}">p${i + 1}</a>`).join(' ')}`);
    if (path === '/product.aspx' && id >= 1 && id <= PRODUCTS) return page(res, `<h1>Product ${id}</h1><p>${'fine goods '.repeat(10 + id)}</p><a href="${to('default.aspx')}">home</a> <a href="${to(`product.aspx?id=${(id % PRODUCTS) + 1}`)}">next</a>`);
    res.writeHead(404).end();
  };
}

const stable = loopbackSite(shop(false, asked.stable));
const minting = loopbackSite(shop(true, asked.minting));
const options = { agent: AGENT, allowPrivate: true, politeness: { minDelayMs: 1, startDelayMs: 1 } };

/** Runs `e` to its end; returns its URLs by status, read before it closes (the frontier is freed then). */
async function run(e: Engine): Promise<Record<string, number>> {
  for await (const p of e.run()) void p;
  const byStatus = e.urlsByStatus();
  await e.close();
  return byStatus;
}

const products = (log: readonly string[]): number => new Set(log.filter((p) => p.startsWith('/product.aspx?id='))).size;

describe('an ASP.NET cookieless-session site', () => {
  it('that keeps one session is no trap: every product is fetched, none parked', async () => {
    const e = new Engine({ ...options, seeds: [`http://127.0.0.1:${stable.port()}/`] });
    const byStatus = await run(e);
    expect(e.summary().reason).toBe('drained');
    // Before: 18 of 60 products, 43 URLs parked as a session trap.
    expect(products(asked.stable)).toBe(PRODUCTS);
    // `/`, `/default.aspx` (the products link it) and each product once.
    expect(asked.stable).toHaveLength(2 + PRODUCTS);
    expect(byStatus['Trapped']).toBe(0);
  });

  it('that mints a session per page is still a trap: its copies under new tokens are parked', async () => {
    const e = new Engine({ ...options, seeds: [`http://127.0.0.1:${minting.port()}/`] });
    const byStatus = await run(e);
    expect(e.summary().reason).toBe('drained');
    // The home page links every product (each under a token of its own: no copy yet); the copies
    // later pages link under new tokens are fetched only until 20 were met, the rest parked.
    expect(products(asked.minting)).toBe(PRODUCTS);
    // (Unflagged, each page's links under new tokens would go on without end.)
    expect(asked.minting.length).toBeLessThanOrEqual(2 + PRODUCTS + 30);
    expect(byStatus['Trapped']).toBeGreaterThan(PRODUCTS);
  });
});
