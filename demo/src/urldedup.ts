/**
 * The URL-dedup panel's logic, free of the DOM: a pasted list of lines in, the page's whole
 * report out — unique count, duplicate groups under their canonical form with the rules that
 * merged them, rejected lines with their reason, the key of every canonical URL, and the
 * seen-set's memory figures.
 *
 * Pipeline (the frontier's, in miniature): every non-blank line is canonicalized
 * (`canonicalize`, DESIGN §5), the survivors are keyed in one batch (`urlKeyBatch`) and the
 * keys pass through a fresh seen-set in one `merge` call. A line whose verdict is "seen" is a
 * duplicate of the first line with its key. Rules come from `explainCanonical`.
 */
import { canonicalize, keyToHex, urlKeyBatch } from '../../src/browser.js';
import { type CanonRule, type RuleHit, explainCanonical, mergedBy, rejectReason } from './explain.js';
import { DemoSeenSet, type SeenStats } from './seen.js';

/** One input line that shares its canonical form with an earlier one (or is that earlier one). */
export interface GroupMember {
  /** 1-based line number in the input. */
  readonly line: number;
  /** The line as given (trimmed). */
  readonly raw: string;
  /** The steps that turned it into the canonical form. */
  readonly rules: readonly RuleHit[];
}

/** Lines that canonicalize to one URL: the first occurrence and its duplicates. */
export interface DuplicateGroup {
  readonly canonical: string;
  /** The URLKey, 32 hex digits. */
  readonly key: string;
  /** Every line of the group in input order; the first is the one kept. */
  readonly members: readonly GroupMember[];
  /** Union of the members' rules: what made these spellings one page. */
  readonly mergedBy: readonly CanonRule[];
}

/** A line `canonicalize` refused. */
export interface RejectedLine {
  readonly line: number;
  readonly raw: string;
  readonly reason: string;
}

/** A distinct canonical URL and its key, in first-seen order. */
export interface KeyedUrl {
  readonly canonical: string;
  readonly key: string;
}

/** The report of `dedupUrls`. */
export interface UrlDedupReport {
  /** Non-blank input lines. */
  readonly lines: number;
  /** Lines that canonicalized. */
  readonly accepted: number;
  /** Distinct canonical URLs (seen-set "new" verdicts). */
  readonly unique: number;
  /** Accepted lines that repeated an earlier page. */
  readonly duplicates: number;
  /** Canonical forms shared by two or more lines, in first-seen order. */
  readonly groups: readonly DuplicateGroup[];
  readonly rejected: readonly RejectedLine[];
  /** Every distinct canonical URL with its key. */
  readonly urls: readonly KeyedUrl[];
  /** The seen-set's sizes after the run. */
  readonly seen: SeenStats;
}

/** Splits pasted text into trimmed non-blank lines with their 1-based numbers. */
export function inputLines(text: string): { line: number; raw: string }[] {
  const out: { line: number; raw: string }[] = [];
  const parts = text.split(/\r\n|\n|\r/);
  for (let i = 0; i < parts.length; i++) {
    const raw = parts[i]!.trim();
    if (raw !== '') out.push({ line: i + 1, raw });
  }
  return out;
}

/** Runs the pipeline over `text` (one URL per line). Uses the loaded core; frees what it allocates. */
export function dedupUrls(text: string): UrlDedupReport {
  const lines = inputLines(text);
  const rejected: RejectedLine[] = [];
  const canon: string[] = [];
  const origin: { line: number; raw: string }[] = [];
  for (const l of lines) {
    const c = canonicalize(l.raw);
    if (c === null) rejected.push({ line: l.line, raw: l.raw, reason: rejectReason(l.raw) });
    else {
      canon.push(c);
      origin.push(l);
    }
  }
  const keys = urlKeyBatch(canon);
  const seen = new DemoSeenSet(canon.length);
  try {
    const verdicts = seen.merge(keys);
    const byKey = new Map<string, { first: number; dups: number[] }>();
    const urls: KeyedUrl[] = [];
    const hexes: string[] = new Array<string>(canon.length);
    for (let i = 0; i < canon.length; i++) {
      const hex = keyToHex(keys, i);
      hexes[i] = hex;
      if (verdicts[i] === 1) {
        byKey.set(hex, { first: i, dups: [] });
        urls.push({ canonical: canon[i]!, key: hex });
      } else {
        byKey.get(hex)?.dups.push(i);
      }
    }
    const groups: DuplicateGroup[] = [];
    for (const [hex, g] of byKey) {
      if (g.dups.length === 0) continue;
      const members = [g.first, ...g.dups].map((i) => ({
        line: origin[i]!.line,
        raw: origin[i]!.raw,
        rules: explainCanonical(origin[i]!.raw, canon[i]!),
      }));
      groups.push({ canonical: canon[g.first]!, key: hex, members, mergedBy: mergedBy(members.map((m) => m.rules)) });
    }
    const stats = seen.stats();
    return {
      lines: lines.length,
      accepted: canon.length,
      unique: stats.unique,
      duplicates: canon.length - stats.unique,
      groups,
      rejected,
      urls,
      seen: stats,
    };
  } finally {
    seen.free();
  }
}
