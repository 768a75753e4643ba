#!/usr/bin/env node
// `npm run bench [suite…]`: builds the library, installs bench/'s peers on first use (its own
// package and lock file, so the library's install stays lean) and runs the suites.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bench = join(root, 'bench');
const run = (cmd, args, cwd = root) => execFileSync(cmd, args, { cwd, stdio: 'inherit' });

const lock = join(bench, 'package-lock.json');
const marker = join(bench, 'node_modules', '.package-lock.json');
if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
  console.log('bench: installing peers (first use)…');
  run('npm', ['ci', '--no-audit', '--no-fund'], bench);
}
run('npx', ['tsc', '-p', 'tsconfig.build.json']);
run(process.execPath, ['--expose-gc', join(bench, 'run.mjs'), ...process.argv.slice(2)]);
