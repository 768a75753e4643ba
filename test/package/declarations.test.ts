/**
 * The published type declarations name only what a user's install has: the package's own
 * files, `dependencies`, and Node's built-ins. An optional peer dependency (prom-client,
 * playwright-core) or a dev dependency named there fails the type check of every TypeScript
 * user who does not have it — the compiler checks a library's .d.ts files unless told to skip
 * them. The declarations are emitted here from the sources with the build's settings (not read
 * from dist/, which may be stale), in memory.
 */
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every .d.ts the build would write, by path relative to its outDir. */
function emitDeclarations(): Map<string, string> {
  const configPath = join(ROOT, 'tsconfig.build.json');
  const read = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT);
  const options: ts.CompilerOptions = { ...parsed.options, declaration: true, emitDeclarationOnly: true, noEmit: false, declarationMap: false, sourceMap: false };
  const program = ts.createProgram(parsed.fileNames, options);
  const out = new Map<string, string>();
  const result = program.emit(undefined, (name, text) => {
    if (name.endsWith('.d.ts')) out.set(name.slice(options.outDir!.length + 1), text);
  });
  expect(result.diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  return out;
}

/** The module specifiers a declaration file imports (import/export from, import("…"), references). */
function specifiers(text: string): string[] {
  const file = ts.preProcessFile(text, true, true);
  return [...file.importedFiles, ...file.typeReferenceDirectives].map((f) => f.fileName);
}

describe('published declarations', () => {
  it('name no package outside dependencies (prom-client stays optional for TypeScript users too)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const allowed = new Set(Object.keys(pkg.dependencies));
    const builtins = new Set(builtinModules);
    const decls = emitDeclarations();
    expect(decls.has('index.d.ts')).toBe(true);
    const outside: string[] = [];
    for (const [file, text] of decls) {
      for (const spec of specifiers(text)) {
        if (spec.startsWith('.')) continue;
        if (spec.startsWith('node:') || builtins.has(spec)) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!allowed.has(name)) outside.push(`${file}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
