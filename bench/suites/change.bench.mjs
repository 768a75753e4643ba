// The change classifier on the labelled corpus (issue 21): test/fixtures/change-corpus.mjs,
// 800 page pairs (real edits and boilerplate churn over four templates, seed 21). Side by
// side in one run: today's rule before churn fingerprints (simhash within 3 bits → Cosmetic)
// and the rule with churn fingerprints (equal masked main text → Cosmetic), as precision and
// recall of the Cosmetic / Real split, per template too. Then what the fingerprint costs: the
// per-page analysis time without and with it (same parse; the masks and one more xxHash64),
// and the stored bytes per URL (one u32×2 column, only in crawls that carry it).
import { churnFp, classifyChange, contentFp, extractLinks, simhashText } from '../../dist/index.js';
import { TEMPLATES, changeCorpus, scoreCorpus } from '../../test/fixtures/change-corpus.mjs';
import { median, printTable } from '../lib/harness.mjs';

const lib = { churnFp, contentFp, extractLinks, simhashText };
const before = (a, b) => classifyChange(a.fp, b.fp, a.sim, b.sim);
const after = (a, b) => classifyChange(a.fp, b.fp, a.sim, b.sim, a.churn, b.churn);

function row(rule, template, s) {
  return {
    rule,
    template,
    pairs: s.pairs,
    'Real recall': s.realRecall,
    'Real precision': s.realPrecision,
    'Cosmetic precision': s.cosmeticPrecision,
    'Cosmetic recall': s.cosmeticRecall,
  };
}

export async function run() {
  const pairs = changeCorpus(21, 800);
  const rows = [];
  for (const [rule, fn] of [
    ['simhash ≤ 3 (before)', before],
    ['churn fingerprint', after],
  ]) {
    rows.push(row(rule, 'all', scoreCorpus(lib, pairs, fn)));
    for (const t of TEMPLATES) rows.push(row(rule, t.name, scoreCorpus(lib, pairs.filter((p) => p.template === t.name), fn)));
  }
  printTable(rows);

  // Analysis cost per page, as HttpFetcher does it: parse (links + text), simhash, [churnFp].
  const pages = pairs.slice(0, 200).map((p) => [p.before, p.url]);
  const time = (withChurn) => {
    const ns = [];
    for (let rep = 0; rep < 5; rep++) {
      const t0 = process.hrtime.bigint();
      for (const [html, url] of pages) {
        const found = extractLinks(html, url, { collectText: true });
        contentFp(html);
        simhashText(found.text ?? '');
        if (withChurn) churnFp(found.mainText ?? '');
      }
      ns.push(Number(process.hrtime.bigint() - t0) / pages.length);
    }
    return median(ns) / 1000;
  };
  time(true); // warm-up
  const base = time(false);
  const withChurn = time(true);
  const cost = [
    { analysis: 'parse + contentFp + simhash (before)', 'µs/page': base, ratio: 1, 'stored bytes/URL': 0 },
    { analysis: '+ churnFp', 'µs/page': withChurn, ratio: withChurn / base, 'stored bytes/URL': 8 },
  ];
  console.log('');
  printTable(cost);
  return { accuracy: rows, cost };
}
