/**
 * The churn fingerprint (DESIGN §8, issue 21): a hash of a page's main text that boilerplate
 * churn does not move and an edit of the text does.
 *
 * Problem. The simhash is built to be blind to small edits: adding a 27-word paragraph to a
 * 3,000-character page moved it by 2 bits, under the near-duplicate threshold of 3, so the
 * change classifier called a real edit cosmetic. Yet the simhash is all that told churn (a
 * rotating ad, a view counter, a CSRF token) from an edit. The churn fingerprint separates
 * the two by *where* and *what* changed rather than by *how much*:
 *
 *   churnFp(page) = xxHash64(normalizeBody(mask(mainText(page))), seed 0)
 *
 * - `mainText` (src/fetch/links.ts, the same parse as the links and the simhash): the visible
 *   text inside `<main>`/`<article>` when the page has one, else all visible text, without
 *   navigation, page-level header/footer, asides, forms, iframes and ad slots. Tokens in
 *   attributes (session ids in links, CSRF inputs, cache-busting `?v=`) are never text.
 * - `mask` replaces, inside that text, the strings that change on every request: times of day
 *   (`22:32`, `10:05:09 pm`), timestamps with a time (`2026-12-01T22:32:19Z`), relative times
 *   (`5 minutes ago`, `just now`), render durations (`in 0.23 s`, `took 12ms`), counters (a
 *   number next to `views`, `comments`, `likes`, `visitors`, `online`, … either side),
 *   and long mixed letter-and-digit tokens (request ids, hashes: 16+ characters).
 *   Prices, dates without a time, headings and sentences are kept: changing them is an edit.
 *
 * Equal churn fingerprints with different content fingerprints are churn (Cosmetic); different
 * ones are an edit (Real). `changeKindLanes` applies this rule when both sides carry the
 * fingerprint and falls back to the simhash rule when either does not (data from before the
 * fingerprint existed). The measured split on the labelled corpus in test/fixtures
 * (change-corpus.mjs) is in test/dedup/churn.test.ts and `npm run bench change`.
 *
 * Like `contentFp`, the definition is a format: fingerprints are stored in partitions, so a
 * change to `mask` or to `mainText` reads as one real change per page on the next crawl.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { contentFp } from './content.js';

/** Words a counter stands next to ("1,234 views", "Comments: 17"). */
const COUNTER_WORDS =
  'views?|viewed|reads?|plays?|listens?|comments?|replies|reply|answers?|likes?|dislikes?|shares?|retweets?|reposts?|followers?|subscribers?|' +
  'visitors?|visits?|online|watching|votes?|upvotes?|points|reviews?|ratings?|downloads?|installs?|stars?|clicks?|impressions?|hits|reactions?|members?|users?\\s+online|people\\s+(?:viewing|watching)';
const NUM = '\\d[\\d,.\\u00a0\\u202f]*\\s?[kmb]?\\+?';

/** In order: each pattern's matches become its mark. Longest shapes first (a timestamp before its time). */
const MASKS: readonly (readonly [RegExp, string])[] = [
  // ISO-like timestamps with a time of day: 2026-12-01T22:32:19Z, 2026/12/01 22:32
  [/\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}[t\s]+\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:z|utc|gmt|[+-]\d{2}:?\d{2})?/gi, '#ts'],
  // Times of day: 22:32, 10:05:09 pm, 9:41 a.m., 22:32 UTC
  [/\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s*[ap]\.?m\.?)?(?:\s*(?:z|utc|gmt|[a-z]{1,2}[sd]t)\b)?/gi, '#t'],
  // Relative times: 5 minutes ago, an hour ago, just now
  [/\b(?:\d+|an?|one|a\s+few)\s+(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\s+ago\b|\bjust\s+now\b/gi, '#ago'],
  // Render durations: in 0.23 s, took 12ms, 0.041 seconds
  [/\b(?:in|took)\s+\d+(?:[.,]\d+)?\s*(?:ms|milliseconds?|s|secs?|seconds?)\b/gi, '#dur'],
  // Counters, number first (1,234 views) or label first (Comments: 17)
  // (not after a digit, a decimal point or a currency sign: "$206.70 Viewed 4,975 times" keeps its cents)
  [new RegExp(`(?<![\\w$€£¥.,])${NUM}\\s*(?:${COUNTER_WORDS})\\b`, 'gi'), '#n'],
  [new RegExp(`\\b(?:${COUNTER_WORDS})\\s*[:(]?\\s*${NUM}`, 'gi'), '#n'],
  // Long tokens mixing letters and digits: request ids, session ids, hashes
  [/\b(?=[a-z_-]*\d)(?=[\d_-]*[a-z])[a-z\d_-]{16,}\b/gi, '#tok'],
  // Shorter hex ids mixing letters and digits: build ids, short commit hashes (3f2a9c1)
  [/\b(?=[a-f]*\d)(?=\d*[a-f])[\da-f]{7,15}\b/gi, '#tok'],
];

/**
 * `text` with its per-request churn masked (see the module comment): what `churnFp` hashes.
 * Pure; exported so a failure can show what was compared.
 */
export function maskChurn(text: string): string {
  if (typeof text !== 'string') throw new InvalidArgumentError(`maskChurn: expected a string, received ${typeof text}`);
  let s = text;
  for (const [re, mark] of MASKS) s = s.replace(re, mark);
  return s;
}

/**
 * The churn fingerprint of a page's main text (`ExtractedLinks.mainText`): xxHash64 of the
 * whitespace-normalized masked text. Two fetches with equal churn fingerprints differ only in
 * boilerplate; `changeKindLanes` reads that as Cosmetic.
 */
export function churnFp(mainText: string): bigint {
  if (typeof mainText !== 'string') throw new InvalidArgumentError(`churnFp: expected the main text as a string, received ${typeof mainText}`);
  return contentFp(maskChurn(mainText));
}
