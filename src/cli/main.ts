/**
 * src/cli: the `meguri` command. Owns argument parsing, exit codes and what the user sees;
 * never scheduling or fetching logic of its own (it drives the library like any embedder).
 */
import { readFileSync } from 'node:fs';

const HELP = `meguri — a polite crawl frontier

Usage:
  meguri --help       this text
  meguri --version    the package version

The crawl, demo and inspection commands arrive with the CLI milestone; today the package
offers its library (see README.md).
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Runs the command line `argv` (without node and script) and resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  process.stderr.write(`meguri: unknown command ${JSON.stringify(first)}\n\n${HELP}`);
  return 2;
}
