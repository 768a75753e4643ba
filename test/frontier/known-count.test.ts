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
});
