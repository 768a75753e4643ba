/**
 * The code cites docs/DESIGN.md by section ("DESIGN §n", "DESIGN §9.5") and the frontier's
 * invariants by number ("invariant 3", "I3"). This test keeps the two in step: every citation
 * in the sources must name a section or invariant the document has, every repository path a
 * comment (or the document) names must exist, and every code name the document's built
 * sections mention must still be in the sources, so a rename cannot leave the design behind.
 * It reads the files as text, so it needs no build.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOC = join(ROOT, 'docs', 'DESIGN.md');
const SELF = fileURLToPath(import.meta.url);

/** Folders whose files may cite the design (scanned recursively). */
const SCANNED = ['src', 'test', 'bench', 'core-rs/src', 'demo', 'scripts'];
const SKIP_DIRS = new Set(['node_modules', 'dist', 'target', 'results', 'fixtures']);
const EXTENSIONS = /\.(ts|mts|mjs|js|rs|sh)$/;

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (!SKIP_DIRS.has(name)) walk(path);
      } else if (EXTENSIONS.test(name) && path !== SELF) {
        out.push(path);
      }
    }
  };
  for (const d of SCANNED) if (existsSync(join(ROOT, d))) walk(join(ROOT, d));
  out.push(join(ROOT, 'README.md'));
  return out;
}

/** Section ids ("3", "9b", "9.5") and invariant numbers the document defines in its headings. */
function designAnchors(markdown: string): { sections: Set<string>; invariants: Set<number> } {
  const sections = new Set<string>();
  const invariants = new Set<number>();
  for (const line of markdown.split('\n')) {
    const h = /^#{2,4}\s+(\d+[a-z]?(?:\.\d+)?)[.\s]/.exec(line);
    if (h === null) continue;
    sections.add(h[1]!);
    const inv = /\(I(\d+)\)/.exec(line);
    if (inv !== null) invariants.add(Number(inv[1]));
  }
  return { sections, invariants };
}

interface Citation {
  readonly kind: 'section' | 'invariant';
  readonly id: string;
  readonly line: number;
}

const SECTION_ID = String.raw`\d+[a-z]?(?:\.\d+)?`;
/** "DESIGN §6", "DESIGN.md §3", "DESIGN §6, §8", "DESIGN §5 and §8". */
const DESIGN_CITE = new RegExp(String.raw`DESIGN(?:\.md)?\s*§\s*(${SECTION_ID})((?:\s*(?:,|and|&)\s*§\s*${SECTION_ID})*)`, 'g');
const FOLLOWING = new RegExp(String.raw`§\s*(${SECTION_ID})`, 'g');
/** "invariant 3", "invariants 1–4 and 6", "invariant I3". */
const INVARIANT_CITE = /\binvariants?\s+I?(\d+)((?:\s*(?:[–-]|,|and)\s*I?\d+)*)/gi;
/** "(I3)" or "I3:" standing alone, the short form the document gives each invariant. */
const SHORT_INVARIANT = /(?:\(|\bDESIGN\s+)I(\d+)\b/g;

/** Every design citation in `text`, with its line number. */
function citations(text: string): Citation[] {
  const out: Citation[] = [];
  const lineAt = (index: number): number => text.slice(0, index).split('\n').length;
  for (const m of text.matchAll(DESIGN_CITE)) {
    const line = lineAt(m.index);
    out.push({ kind: 'section', id: m[1]!, line });
    for (const f of (m[2] ?? '').matchAll(FOLLOWING)) out.push({ kind: 'section', id: f[1]!, line });
  }
  for (const m of text.matchAll(INVARIANT_CITE)) {
    const line = lineAt(m.index);
    const first = Number(m[1]);
    out.push({ kind: 'invariant', id: String(first), line });
    // A range "1–4" names every number in it; a list "1, 3 and 6" names each.
    let prev = first;
    for (const part of (m[2] ?? '').matchAll(/([–-]|,|and)\s*I?(\d+)/g)) {
      const n = Number(part[2]);
      if (part[1] === '–' || part[1] === '-') for (let k = prev + 1; k < n; k++) out.push({ kind: 'invariant', id: String(k), line });
      out.push({ kind: 'invariant', id: String(n), line });
      prev = n;
    }
  }
  for (const m of text.matchAll(SHORT_INVARIANT)) out.push({ kind: 'invariant', id: m[1]!, line: lineAt(m.index) });
  return out;
}

/** Repository paths a file names (`src/…`, `test/…`, …), for the stale-reference check. */
const REPO_PATH = /(?<![\w./-])((?:src|test|bench|core-rs|scripts|demo|docs|wasm|seeds)\/[\w./-]*\w\.(?:ts|rs|mjs|js|json|md|sh|wasm|txt))\b/g;

/** Outputs that scripts write at run time (ignored by git), so they are named but not committed. */
const GENERATED = [/^bench\/results\//];

/** Whether `p` exists from the repository root or from the naming file's folder. */
function pathExists(p: string, fromDir: string): boolean {
  if (GENERATED.some((g) => g.test(p))) return true;
  for (const base of [ROOT, fromDir]) {
    if (existsSync(join(base, p))) return true;
    // ESM import specifiers name the compiled .js of a .ts source.
    if (p.endsWith('.js') && existsSync(join(base, p.slice(0, -3) + '.ts'))) return true;
  }
  return false;
}

/** Text of every file the document describes (TypeScript and Rust sources, benchmarks, scripts, package.json). */
function describedSources(): string {
  const parts: string[] = [readFileSync(join(ROOT, 'package.json'), 'utf8')];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|rs|sh|mjs)$/.test(name)) parts.push(readFileSync(path, 'utf8'));
    }
  };
  // The design cites benchmark knobs (world options, FRONTIER_PARTS) beside the figures they made.
  for (const d of ['src', 'core-rs/src', 'bench', 'scripts']) walk(join(ROOT, d));
  return parts.join('\n');
}

/**
 * The code names in backticks in the document's built sections (a section whose heading says
 * "planned" describes what does not exist yet), reduced to their last identifier:
 * `Frontier#replay` → replay, `seedBatch` → seedBatch.
 */
function namesInBuiltSections(markdown: string): string[] {
  const names = new Set<string>();
  let planned = false;
  for (const line of markdown.split('\n')) {
    if (/^##\s/.test(line)) planned = /planned/i.test(line);
    if (planned) continue;
    for (const m of line.matchAll(/`([A-Za-z_][\w]*(?:[.#][A-Za-z_]\w*)*)/g)) {
      const last = m[1]!.split(/[.#]/).pop()!;
      if (last.length > 2) names.add(last);
    }
  }
  return [...names];
}

describe('docs/DESIGN.md citations', () => {
  const doc = readFileSync(DOC, 'utf8');
  const anchors = designAnchors(doc);
  const files = sourceFiles();

  it('the document has the sections and invariants the code relies on', () => {
    for (const s of ['3', '4', '5', '6', '7', '8', '9', '9.5', '9.6', '9b']) expect(anchors.sections).toContain(s);
    expect([...anchors.invariants].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('finds citations in the forms the code writes them', () => {
    const found = citations('x (DESIGN §6, §8) y\nDESIGN.md §3 z\n// DESIGN §9 invariants 1–4 and 6\n(I5) DESIGN §9b.');
    expect(found.map((c) => `${c.kind}:${c.id}@${c.line}`)).toEqual([
      'section:6@1', 'section:8@1', 'section:3@2', 'section:9@3', 'section:9b@4',
      'invariant:1@3', 'invariant:2@3', 'invariant:3@3', 'invariant:4@3', 'invariant:6@3',
      'invariant:5@4',
    ]);
    // The scan is not vacuous: the repository cites the design in dozens of places.
    const total = files.reduce((n, f) => n + citations(readFileSync(f, 'utf8')).length, 0);
    expect(total).toBeGreaterThan(50);
  });

  it('every cited section and invariant exists', () => {
    const missing: string[] = [];
    for (const file of files) {
      for (const c of citations(readFileSync(file, 'utf8'))) {
        const ok = c.kind === 'section' ? anchors.sections.has(c.id) : anchors.invariants.has(Number(c.id));
        if (!ok) missing.push(`${relative(ROOT, file)}:${c.line} cites ${c.kind} ${c.id}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every code name the built sections mention exists in the sources', () => {
    const sources = describedSources();
    const names = namesInBuiltSections(doc);
    expect(names.length).toBeGreaterThan(40);
    const missing = names.filter((n) => !new RegExp(`(?<![\\w$])${n.replace(/\$/g, '\\$')}(?![\\w$])`).test(sources));
    expect(missing).toEqual([]);
  });

  it('every repository path named in the sources and the document exists', () => {
    const stale: string[] = [];
    for (const file of [...files, DOC]) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(REPO_PATH)) {
        const p = m[1]!;
        if (!pathExists(p, dirname(file))) stale.push(`${relative(ROOT, file)} names ${p}`);
      }
    }
    expect(stale).toEqual([]);
  });
});
