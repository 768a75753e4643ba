/**
 * The sim's referee for robots.txt (RFC 9309 §2.2.2 matching) on the RFC's own examples and
 * on the rules the sim writes, against robots-parser as a second opinion.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { RulesMatcher } from '../../src/sim/robots.js';
import { createSimWeb, PLAIN_MIX } from '../../src/sim/index.js';

const robotsParser = createRequire(import.meta.url)('robots-parser') as typeof import('robots-parser').default;

const matcher = (allow: string[], disallow: string[]): RulesMatcher =>
  new RulesMatcher({ allow, disallow, crawlDelaySec: undefined, agentSpecific: false });

describe('RulesMatcher', () => {
  it.each([
    // [allow, disallow, path, allowed]
    [[], ['/'], '/anything', false],
    [[], [], '/anything', true],
    [[], [''], '/anything', true], // an empty Disallow allows all
    [['/p'], ['/'], '/page', true], // longest match wins
    [['/folder'], ['/folder'], '/folder/page', true], // a tie goes to allow
    [['/page'], ['/*.htm'], '/page.htm', false], // "/*.htm" (6) beats "/page" (5)
    [['/$'], ['/'], '/', true],
    [['/$'], ['/'], '/page.htm', false],
    [[], ['/*.php$'], '/index.php', false],
    [[], ['/*.php$'], '/index.php?x=1', true],
    [[], ['/*.php'], '/index.php?x=1', false],
    [[], ['/fish*'], '/fishheads/yummy.html', false],
    [[], ['/fish'], '/Fish.asp', true], // paths are case-sensitive
    [[], ['/search'], '/search?q=1', false],
    [[], ['/private/'], '/robots.txt', true], // robots.txt itself is always allowed
  ])('allow %j disallow %j: %s → %s', (allow, disallow, path, allowed) => {
    expect(matcher(allow, disallow).isAllowed(path)).toBe(allowed);
  });

  it('agrees with robots-parser on every linked path of every generated host', () => {
    const sim = createSimWeb({ seed: 21, hosts: 12, pagesPerHost: 20, port: 8080, mix: { ...PLAIN_MIX, agentGroup: 0.5, crawlDelay: 0.5 } });
    let checked = 0;
    for (const h of sim.truth.hosts) {
      const robots = robotsParser(`http://${h.name}/robots.txt`, h.robotsText!);
      for (const p of [...h.pages, ...h.disallowed, '/private/press/x', '/files/a.pdf', '/files/a.pdf?x', '/searching', '/members/x']) {
        expect(robots.isAllowed(`http://${h.name}${p}`, 'meguri'), `${h.name}${p}`).toBe(!sim.truth.isDisallowed(h.name, p));
        checked++;
      }
      expect(robots.getCrawlDelay('meguri')).toBe(h.rules!.crawlDelaySec);
    }
    expect(checked).toBeGreaterThan(300);
  });
});
