import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/politeness/index.js';

const SEED = 0x5eed6;
const MIN = 60_000;
const NOV_6_1994 = Date.UTC(1994, 10, 6, 8, 49, 37);

describe('parseRetryAfter: delta-seconds', () => {
  it.each([
    ['0', 0],
    ['1', 1000],
    ['120', 120_000], // RFC 9110 §10.2.3 example
    [' 120 ', 120_000],
    ['\t120\t', 120_000],
    ['007', 7000],
    ['000000000000000000001', 1000],
    ['2147483', 2_147_483_000],
  ])('%j → %d ms', (value, ms) => {
    expect(parseRetryAfter(value, 0)).toBe(ms);
  });

  it('saturates at 2^31 − 1 ms instead of growing or overflowing', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(2 ** 31 - 1);
    for (const v of ['2147484', '4294967296', '99999999999', '9'.repeat(400)]) {
      expect(parseRetryAfter(v, 0)).toBe(MAX_RETRY_AFTER_MS);
    }
  });

  it('does not read the wall clock', () => {
    expect(parseRetryAfter('5', Number.NaN)).toBe(5000);
  });
});

describe('parseRetryAfter: HTTP-date', () => {
  // RFC 9110 §5.6.7: the same instant in the three forms.
  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
    ['RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ['asctime', 'Sun Nov  6 08:49:37 1994'],
  ])('%s %j is measured against the wall clock', (_form, value) => {
    expect(parseRetryAfter(value, NOV_6_1994 - MIN)).toBe(MIN);
    expect(parseRetryAfter(value, NOV_6_1994 - 1)).toBe(1);
    expect(parseRetryAfter(value, NOV_6_1994)).toBe(0);
    expect(parseRetryAfter(value, NOV_6_1994 + 10 * MIN)).toBe(0); // past → 0
  });

  it('the RFC 9110 §10.2.3 Retry-After example date', () => {
    const at = Date.UTC(1999, 11, 31, 23, 59, 59);
    expect(parseRetryAfter('Fri, 31 Dec 1999 23:59:59 GMT', at - 2 * MIN)).toBe(2 * MIN);
    expect(parseRetryAfter('Fri, 31 Dec 1999 23:59:59 GMT', Date.UTC(2026, 0, 1))).toBe(0);
  });

  it('rounds a sub-millisecond wall clock up to whole milliseconds', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOV_6_1994 - 1000.25)).toBe(1001);
  });

  it('applies the RFC 850 two-digit-year rule relative to now', () => {
    // More than 50 years in the future → the previous century (in the past → 0).
    const now2000 = Date.UTC(2000, 11, 15);
    expect(parseRetryAfter('Monday, 01-Jan-51 00:00:00 GMT', now2000)).toBe(0);
    // Exactly 50 years ahead is not "more than 50": stays in the future, saturated.
    expect(parseRetryAfter('Saturday, 01-Jan-50 00:00:00 GMT', now2000)).toBe(MAX_RETRY_AFTER_MS);
    // Within the same century, the near future.
    const now2049 = Date.UTC(2049, 11, 15);
    expect(parseRetryAfter('Saturday, 01-Jan-50 00:00:00 GMT', now2049)).toBe(Date.UTC(2050, 0, 1) - now2049);
    // 50+ years in the past → the next century (1900 would be 99 years back from 1999).
    const now1999 = Date.UTC(1999, 11, 15);
    expect(parseRetryAfter('Saturday, 01-Jan-00 00:00:00 GMT', now1999)).toBe(Date.UTC(2000, 0, 1) - now1999);
  });

  it('saturates a far-future date', () => {
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', NOV_6_1994)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('reads four-digit years below 100 literally (not as 19xx)', () => {
    expect(parseRetryAfter('Mon, 01 Jan 0094 00:00:00 GMT', Date.UTC(1993, 0, 1))).toBe(0);
  });

  it('accepts leap days and a leap second, and names in any case', () => {
    const leap = Date.UTC(2024, 1, 29, 12);
    expect(parseRetryAfter('Thu, 29 Feb 2024 12:00:00 GMT', leap - 1000)).toBe(1000);
    expect(parseRetryAfter('Sat, 29 Feb 2000 00:00:00 GMT', Date.UTC(2000, 1, 28, 23, 59, 59))).toBe(1000);
    expect(parseRetryAfter('Sat, 30 Jun 2012 23:59:60 GMT', Date.UTC(2012, 5, 30, 23, 59, 59))).toBe(1000);
    expect(parseRetryAfter('sun, 06 nov 1994 08:49:37 gmt', NOV_6_1994 - 1000)).toBe(1000);
    expect(parseRetryAfter('SUNDAY, 06-NOV-94 08:49:37 GMT', NOV_6_1994 - 1000)).toBe(1000);
    expect(parseRetryAfter('Sun Nov 6 08:49:37 1994', NOV_6_1994 - 1000)).toBe(1000);
  });

  it('returns null for a date when the wall clock is unusable', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', Number.NaN)).toBeNull();
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', Number.POSITIVE_INFINITY)).toBeNull();
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', 9e15)).toBeNull();
  });

  it('agrees with Date.UTC on generated dates in all three forms', () => {
    const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
    const LONG = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const p2 = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1971, 0, 1) / 1000, max: Date.UTC(2099, 0, 1) / 1000 }),
        fc.integer({ min: 0, max: 20 * 86_400_000 }),
        (sec, ahead) => {
          const at = sec * 1000;
          const d = new Date(at);
          const now = at - ahead;
          const time = `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
          const y = d.getUTCFullYear();
          const forms = [
            d.toUTCString(),
            `${LONG[d.getUTCDay()]}, ${p2(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${p2(y % 100)} ${time} GMT`,
            `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${time} ${y}`,
          ];
          for (const f of forms) expect(parseRetryAfter(f, now), f).toBe(ahead);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('parseRetryAfter: garbage', () => {
  it.each([
    '',
    '   ',
    '-1',
    '-0',
    '+5',
    '1.5',
    '1e3',
    '0x10',
    '120 seconds',
    '12 0',
    'soon',
    '١٢٠', // Arabic-Indic digits are not DIGIT
    'Sun, 06 Nov 1994 08:49:37 UTC',
    'Sun, 06 Nov 1994 08:49:37',
    'Sun, 6 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 94 08:49:37 GMT',
    'Sun, 31 Feb 1994 08:49:37 GMT',
    'Sun, 29 Feb 1900 08:49:37 GMT',
    'Sun, 29 Feb 2023 08:49:37 GMT',
    'Sun, 00 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    'Sun, 06 Nov 1994 08:60:00 GMT',
    'Sun, 06 Nov 1994 08:49:61 GMT',
    'Sun, 06 Foo 1994 08:49:37 GMT',
    'Sonntag, 06 Nov 1994 08:49:37 GMT',
    'Sun, 06-Nov-94 08:49:37 GMT',
    'Sunday, 06 Nov 1994 08:49:37 GMT',
    'Sunday, 06-Nov-1994 08:49:37 GMT',
    'Sun Nov  6 08:49:37 94',
    'Sun Nov 6 08:49:37 1994 GMT',
    'Sun Nov 106 08:49:37 1994',
  ])('%j → null', (value) => {
    expect(parseRetryAfter(value, NOV_6_1994)).toBeNull();
  });

  it('null, undefined and non-strings → null', () => {
    expect(parseRetryAfter(null, 0)).toBeNull();
    expect(parseRetryAfter(undefined, 0)).toBeNull();
    for (const v of [120, {}, [], Symbol('x'), 12n, true]) {
      expect(parseRetryAfter(v as unknown as string, 0)).toBeNull();
    }
  });

  it('never throws, and returns null or an integer delay in [0, MAX] (fast-check)', () => {
    const valid = ['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994', '120'];
    // Valid values with one character replaced, inserted or deleted: near misses exercise the
    // date paths far more than random strings do.
    const mutated = fc
      .tuple(fc.constantFrom(...valid), fc.nat(), fc.string({ maxLength: 2 }), fc.constantFrom('replace', 'insert', 'delete'))
      .map(([s, at, c, op]) => {
        const i = at % (s.length + 1);
        if (op === 'insert') return s.slice(0, i) + c + s.slice(i);
        if (op === 'delete') return s.slice(0, i) + s.slice(i + 1);
        return s.slice(0, i) + c + s.slice(i + 1);
      });
    const input = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.stringMatching(/^[0-9 ,:A-Za-z-]{0,40}$/), mutated, fc.anything());
    const clock = fc.oneof(fc.double(), fc.integer({ min: -1e15, max: 1e15 }));
    let parsed = 0;
    fc.assert(
      fc.property(input, clock, (value, now) => {
        const r = parseRetryAfter(value as string, now);
        if (r !== null) {
          parsed++;
          expect(Number.isInteger(r) && r >= 0 && r <= MAX_RETRY_AFTER_MS).toBe(true);
        }
      }),
      { seed: SEED, numRuns: 5000 },
    );
    // The run must have reached the accepting paths, not only the rejecting ones.
    expect(parsed).toBeGreaterThan(100);
  });
});
