/**
 * The near-duplicate panel's logic, free of the DOM.
 *
 * `compareTexts` is the scheduler's change verdict (DESIGN §6, §8) on two versions of a
 * page: content fingerprints (xxHash64 of the whitespace-normalized text) decide NoChange;
 * otherwise the 64-bit simhashes decide Cosmetic (Hamming ≤ 3) or Real. `clusterDocs` puts a
 * list of documents into near-duplicate clusters: every document's simhash goes into a
 * NearDupIndex (permuted tables, exact recall at distance ≤ 3), each document asks the index
 * for all its neighbours, and union–find joins the pairs, so a chain of near pairs forms one
 * cluster even when its ends are further apart than 3 bits.
 */
import {
  CHANGE_KIND_NAMES,
  ChangeKind,
  NEAR_DUP_DISTANCE,
  NearDupIndex,
  classifyChange,
  contentFp,
  hamming,
  simhashTextBatch,
} from '../../src/browser.js';

/** 16 lowercase hex digits of a u64. */
export function hex64(v: bigint): string {
  return v.toString(16).padStart(16, '0');
}

/** The page's account of two texts. */
export interface TextComparison {
  readonly simhashA: string;
  readonly simhashB: string;
  readonly fingerprintA: string;
  readonly fingerprintB: string;
  /** Hamming distance of the simhashes, 0–64. */
  readonly distance: number;
  /** `NoChange`, `Cosmetic` or `Real`. */
  readonly verdict: string;
  /** One sentence saying which rule decided the verdict. */
  readonly explanation: string;
}

/** Compares a stored version `a` with a fresh fetch `b`. */
export function compareTexts(a: string, b: string): TextComparison {
  const [simA, simB] = simhashTextBatch([a, b]);
  const fpA = contentFp(a);
  const fpB = contentFp(b);
  const distance = hamming(simA!, simB!);
  const kind = classifyChange(fpA, fpB, simA!, simB!);
  let explanation: string;
  if (kind === ChangeKind.NoChange) explanation = 'equal content fingerprints: the same text once whitespace is normalized';
  else if (simA === 0n || simB === 0n) explanation = 'a text without words has no simhash signal, so any difference counts as real';
  else if (kind === ChangeKind.Cosmetic) {
    explanation = `different text, simhashes within ${NEAR_DUP_DISTANCE} bits: a cosmetic change the change-rate estimator ignores`;
  } else explanation = `simhashes ${distance} bits apart (more than ${NEAR_DUP_DISTANCE}): a real change`;
  return {
    simhashA: hex64(simA!),
    simhashB: hex64(simB!),
    fingerprintA: hex64(fpA),
    fingerprintB: hex64(fpB),
    distance,
    verdict: CHANGE_KIND_NAMES[kind] ?? String(kind),
    explanation,
  };
}

/** Splits the list box's text into documents at lines holding only `---`; blank documents are dropped. */
export function splitDocs(text: string): string[] {
  return text
    .split(/\r?\n[ \t]*---[ \t]*(?:\r?\n|$)/)
    .map((d) => d.trim())
    .filter((d) => d !== '');
}

/** A document inside a cluster. */
export interface ClusterMember {
  /** 0-based position in the input list. */
  readonly index: number;
  readonly simhash: string;
  /** Hamming distance from the cluster's first document. */
  readonly distance: number;
  /** The first words of the document. */
  readonly preview: string;
}

/** Documents joined by chains of near-duplicate pairs; ordered by first member. */
export interface Cluster {
  readonly members: readonly ClusterMember[];
}

function find(parent: Int32Array, i: number): number {
  let r = i;
  while (parent[r]! !== r) r = parent[r]!;
  while (parent[i]! !== r) {
    const next = parent[i]!;
    parent[i] = r;
    i = next;
  }
  return r;
}

/**
 * Clusters `docs` by simhash within distance 3 (transitively). All simhashes go into the
 * index in one batch, keyed by document position (lane 0 of the key); then each document
 * asks for every stored simhash within 3 bits (`findAll`) and is joined to their documents.
 * The index keeps one entry per distinct simhash (the first document's), and a document
 * always finds its own simhash's entry, so documents with equal simhashes join too. One
 * `findAll` call per document is fine for a list a person pastes; a crawler checking a
 * stream of pages would use `findBatch`.
 */
export function clusterDocs(docs: readonly string[]): Cluster[] {
  const n = docs.length;
  const sims = simhashTextBatch(docs);
  const parent = new Int32Array(n).map((_, i) => i);
  const index = new NearDupIndex();
  try {
    const keys = new Uint32Array(n * 4);
    for (let i = 0; i < n; i++) keys[i * 4] = i;
    index.addBatch(sims, keys);
    for (let i = 0; i < n; i++) {
      const near = index.findAll(sims[i]!);
      for (let k = 0; k < near.length; k += 4) {
        const a = find(parent, i);
        const b = find(parent, near[k]!);
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  } finally {
    index.free();
  }
  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const r = find(parent, i);
    const list = byRoot.get(r);
    if (list === undefined) byRoot.set(r, [i]);
    else list.push(i);
  }
  return [...byRoot.values()].map((ids) => ({
    members: ids.map((i) => ({
      index: i,
      simhash: hex64(sims[i]!),
      distance: hamming(sims[ids[0]!]!, sims[i]!),
      preview: preview(docs[i]!),
    })),
  }));
}

function preview(doc: string): string {
  const flat = doc.replace(/\s+/g, ' ');
  return flat.length <= 72 ? flat : `${flat.slice(0, 70)}…`;
}

const BAKERY =
  'Harbor Lights Bakery opens at seven every morning. Fresh sourdough, rye and seeded loaves come out of ' +
  'the oven before eight, and the almond croissants sell out by ten. Our bakers mill the flour on site ' +
  'from grain grown two valleys over, and the starter is older than the shop itself. Visit us on Quay ' +
  'Street, next to the ferry terminal.';
const FERRY =
  'The harbor ferry timetable changes on the first of June. Boats leave every forty minutes on weekdays ' +
  'and every hour at weekends; the last crossing is at eleven at night. Tickets are sold on board and at ' +
  'the kiosk by the pier; children under twelve travel free, and bicycles cost one euro each way.';

/** The sample pair: a bakery page before and after its visitor counter moved (a cosmetic change). */
export const SAMPLE_PAIR: readonly [string, string] = [`${BAKERY} Visitors today: 1204.`, `${BAKERY} Visitors today: 1377.`];

/** Sample documents for list mode: two near-duplicate pairs and two loners. */
export const SAMPLE_DOCS: readonly string[] = [
  SAMPLE_PAIR[0],
  `${FERRY} Weather: sunny.`,
  SAMPLE_PAIR[1],
  `${FERRY} Weather: cloudy.`,
  'Quarterly report: revenue rose four percent while costs held steady across all three regions.',
  'Rye bread prices went up again this week at the covered market.',
];
