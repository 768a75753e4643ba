// robots.txt: meguri's RFC 9309 matcher vs the robots-parser package, same files, same URLs.
// Parse cost is per file; match cost is per isAllowed() call against an already parsed file,
// which is the hot path (every URL the frontier admits is checked once per robots TTL).
import { createRequire } from 'node:module';
import { parseRobots } from '../../dist/index.js';
import { opsPerSec, printTable } from '../lib/harness.mjs';

const robotsParser = createRequire(import.meta.url)('robots-parser');
const ORIGIN = 'https://www.example.com';

/** A realistic file: a few agent groups, wildcard and anchored rules, a sitemap. */
function realisticFile(rules) {
  const lines = ['User-agent: Googlebot', 'Disallow: /search', 'Allow: /search/about', '', 'User-agent: *'];
  let s = 7;
  for (let i = 0; i < rules; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    const kind = s % 5;
    if (kind === 0) lines.push(`Disallow: /private${i}/`);
    else if (kind === 1) lines.push(`Disallow: /*.pdf$`);
    else if (kind === 2) lines.push(`Allow: /public${i}/*/index.html`);
    else if (kind === 3) lines.push(`Disallow: /*?session=*&ref=${i}`);
    else lines.push(`Disallow: /tmp${i}`);
  }
  lines.push('Crawl-delay: 2', 'Sitemap: https://www.example.com/sitemap.xml');
  return lines.join('\n');
}

function urls(n) {
  const out = [];
  let s = 99;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    const kind = s % 4;
    if (kind === 0) out.push(`${ORIGIN}/private${s % 60}/doc-${i}.html`);
    else if (kind === 1) out.push(`${ORIGIN}/files/report-${i}.pdf`);
    else if (kind === 2) out.push(`${ORIGIN}/public${s % 60}/a/b/index.html`);
    else out.push(`${ORIGIN}/articles/${i}?session=abc&ref=${s % 60}&page=2`);
  }
  return out;
}

export async function run() {
  const rows = [];
  const list = urls(20_000);
  for (const rules of [20, 200]) {
    const text = realisticFile(rules);
    const parseMine = opsPerSec(() => {
      for (let i = 0; i < 200; i++) parseRobots(text, `${ORIGIN}/robots.txt`);
    }, { ops: 200 });
    const parsePeer = opsPerSec(() => {
      for (let i = 0; i < 200; i++) robotsParser(`${ORIGIN}/robots.txt`, text);
    }, { ops: 200 });
    rows.push({ case: `parse, ${rules} rules (${text.length} B)`, 'meguri ops/s': parseMine, 'robots-parser ops/s': parsePeer, ratio: parseMine / parsePeer });
    const mine = parseRobots(text, `${ORIGIN}/robots.txt`);
    const peer = robotsParser(`${ORIGIN}/robots.txt`, text);
    let disagreements = 0;
    for (const u of list) if (mine.isAllowed(u, 'MyBot') !== peer.isAllowed(u, 'MyBot')) disagreements++;
    const matchMine = opsPerSec(() => {
      for (const u of list) mine.isAllowed(u, 'MyBot');
    }, { ops: list.length });
    const matchPeer = opsPerSec(() => {
      for (const u of list) peer.isAllowed(u, 'MyBot');
    }, { ops: list.length });
    rows.push({ case: `isAllowed, ${rules} rules (${disagreements} disagreements)`, 'meguri ops/s': matchMine, 'robots-parser ops/s': matchPeer, ratio: matchMine / matchPeer });
  }
  printTable(rows);
  console.log('ratio = meguri / robots-parser (higher is better for meguri); disagreements on this URL mix should be 0');
  return rows;
}
