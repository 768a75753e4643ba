// Frontier.knownCount: how many of a page's links have a row already (the engine's question
// before a page's links enter, `ViewKeys`): links as given, canonicalized as intake would.
import { describe, expect, it } from 'vitest';
import { Frontier } from '../../src/index.js';

describe('Frontier.knownCount', () => {
  it('counts the links with a row, seeds and discoveries alike, and nothing else', () => {
    const f = new Frontier(1, 0, {});
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    f.discover({ url: 'https://a.example/p/1', host: 'a.example', depth: 1, cash: 1 }, 0);
    expect(f.knownCount([])).toBe(0);
    expect(f.knownCount(['https://a.example/', 'https://a.example/p/1', 'https://a.example/p/2', 'https://b.example/'])).toBe(2);
    // A link in another spelling of a known URL counts as known; one the canonicalizer refuses, not.
    expect(f.knownCount(['HTTPS://A.EXAMPLE:443/p/1', 'not a url'])).toBe(1);
    f.discover({ url: 'https://a.example/p/2', host: 'a.example', depth: 1, cash: 1 }, 0);
    expect(f.knownCount(['https://a.example/p/2'])).toBe(1);
  });

  it('liveCount leaves out rows whose page the crawl will not fetch: gone, refused; fetchedCount counts the fetched ones', () => {
    // With the state machine (the engine's frontier): a 404 makes the row Gone.
    const f = new Frontier(1, 0, { stateMachine: true });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    f.discover({ url: 'https://a.example/p/1', host: 'a.example', depth: 1, cash: 1 }, 0);
    f.refuse({ url: 'https://a.example/out', host: 'a.example', depth: 1, cash: 1 }, 0);
    const links = ['https://a.example/', 'https://a.example/p/1', 'https://a.example/out', 'https://a.example/none'];
    expect(f.knownCount(links)).toBe(3);
    expect(f.liveCount(links)).toBe(2);
    // Nothing fetched yet: a scheduled row is live, not fetched.
    expect(f.fetchedCount(links)).toBe(0);
    // Fetched: live (200); gone (404): not.
    let now = 0;
    for (let i = 0; i < 2; i++) {
      let r = f.dispatch(now);
      while (r === undefined) r = f.dispatch((now = f.nextEligible()!));
      f.report({ row: r.row, url: r.url, status: r.url.endsWith('/p/1') ? 404 : 200 }, now);
    }
    expect(f.knownCount(links)).toBe(3);
    expect(f.liveCount(links)).toBe(1);
    expect(f.liveCount(['https://a.example/'])).toBe(1);
    // fetchedCount: the 200 only (the 404 is gone, the refused row never fetched, in any spelling).
    expect(f.fetchedCount(links)).toBe(1);
    expect(f.fetchedCount(['HTTPS://A.EXAMPLE:443/', 'not a url'])).toBe(1);
    // liveDepthOf: the live row's depth; none for a gone, refused or unknown URL.
    expect(f.liveDepthOf('https://a.example/')).toBe(0);
    expect(f.liveDepthOf('HTTPS://A.EXAMPLE:443/')).toBe(0);
    expect(f.liveDepthOf('https://a.example/p/1')).toBeUndefined();
    expect(f.liveDepthOf('https://a.example/out')).toBeUndefined();
    expect(f.liveDepthOf('https://a.example/none')).toBeUndefined();
    expect(f.liveDepthOf('not a url')).toBeUndefined();
    f.discover({ url: 'https://a.example/p/3', host: 'a.example', depth: 4, cash: 1 }, now);
    expect(f.liveDepthOf('https://a.example/p/3')).toBe(4);
  });

  it('fetchedSimhashOf gives the simhash of a page fetched with one, in any spelling; nothing for a page without one, not fetched, gone or unknown', () => {
    const f = new Frontier(1, 0, { stateMachine: true });
    const urls = ['https://a.example/', 'https://a.example/p/1', 'https://a.example/p/2', 'https://a.example/p/3'];
    f.seed(urls[0]!, 'a.example', 1, 0, 0);
    for (const url of urls.slice(1, 3)) f.discover({ url, host: 'a.example', depth: 1, cash: 1 }, 0);
    const simhash = 0xfedc_ba98_7654_3210n;
    let now = 0;
    for (let i = 0; i < 3; i++) {
      let r = f.dispatch(now);
      while (r === undefined) r = f.dispatch((now = f.nextEligible()!));
      // The home page with a simhash, /p/1 without one (no text), /p/2 gone; /p/3 (below) only queued.
      const status = r.url.endsWith('/p/2') ? 404 : 200;
      f.report({ row: r.row, url: r.url, status, contentFp: 1n, ...(r.url === urls[0] ? { simhash } : {}) }, now);
    }
    f.discover({ url: urls[3]!, host: 'a.example', depth: 1, cash: 1 }, now);
    expect(f.fetchedSimhashOf(urls[0]!)).toBe(simhash);
    expect(f.fetchedSimhashOf('HTTPS://A.EXAMPLE:443/')).toBe(simhash);
    for (const url of [...urls.slice(1), 'https://a.example/none', 'not a url']) expect(f.fetchedSimhashOf(url)).toBeUndefined();
  });
});
