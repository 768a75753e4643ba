import { describe, expect, it } from 'vitest';
import { CanonRule, explainCanonical, mergedBy, rejectReason, splitUrl } from '../../demo/src/explain.js';
import { canonicalize } from '../../src/index.js';

/** Rules (with details) for a raw line, using the real canonicalizer. */
function rules(raw: string): string[] {
  const c = canonicalize(raw);
  expect(c, raw).not.toBeNull();
  return explainCanonical(raw, c!).map((h) => (h.detail === undefined ? h.rule : `${h.rule}: ${h.detail}`));
}

describe('splitUrl', () => {
  it('splits the parts as written', () => {
    expect(splitUrl('HTTP://u:p@Host.COM:8080/a/b?x=1&y#frag')).toEqual({
      scheme: 'HTTP',
      userinfo: 'u:p',
      host: 'Host.COM',
      port: '8080',
      path: '/a/b',
      query: 'x=1&y',
      fragment: 'frag',
    });
    expect(splitUrl('https://[::1]:443/')).toMatchObject({ host: '[::1]', port: '443' });
    expect(splitUrl('https://[::1]/')).toMatchObject({ host: '[::1]', port: undefined });
    expect(splitUrl('https://a.com')).toMatchObject({ host: 'a.com', path: '', query: undefined, fragment: undefined });
    expect(splitUrl('https://a.com/?')).toMatchObject({ query: '' });
    expect(splitUrl('mailto:x@y.z')).toBeUndefined();
    expect(splitUrl('http:\\\\a.com\\x')).toBeUndefined();
  });
});

describe('explainCanonical', () => {
  it('names nothing for a line already canonical', () => {
    expect(rules('https://example.com/a?a=1&b=2')).toEqual([]);
  });

  it.each([
    ['HTTPS://example.com/', [CanonRule.SchemeCase]],
    ['https://Example.COM/', [CanonRule.HostCase]],
    ['https://example.com./', [CanonRule.HostTrailingDot]],
    ['https://EXAMPLE.com./', [CanonRule.HostCase, CanonRule.HostTrailingDot].sort()],
    ['https://bücher.example/', [CanonRule.HostIdna]],
    ['http://0x7f.1/', [CanonRule.HostIp]],
    ['http://example.com:80/', [`${CanonRule.DefaultPort}: :80`]],
    ['https://example.com:443/x', [`${CanonRule.DefaultPort}: :443`]],
    ['https://user:pw@example.com/', [CanonRule.Userinfo]],
    ['https://example.com', [CanonRule.EmptyPath]],
    ['https://example.com/a/./b/../c', [CanonRule.DotSegments]],
    ['https://example.com/%7euser/%41', [`${CanonRule.PercentEncoding}: path`]],
    ['https://example.com/a b', [`${CanonRule.PercentEncoding}: path`]],
    ['https://example.com/a#top', [CanonRule.Fragment]],
    ['https://example.com/a#', [CanonRule.Fragment]],
    ['https://example.com/a?utm_source=x&gclid=1&b=2', [`${CanonRule.TrackingParam}: utm_source, gclid`]],
    ['https://example.com/a?jsessionid=ABC&b=2', [`${CanonRule.SessionParam}: jsessionid`]],
    ['https://example.com/a?b=2&a=1', [CanonRule.QuerySorted]],
    ['https://example.com/a?', [CanonRule.EmptyQuery]],
    ['https://example.com/a?&b=1&&', [CanonRule.EmptyParam]],
    ['https://example.com/a?q=%7e', [`${CanonRule.PercentEncoding}: query`]],
  ])('%s', (raw, expected) => {
    expect(rules(raw).sort()).toEqual([...expected].sort());
  });

  it('lists several rules in DESIGN §5 order', () => {
    expect(rules('HTTP://User@Example.com:80/x/../y?utm_medium=a&z=1&a=2#f')).toEqual([
      CanonRule.SchemeCase,
      CanonRule.HostCase,
      `${CanonRule.DefaultPort}: :80`,
      CanonRule.Userinfo,
      CanonRule.DotSegments,
      CanonRule.Fragment,
      `${CanonRule.TrackingParam}: utm_medium`,
      CanonRule.QuerySorted,
    ]);
  });

  it('says "normalized by the URL parser" where no named step explains the difference', () => {
    expect(rules('http:\\\\example.com\\a')).toEqual([CanonRule.Parser]);
  });

  it('merges the rules of a group as a union in step order', () => {
    const a = explainCanonical('https://example.com/a#x', 'https://example.com/a');
    const b = explainCanonical('https://EXAMPLE.com/a', 'https://example.com/a');
    expect(mergedBy([a, b, []])).toEqual([CanonRule.HostCase, CanonRule.Fragment]);
  });
});

describe('rejectReason', () => {
  it.each([
    ['ftp://example.com/x', 'scheme ftp is not http or https'],
    ['mailto:someone@example.com', 'scheme mailto is not http or https'],
    ['example.com/no-scheme', 'not an absolute URL (no scheme)'],
    ['https://[::1/broken', 'not a parseable URL'],
    ['http://a..b/', 'invalid host "a..b"'],
    [`https://example.com/${'x'.repeat(3000)}`, 'longer than 2048 characters (3020)'],
  ])('%s', (raw, reason) => {
    expect(canonicalize(raw)).toBeNull();
    expect(rejectReason(raw)).toBe(reason);
  });
});
