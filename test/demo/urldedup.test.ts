import { describe, expect, it } from 'vitest';
import { CanonRule } from '../../demo/src/explain.js';
import { SyntheticUrls } from '../../demo/src/synth.js';
import { dedupUrls, inputLines } from '../../demo/src/urldedup.js';
import { canonicalize, keyToHex, urlKey } from '../../src/index.js';

describe('inputLines', () => {
  it('keeps non-blank trimmed lines with 1-based numbers across line-ending styles', () => {
    expect(inputLines('a\r\n\r\n  b  \rc\n\n')).toEqual([
      { line: 1, raw: 'a' },
      { line: 3, raw: 'b' },
      { line: 4, raw: 'c' },
    ]);
    expect(inputLines('   \n\t')).toEqual([]);
  });
});

describe('dedupUrls', () => {
  it('reports unique count, groups with their rules, rejected lines and keys', () => {
    const r = dedupUrls(
      [
        'https://Example.com/a?b=2&a=1',
        'https://example.com:443/a?a=1&b=2#top',
        'ftp://example.com/x',
        'https://example.org/solo',
        '',
        'https://example.com/a?utm_source=news&a=1&b=2',
      ].join('\n'),
    );
    expect(r).toMatchObject({ lines: 5, accepted: 4, unique: 2, duplicates: 2 });
    expect(r.rejected).toEqual([{ line: 3, raw: 'ftp://example.com/x', reason: 'scheme ftp is not http or https' }]);
    expect(r.groups).toHaveLength(1);
    const g = r.groups[0]!;
    expect(g.canonical).toBe('https://example.com/a?a=1&b=2');
    expect(g.members.map((m) => m.line)).toEqual([1, 2, 6]);
    expect(g.mergedBy).toEqual([CanonRule.HostCase, CanonRule.DefaultPort, CanonRule.Fragment, CanonRule.TrackingParam, CanonRule.QuerySorted]);
    expect(g.key).toBe(keyToHex(urlKey(g.canonical).key));
    expect(r.urls.map((u) => u.canonical)).toEqual(['https://example.com/a?a=1&b=2', 'https://example.org/solo']);
    expect(r.seen.unique).toBe(2);
    expect(r.seen.filterBits).toBeGreaterThan(0);
    expect(r.seen.exactBytes).toBeGreaterThan(0);
  });

  it('handles empty and all-rejected input', () => {
    expect(dedupUrls('')).toMatchObject({ lines: 0, unique: 0, duplicates: 0, groups: [], rejected: [] });
    const r = dedupUrls('nope\nftp://x.y/');
    expect(r).toMatchObject({ lines: 2, accepted: 0, unique: 0, groups: [] });
    expect(r.rejected).toHaveLength(2);
  });

  it('agrees with a Set of canonical strings on a synthetic list (the oracle)', () => {
    const lines = new SyntheticUrls({ seed: 3, dupRate: 0.3, hosts: 40 }).fill([], 5000);
    const r = dedupUrls(lines.join('\n'));
    const forms = new Map<string, number>();
    for (const l of lines) {
      const c = canonicalize(l)!;
      forms.set(c, (forms.get(c) ?? 0) + 1);
    }
    expect(r.unique).toBe(forms.size);
    expect(r.duplicates).toBe(lines.length - forms.size);
    const repeated = [...forms].filter(([, n]) => n > 1);
    expect(r.groups.length).toBe(repeated.length);
    for (const g of r.groups) {
      expect(g.members.length).toBe(forms.get(g.canonical));
      expect(g.mergedBy.length).toBeGreaterThan(0);
      expect(g.mergedBy).not.toContain(CanonRule.Parser);
    }
    expect(r.seen.falsePositives).toBeLessThanOrEqual(r.seen.filterHits);
  });
});
