/**
 * The demo page: wires the three panels to the DOM. The logic lives in DOM-free modules
 * beside this one (urldedup, neardup, stream), which the Node tests exercise directly; this
 * file reads inputs, times the calls (the page is the outermost layer, so it owns the clock),
 * renders results and keeps the page usable from the keyboard and by screen readers: every
 * control has a label, results land in aria-live regions, and buttons stay disabled until the
 * core has loaded.
 *
 * Each results region also carries its numbers as data-* attributes (data-unique, data-state…),
 * the stable surface the browser test reads instead of parsing prose.
 */
import { loadCore } from '../../src/browser.js';
import { type CanonRule, type RuleHit } from './explain.js';
import type { FromWorker, ToWorker } from './messages.js';
import { SAMPLE_DOCS, SAMPLE_PAIR, clusterDocs, compareTexts, splitDocs } from './neardup.js';
import type { StreamProgress, StreamReport } from './stream.js';
import { SyntheticUrls } from './synth.js';
import { type UrlDedupReport, dedupUrls } from './urldedup.js';

/** The core sits next to the bundle; served as application/wasm it compiles while streaming. */
const wasmUrl = new URL('meguri_core.wasm', import.meta.url);
const fmt = new Intl.NumberFormat('en');
const fmt1 = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });
/** Groups and rejected lines rendered at most (the counts above them are always complete). */
const RENDER_LIMIT = 200;
/** Rows of the canonical-URL / key table rendered at most. */
const KEY_ROWS = 1000;

function byId<T extends HTMLElement>(id: string, kind: { new (): T }): T {
  const el = document.getElementById(id);
  if (!(el instanceof kind)) throw new Error(`demo page: #${id} is missing or not a ${kind.name}`);
  return el;
}

/** Builds an element with text and attributes. */
function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

/** `n` with its noun, pluralized by adding "s" when n ≠ 1. */
function count(n: number, noun: string): string {
  return `${fmt.format(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/** A byte count as B, KiB or MiB. */
function bytes(n: number): string {
  if (n < 1024) return `${fmt.format(Math.round(n))} B`;
  if (n < 1024 * 1024) return `${fmt1.format(n / 1024)} KiB`;
  return `${fmt1.format(n / (1024 * 1024))} MiB`;
}

function setData(el: HTMLElement, data: Record<string, string | number | boolean>): void {
  for (const [k, v] of Object.entries(data)) el.dataset[k] = String(v);
}

function ruleChip(hit: RuleHit | CanonRule): HTMLElement {
  const text = typeof hit === 'string' ? hit : hit.detail === undefined ? hit.rule : `${hit.rule}: ${hit.detail}`;
  return h('span', { class: 'rule' }, text);
}

// ---------------------------------------------------------------- URL dedup

const urlInput = byId('url-input', HTMLTextAreaElement);
const urlRun = byId('url-run', HTMLButtonElement);
const genCount = byId('gen-count', HTMLInputElement);
const genRun = byId('gen-run', HTMLButtonElement);
const urlResults = byId('url-results', HTMLDivElement);
const urlSummary = byId('url-summary', HTMLParagraphElement);
const urlDetails = byId('url-details', HTMLDivElement);
const urlGroups = byId('url-groups', HTMLOListElement);
const urlGroupCount = byId('url-group-count', HTMLSpanElement);
const urlRejected = byId('url-rejected', HTMLUListElement);
const urlRejectedCount = byId('url-rejected-count', HTMLSpanElement);
const urlKeys = byId('url-keys', HTMLTableElement);

function renderUrlReport(r: UrlDedupReport, ms: number): void {
  const perSec = r.lines > 0 ? (r.lines / Math.max(ms, 0.001)) * 1000 : 0;
  const filterBits = r.unique > 0 ? r.seen.filterBits / r.unique : 0;
  const exactBytes = r.unique > 0 ? r.seen.exactBytes / r.unique : 0;
  urlSummary.textContent =
    `${count(r.lines, 'line')}: ${fmt.format(r.unique)} unique, ${count(r.duplicates, 'duplicate')} in ` +
    `${count(r.groups.length, 'group')}, ${fmt.format(r.rejected.length)} rejected. ` +
    `${fmt.format(Math.round(perSec))} URLs/s. Seen-set: filter ${bytes(r.seen.filterBits / 8)} ` +
    `(${fmt1.format(filterBits)} bits/URL), exact set ${bytes(r.seen.exactBytes)} (${fmt1.format(exactBytes)} bytes/URL).`;
  setData(urlResults, {
    state: 'done',
    lines: r.lines,
    unique: r.unique,
    duplicates: r.duplicates,
    groups: r.groups.length,
    rejected: r.rejected.length,
    urlsPerSec: Math.round(perSec),
    filterBitsPerUrl: filterBits.toFixed(2),
  });

  urlGroupCount.textContent = `(${fmt.format(r.groups.length)})`;
  const groups = r.groups.slice(0, RENDER_LIMIT).map((g) => {
    const members = g.members.map((m, i) =>
      h(
        'li',
        { 'data-line': String(m.line) },
        `line ${m.line}: `,
        h('code', {}, m.raw),
        ' ',
        ...(i === 0 ? [h('span', { class: 'kept' }, 'kept')] : []),
        ...m.rules.map(ruleChip),
      ),
    );
    return h(
      'li',
      { 'data-canonical': g.canonical, 'data-key': g.key, 'data-size': String(g.members.length) },
      h('code', {}, g.canonical),
      ` — ${g.members.length} lines, merged by `,
      ...g.mergedBy.map((rule) => ruleChip(rule)),
      h('ul', {}, ...members),
    );
  });
  if (r.groups.length > RENDER_LIMIT) groups.push(h('li', {}, `… and ${fmt.format(r.groups.length - RENDER_LIMIT)} more groups`));
  urlGroups.replaceChildren(...groups);

  urlRejectedCount.textContent = `(${fmt.format(r.rejected.length)})`;
  const rejected = r.rejected
    .slice(0, RENDER_LIMIT)
    .map((x) =>
      h('li', { 'data-line': String(x.line), 'data-reason': x.reason }, `line ${x.line}: `, h('code', {}, x.raw), ' — ', h('span', { class: 'reason' }, x.reason)),
    );
  if (r.rejected.length > RENDER_LIMIT) rejected.push(h('li', {}, `… and ${fmt.format(r.rejected.length - RENDER_LIMIT)} more`));
  urlRejected.replaceChildren(...rejected);

  const rows = r.urls.slice(0, KEY_ROWS).map((u) => h('tr', { 'data-key': u.key }, h('td', {}, h('code', {}, u.canonical)), h('td', {}, h('code', {}, u.key))));
  urlKeys.tBodies[0]!.replaceChildren(...rows);
  urlDetails.hidden = false;
}

function runUrlDedup(): void {
  urlResults.setAttribute('aria-busy', 'true');
  try {
    const t0 = performance.now();
    const report = dedupUrls(urlInput.value);
    renderUrlReport(report, performance.now() - t0);
  } catch (err) {
    urlSummary.textContent = `Error: ${err instanceof Error ? err.message : String(err)}`;
    setData(urlResults, { state: 'error' });
  } finally {
    urlResults.setAttribute('aria-busy', 'false');
  }
}

let genSeed = 1;
function generateList(): void {
  const n = Math.min(200_000, Math.max(1, Math.floor(Number(genCount.value) || 0)));
  genCount.value = String(n);
  const synth = new SyntheticUrls({ seed: genSeed++ });
  urlInput.value = synth.fill([], n).join('\n');
  runUrlDedup();
}

urlRun.addEventListener('click', runUrlDedup);
genRun.addEventListener('click', generateList);
urlInput.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !urlRun.disabled) {
    e.preventDefault();
    runUrlDedup();
  }
});
urlInput.addEventListener('dragover', (e) => {
  e.preventDefault();
  urlInput.classList.add('dragging');
});
urlInput.addEventListener('dragleave', () => urlInput.classList.remove('dragging'));
urlInput.addEventListener('drop', (e) => {
  e.preventDefault();
  urlInput.classList.remove('dragging');
  const dt = e.dataTransfer;
  if (dt === null) return;
  const files = Array.from(dt.files);
  if (files.length === 0) {
    const text = dt.getData('text/plain');
    if (text !== '') urlInput.value = (urlInput.value === '' ? '' : urlInput.value.replace(/\n?$/, '\n')) + text;
    return;
  }
  void Promise.all(files.map((f) => f.text())).then((texts) => {
    urlInput.value = texts.join('\n');
    if (!urlRun.disabled) runUrlDedup();
  });
});

// ---------------------------------------------------------------- near-duplicate text

const textA = byId('text-a', HTMLTextAreaElement);
const textB = byId('text-b', HTMLTextAreaElement);
const textRun = byId('text-run', HTMLButtonElement);
const textSample = byId('text-sample', HTMLButtonElement);
const textResult = byId('text-result', HTMLDivElement);
const docsInput = byId('docs-input', HTMLTextAreaElement);
const docsRun = byId('docs-run', HTMLButtonElement);
const docsSample = byId('docs-sample', HTMLButtonElement);
const docsResult = byId('docs-result', HTMLDivElement);
const docsSummary = byId('docs-summary', HTMLParagraphElement);
const docsClusters = byId('docs-clusters', HTMLOListElement);

function facts(pairs: readonly (readonly [string, string])[]): HTMLElement {
  return h('dl', { class: 'facts' }, ...pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function runCompare(): void {
  try {
    const c = compareTexts(textA.value, textB.value);
    textResult.replaceChildren(
      h('p', { class: 'summary' }, 'Verdict: ', h('span', { class: `verdict-${c.verdict}` }, c.verdict), ` (Hamming distance ${c.distance} of 64 bits)`),
      facts([
        ['simhash A', c.simhashA],
        ['simhash B', c.simhashB],
        ['Hamming distance', String(c.distance)],
        ['content fingerprint A', c.fingerprintA],
        ['content fingerprint B', c.fingerprintB],
        ['rule', c.explanation],
      ]),
    );
    setData(textResult, { state: 'done', verdict: c.verdict, distance: c.distance, simhashA: c.simhashA, simhashB: c.simhashB });
  } catch (err) {
    textResult.replaceChildren(h('p', { class: 'summary' }, `Error: ${err instanceof Error ? err.message : String(err)}`));
    setData(textResult, { state: 'error' });
  }
}

function runClusters(): void {
  try {
    const docs = splitDocs(docsInput.value);
    const clusters = clusterDocs(docs);
    const multi = clusters.filter((c) => c.members.length > 1);
    const items = clusters.map((c) =>
      h(
        'li',
        { 'data-size': String(c.members.length), 'data-members': c.members.map((m) => m.index + 1).join(',') },
        `${c.members.length === 1 ? 'Alone' : `${c.members.length} near-duplicates`}: `,
        h(
          'ul',
          {},
          ...c.members.map((m) =>
            h('li', {}, `document ${m.index + 1} `, h('code', {}, m.simhash), m.distance > 0 ? ` (distance ${m.distance} from the first)` : '', ` — ${m.preview}`),
          ),
        ),
      ),
    );
    docsSummary.textContent =
      `${count(docs.length, 'document')} in ${count(clusters.length, 'cluster')}; ` +
      `${fmt.format(multi.length)} ${multi.length === 1 ? 'holds' : 'hold'} near-duplicates.`;
    docsClusters.replaceChildren(...items);
    setData(docsResult, { state: 'done', documents: docs.length, clusters: clusters.length, nearClusters: multi.length });
  } catch (err) {
    docsSummary.textContent = `Error: ${err instanceof Error ? err.message : String(err)}`;
    docsClusters.replaceChildren();
    setData(docsResult, { state: 'error' });
  }
}

textRun.addEventListener('click', runCompare);
textSample.addEventListener('click', () => {
  textA.value = SAMPLE_PAIR[0];
  textB.value = SAMPLE_PAIR[1];
  textA.focus();
});
docsRun.addEventListener('click', runClusters);
docsSample.addEventListener('click', () => {
  docsInput.value = SAMPLE_DOCS.join('\n---\n');
  docsInput.focus();
});

// ---------------------------------------------------------------- 10 million URLs

const bigCount = byId('big-count', HTMLInputElement);
const bigRun = byId('big-run', HTMLButtonElement);
const bigCancel = byId('big-cancel', HTMLButtonElement);
const bigProgress = byId('big-progress', HTMLProgressElement);
const bigStatus = byId('big-status', HTMLParagraphElement);
const bigResult = byId('big-result', HTMLDivElement);
let worker: Worker | undefined;
let bigTotal = 0;

function compact(n: number): string {
  return n >= 1e6 ? `${fmt1.format(n / 1e6)} million` : fmt.format(n);
}

function bigLabel(): void {
  const n = Math.floor(Number(bigCount.value) || 0);
  bigRun.textContent = `Run ${n > 0 ? compact(n) : '…'} URLs`;
}

function showProgress(p: StreamProgress): void {
  bigProgress.value = bigTotal > 0 ? p.done / bigTotal : 0;
  bigProgress.textContent = `${Math.floor((p.done / Math.max(bigTotal, 1)) * 100)} %`;
  const rate = p.elapsedMs > 0 ? (p.done / p.elapsedMs) * 1000 : 0;
  bigStatus.textContent = `${compact(p.done)} of ${compact(bigTotal)} URLs, ${compact(p.unique)} unique, ${fmt.format(Math.round(rate))} URLs/s`;
  setData(bigResult, { done: p.done });
}

function finishBig(): void {
  bigRun.disabled = false;
  bigCancel.disabled = true;
  bigCount.disabled = false;
}

function showReport(r: StreamReport): void {
  finishBig();
  bigProgress.value = r.done / r.total;
  const head = r.cancelled ? `Cancelled after ${fmt.format(r.done)} URLs.` : `${fmt.format(r.done)} URLs in ${fmt1.format(r.elapsedMs / 1000)} s.`;
  bigResult.replaceChildren(
    h('p', { class: 'summary' }, `${head} ${fmt.format(Math.round(r.urlsPerSec))} URLs/s, ${fmt1.format(r.bytesPerUrl)} bytes per unique URL.`),
    facts([
      ['URLs processed', fmt.format(r.done)],
      ['unique (seen-set)', fmt.format(r.unique)],
      ['unique (generator)', fmt.format(r.expectedUnique)],
      ['rejected', fmt.format(r.rejected)],
      ['throughput', `${fmt.format(Math.round(r.urlsPerSec))} URLs/s end to end (generating the URLs included)`],
      ['dedup pipeline', `${fmt.format(Math.round(r.pipelineUrlsPerSec))} URLs/s (canonicalize + key + seen-set, generation excluded)`],
      [
        'time per phase',
        `generate ${fmt1.format(r.phaseMs.generate / 1000)} s, canonicalize ${fmt1.format(r.phaseMs.canonicalize / 1000)} s, ` +
          `key ${fmt1.format(r.phaseMs.key / 1000)} s, seen-set ${fmt1.format(r.phaseMs.seen / 1000)} s`,
      ],
      ['Bloom filter', `${fmt1.format(r.filterBitsPerUrl)} bits/URL, observed false-positive rate ${(r.observedFpr * 100).toFixed(2)} %`],
      ['exact set', `${fmt1.format(r.exactBytesPerUrl)} bytes/URL`],
      ['total', `${fmt1.format(r.bytesPerUrl)} bytes/URL`],
    ]),
  );
  setData(bigResult, {
    state: r.cancelled ? 'cancelled' : 'done',
    done: r.done,
    unique: r.unique,
    expected: r.expectedUnique,
    rejected: r.rejected,
    urlsPerSec: Math.round(r.urlsPerSec),
    pipelineUrlsPerSec: Math.round(r.pipelineUrlsPerSec),
    bytesPerUrl: r.bytesPerUrl.toFixed(2),
    filterBitsPerUrl: r.filterBitsPerUrl.toFixed(2),
    elapsedMs: Math.round(r.elapsedMs),
  });
}

function onWorkerMessage(e: MessageEvent<FromWorker>): void {
  const msg = e.data;
  if (msg.type === 'progress') showProgress(msg.progress);
  else if (msg.type === 'done') showReport(msg.report);
  else if (msg.type === 'error') {
    finishBig();
    bigResult.replaceChildren(h('p', { class: 'summary' }, `Error: ${msg.message}`));
    setData(bigResult, { state: 'error' });
  }
}

function post(msg: ToWorker): void {
  worker?.postMessage(msg);
}

function runBig(): void {
  const n = Math.floor(Number(bigCount.value) || 0);
  if (!(n >= 1 && n <= 100_000_000)) {
    bigResult.replaceChildren(h('p', { class: 'summary' }, 'Enter a number of URLs between 1 and 100,000,000.'));
    bigCount.focus();
    return;
  }
  if (worker === undefined) {
    worker = new Worker(new URL('worker.js', import.meta.url), { type: 'module', name: 'meguri-10m' });
    worker.onmessage = onWorkerMessage;
    worker.onerror = (e) => {
      finishBig();
      bigResult.replaceChildren(h('p', { class: 'summary' }, `Worker error: ${e.message}`));
      setData(bigResult, { state: 'error' });
    };
  }
  bigTotal = n;
  bigRun.disabled = true;
  bigCount.disabled = true;
  bigCancel.disabled = false;
  bigProgress.value = 0;
  bigStatus.textContent = 'Starting…';
  setData(bigResult, { state: 'running', done: 0 });
  bigResult.replaceChildren(h('p', { class: 'summary' }, `Running ${compact(n)} URLs…`));
  post({ type: 'start', wasmUrl: wasmUrl.href, options: { total: n } });
  bigCancel.focus();
}

bigCount.addEventListener('input', bigLabel);
bigRun.addEventListener('click', runBig);
bigCancel.addEventListener('click', () => {
  post({ type: 'cancel' });
  bigCancel.disabled = true;
  bigStatus.textContent = 'Cancelling after the current batch…';
});

// ---------------------------------------------------------------- boot

const status = byId('core-status', HTMLParagraphElement);

async function boot(): Promise<void> {
  bigLabel();
  if ('serviceWorker' in navigator && window.isSecureContext) {
    navigator.serviceWorker.register(new URL('sw.js', import.meta.url)).catch((err: unknown) => {
      console.warn('meguri demo: service worker not registered; the page still works online', err);
    });
  }
  try {
    const t0 = performance.now();
    const core = await loadCore(wasmUrl);
    const ms = performance.now() - t0;
    status.textContent = `WebAssembly core loaded in ${fmt.format(Math.round(ms))} ms (${fmt.format(Math.round(core.memoryBytes / 1024))} KiB of linear memory).`;
    status.dataset['state'] = 'ready';
    for (const b of [urlRun, genRun, textRun, docsRun, bigRun]) b.disabled = false;
    document.documentElement.dataset['ready'] = 'true';
  } catch (err) {
    status.textContent = `The WebAssembly core did not load: ${err instanceof Error ? err.message : String(err)}`;
    status.dataset['state'] = 'error';
  }
}

void boot();
