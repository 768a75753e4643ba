import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinModules } from 'node:module';
import { describe, expect, it } from 'vitest';

const srcDir = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
const builtins = new Set(builtinModules);

/** Walks static and dynamic imports from an entry file; returns every specifier reached, by file. */
function importGraph(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const stack = [entry];
  const pattern = /(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    const text = readFileSync(file, 'utf8');
    const specs: string[] = [];
    for (const m of text.matchAll(pattern)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      specs.push(spec);
      if (spec.startsWith('.')) stack.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
    }
    seen.set(file, specs);
  }
  return seen;
}

describe('the browser entry', () => {
  it('reaches no node: or Node built-in import', () => {
    const graph = importGraph(resolve(srcDir, 'browser.ts'));
    expect(graph.size).toBeGreaterThan(3);
    const offenders: string[] = [];
    for (const [file, specs] of graph) {
      for (const s of specs) if (s.startsWith('node:') || builtins.has(s)) offenders.push(`${file}: ${s}`);
    }
    expect(offenders).toEqual([]);
  });

  it('is what the package exports map gives browsers', () => {
    const pkg = JSON.parse(readFileSync(resolve(srcDir, '../package.json'), 'utf8')) as {
      exports: Record<string, Record<string, string>>;
    };
    expect(pkg.exports['.']!['browser']).toBe('./dist/browser.js');
    expect(pkg.exports['.']!['node']).toBe('./dist/index.js');
  });

  it('the Node entry does register the sync loader (control for the walk above)', () => {
    const graph = importGraph(resolve(srcDir, 'index.ts'));
    const all = [...graph.values()].flat();
    expect(all).toContain('node:fs');
  });
});
