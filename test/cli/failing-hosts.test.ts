// The summary's `failing` line names what a host mostly failed with, then the other kinds by
// count (src/engine/tally.ts `failingHosts`, src/cli/crawl.ts `failingText`). It named only the
// last failure: a loopback site with eight timeouts, four cut-off answers and one page sending
// 100 kB of headers read "hostile.test 15× (protocol: response headers exceed 65536 bytes)".
import { describe, expect, it } from 'vitest';
import { Tally } from '../../src/engine/tally.js';
import { failingText, timeoutHint } from '../../src/cli/crawl.js';

const req = (path: string) => ({ url: `http://hostile.test${path}`, host: 'hostile.test' });

describe('failing hosts in the summary', () => {
  it('leads with the most frequent kind and its latest message, then the rest by count', () => {
    const t = new Tally();
    for (let i = 0; i < 4; i++) t.outcome(req('/slow'), 0, false, 'timeout', 'headers timeout after 30000 ms');
    for (let i = 0; i < 4; i++) t.outcome(req('/drip'), 0, false, 'timeout', 'total timeout after 120000 ms');
    for (let i = 0; i < 4; i++) t.outcome(req('/short'), 0, false, 'incomplete', 'the response broke off after its headers');
    t.outcome(req('/reset'), 0, false, 'network', 'UND_ERR_SOCKET: other side closed');
    t.outcome(req('/missing'), 404, false, undefined, undefined);
    t.outcome(req('/big'), 0, false, 'protocol', 'response headers exceed 65536 bytes');
    t.outcome(req('/fine'), 200, false, undefined, undefined);
    const [h] = t.failingHosts();
    expect(h).toEqual({
      host: 'hostile.test',
      failures: 15,
      reason: 'timeout: total timeout after 120000 ms',
      // Ties (one each) by the kind met last: protocol, then HTTP 404, then network.
      byKind: [
        { kind: 'timeout', failures: 8 },
        { kind: 'incomplete', failures: 4 },
        { kind: 'protocol', failures: 1 },
        { kind: 'HTTP 404', failures: 1 },
        { kind: 'network', failures: 1 },
      ],
    });
    expect(failingText(h!)).toBe('hostile.test 15× (8 timeout: total timeout after 120000 ms; 4 incomplete; 1 protocol; 1 HTTP 404; 1 network)');
  });

  it('a host that failed one way keeps the short form, HTTP reasons included', () => {
    const t = new Tally();
    t.outcome(req('/a'), 503, false, undefined, undefined);
    t.outcome(req('/b'), 503, false, undefined, undefined);
    expect(failingText(t.failingHosts()[0]!)).toBe('hostile.test 2× (HTTP 503)');
    const u = new Tally();
    u.outcome(req('/a'), 403, false, undefined, 'a bot challenge');
    u.outcome(req('/b'), 500, false, undefined, undefined);
    u.outcome(req('/c'), 403, false, undefined, 'a bot challenge');
    expect(failingText(u.failingHosts()[0]!)).toBe('hostile.test 3× (2 HTTP 403: a bot challenge; 1 HTTP 500)');
  });

  it('names --timeout when timeouts are what most failing hosts failed with', () => {
    const t = new Tally();
    for (let i = 0; i < 3; i++) t.outcome(req('/slow'), 0, false, 'timeout', 'headers timeout after 30000 ms');
    t.outcome({ url: 'http://other.test/a', host: 'other.test' }, 503, false, undefined, undefined);
    expect(timeoutHint(t.failingHosts())).toBe(' — --timeout TIME waits longer (default 2m)');
    t.outcome({ url: 'http://third.test/a', host: 'third.test' }, 404, false, undefined, undefined);
    expect(timeoutHint(t.failingHosts())).toBe('');
    expect(timeoutHint([])).toBe('');
  });
});
