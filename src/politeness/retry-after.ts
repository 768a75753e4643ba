/**
 * Retry-After (RFC 9110 §10.2.3) → a delay in milliseconds, shared by the frontier policy and
 * the governor.
 *
 *     Retry-After  = HTTP-date / delay-seconds
 *     delay-seconds = 1*DIGIT
 *     HTTP-date    = IMF-fixdate / obs-date                      (§5.6.7)
 *     IMF-fixdate  = day-name "," SP 2DIGIT SP month SP 4DIGIT SP time SP "GMT"
 *                    Sun, 06 Nov 1994 08:49:37 GMT
 *     rfc850-date  = day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time SP "GMT"
 *                    Sunday, 06-Nov-94 08:49:37 GMT
 *     asctime-date = day-name SP month SP ( 2DIGIT / ( SP 1DIGIT )) SP time SP 4DIGIT
 *                    Sun Nov  6 08:49:37 1994
 *
 * Choices, each deliberate:
 * - A date is measured against an explicit wall-clock reading (`nowWallMs`), never against a
 *   monotonic clock; a date in the past gives 0.
 * - RFC 850's two-digit year is placed in the century that puts it within 50 years of now: a
 *   year that would land more than 50 years in the future is read as the same two digits in
 *   the previous century (the §5.6.7 rule), and symmetrically one 50 or more years in the past
 *   moves forward a century.
 * - Parsing is lenient where leniency cannot change the meaning: names are matched without
 *   regard to case, runs of spaces count as one, surrounding spaces and tabs are ignored, and
 *   the day name is checked to be a day name but not checked against the date.
 * - Every result is clamped to `MAX_RETRY_AFTER_MS` = 2^31 − 1 ms (about 24.8 days). That is
 *   the longest delay `setTimeout` honours — past it timers fire at once — so a hostile
 *   "Retry-After: 99999999999" can never wrap around into "retry immediately".
 * - Anything else (empty, signs, decimals, exponents, trailing text, impossible dates such as
 *   31 Feb or 24:00:00, non-strings) gives `null`. The function never throws.
 */

/** The largest delay `parseRetryAfter` returns: 2^31 − 1 ms, the `setTimeout` limit. */
export const MAX_RETRY_AFTER_MS = 2147483647;

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12,
};
const SHORT_DAYS = new Set(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
const LONG_DAYS = new Set(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);

const MS_PER_DAY = 86_400_000;

const DELTA_SECONDS = /^[0-9]+$/;
const IMF_FIXDATE = /^([a-z]{3}), +([0-9]{2}) +([a-z]{3}) +([0-9]{4}) +([0-9]{2}):([0-9]{2}):([0-9]{2}) +gmt$/i;
const RFC850_DATE = /^([a-z]{6,9}), +([0-9]{2})-([a-z]{3})-([0-9]{2}) +([0-9]{2}):([0-9]{2}):([0-9]{2}) +gmt$/i;
const ASCTIME_DATE = /^([a-z]{3}) +([a-z]{3}) +([0-9]{1,2}) +([0-9]{2}):([0-9]{2}):([0-9]{2}) +([0-9]{4})$/i;
const EDGE_SPACE = /^[ \t]+|[ \t]+$/g;
const LEADING_ZEROS = /^0+/;
/** The range of an ECMAScript Date: ±10^8 days around the epoch. */
const MAX_DATE_MS = 8.64e15;

/** Days from 1970-01-01 to the given proleptic Gregorian date (month 1–12). */
function daysFromCivil(year: number, month: number, day: number): number {
  // Shift the year to start in March so the leap day is the last day of the shifted year;
  // then count whole 400-year eras (146 097 days each), years, and days within the year.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const shiftedMonth = month > 2 ? month - 3 : month + 9;
  const dayOfYear = Math.floor((153 * shiftedMonth + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/**
 * Days in `month` (1–12) of `year`, proleptic Gregorian: the day-in-month rule of Retry-After's
 * HTTP-date and a sitemap's `<lastmod>` (in either of its forms), which refuse a date the month
 * does not have rather than roll it over as `Date.UTC` and `Date.parse` do. (Last-Modified and
 * Date, `httpDateSeconds` in src/fetch/http.ts, still go through `Date.parse`.)
 */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The proleptic Gregorian year containing a Unix-ms instant. */
function yearOf(wallMs: number): number {
  return new Date(wallMs).getUTCFullYear();
}

/** Unix ms of a validated date-time, or null when a field is out of range. Seconds may be 60 (leap second). */
function instant(year: number, monthName: string, day: number, h: number, m: number, s: number): number | null {
  const month = MONTHS[monthName.toLowerCase()];
  if (month === undefined) return null;
  if (day < 1 || day > daysInMonth(year, month) || h > 23 || m > 59 || s > 60) return null;
  return daysFromCivil(year, month, day) * MS_PER_DAY + ((h * 60 + m) * 60 + s) * 1000;
}

function clampDelay(ms: number): number {
  if (ms <= 0) return 0;
  return ms >= MAX_RETRY_AFTER_MS ? MAX_RETRY_AFTER_MS : Math.ceil(ms);
}

/** Parses an HTTP-date in any of the three forms to Unix ms, or null. */
function parseHttpDate(text: string, nowWallMs: number): number | null {
  let m = IMF_FIXDATE.exec(text);
  if (m) {
    if (!SHORT_DAYS.has(m[1]!.toLowerCase())) return null;
    return instant(Number(m[4]), m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  m = RFC850_DATE.exec(text);
  if (m) {
    if (!LONG_DAYS.has(m[1]!.toLowerCase())) return null;
    const nowYear = yearOf(nowWallMs);
    let year = nowYear - (nowYear % 100) + Number(m[4]);
    if (year - nowYear > 50) year -= 100;
    else if (nowYear - year >= 50) year += 100;
    return instant(year, m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  m = ASCTIME_DATE.exec(text);
  if (m) {
    if (!SHORT_DAYS.has(m[1]!.toLowerCase())) return null;
    return instant(Number(m[7]), m[2]!, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  return null;
}

/**
 * Parses a Retry-After header value into a delay in milliseconds.
 *
 * - delay-seconds (`"120"`) → `120000`, whatever the wall clock says;
 * - an HTTP-date in IMF-fixdate, RFC 850 or asctime form → the date minus `nowWallMs`, or 0
 *   when the date has passed;
 * - both clamped to `MAX_RETRY_AFTER_MS`;
 * - `null` for an absent, empty or malformed value (including negative and fractional numbers),
 *   and for a date when `nowWallMs` is not a finite number.
 *
 * Never throws, whatever it is given.
 *
 * @param value the raw header value (or `null`/`undefined` when the header is absent).
 * @param nowWallMs the current wall-clock time in Unix milliseconds (only the date forms read it).
 */
export function parseRetryAfter(value: string | null | undefined, nowWallMs: number): number | null {
  if (typeof value !== 'string') return null;
  const text = value.replace(EDGE_SPACE, '');
  if (text === '') return null;
  if (DELTA_SECONDS.test(text)) {
    // Eleven significant digits already exceed the clamp in seconds; never ask Number() for more.
    const digits = text.replace(LEADING_ZEROS, '');
    return digits.length > 10 ? MAX_RETRY_AFTER_MS : clampDelay(Number(digits) * 1000);
  }
  if (typeof nowWallMs !== 'number' || !(Math.abs(nowWallMs) <= MAX_DATE_MS)) return null;
  const at = parseHttpDate(text, nowWallMs);
  return at === null ? null : clampDelay(at - nowWallMs);
}
