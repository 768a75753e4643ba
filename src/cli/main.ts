/**
 * src/cli: the `meguri` command. Owns argument parsing, exit codes and what the user sees —
 * the status block, the summaries, the one-line errors — plus the two outputs a crawl leaves
 * behind (WARC files and pages.jsonl). Never scheduling or fetching logic of its own: it
 * drives the library (Engine, Frontier, the .meguri codec, the simulated web) like any
 * embedder would, so what the CLI shows is what the library does.
 *
 * Node-only, and not re-exported from the package entries: `bin/meguri.js` imports `main`
 * from the built `dist/cli/main.js`.
 */
import { type CommandSpec, commandHelp, parseCommand } from './args.js';
import { CRAWL_SPEC, crawlCommand, packageVersion } from './crawl.js';
import { DEMO_SPEC, demoCommand } from './demo.js';
import { EXIT, reportFailure } from './failure.js';
import { CLUSTER_SPEC, clusterCommand } from './cluster.js';
import { type CliIo, processIo } from './io.js';
import { SERVE_SPEC, serveCommand } from './serve.js';
import {
  EXPORT_SPEC,
  HOSTS_SPEC,
  INSPECT_SPEC,
  SCHEDULE_SPEC,
  STATS_SPEC,
  exportCommand,
  hostsCommand,
  inspectCommand,
  scheduleCommand,
  statsCommand,
} from './read.js';

export { type CliIo, type TextOut } from './io.js';
export { EXIT } from './failure.js';

type Run = (args: ReturnType<typeof parseCommand>, io: CliIo) => number | Promise<number>;

const COMMANDS: readonly (readonly [CommandSpec, Run])[] = [
  [DEMO_SPEC, demoCommand],
  [CRAWL_SPEC, crawlCommand],
  [STATS_SPEC, statsCommand],
  [SCHEDULE_SPEC, scheduleCommand],
  [HOSTS_SPEC, hostsCommand],
  [INSPECT_SPEC, inspectCommand],
  [EXPORT_SPEC, exportCommand],
  [SERVE_SPEC, serveCommand],
  [CLUSTER_SPEC, clusterCommand],
];

function overview(): string {
  const width = Math.max(...COMMANDS.map(([s]) => s.name.length)) + 2;
  return `meguri — a polite crawl frontier

Usage: npx meguri <command> [options]

Commands:
${COMMANDS.map(([s]) => `  ${s.name.padEnd(width)}${s.summary}`).join('\n')}

Start here:
  npx meguri demo                               crawl a simulated web on loopback (no network)
  npx meguri crawl https://example.com/ --data ./crawl --agent "MyBot/1.0 (+https://example.com/bot)"
  npx meguri crawl --data ./crawl               resume it with its saved settings
  npx meguri hosts ./crawl --why                why is each host idle?

'npx meguri <command> --help' lists a command's options; 'npx meguri --version' prints the version.
`;
}

/**
 * Runs the command line `argv` (without node and script) and resolves to the exit code:
 * 0 success, 1 run-time failure, 2 usage mistake, 130 interrupted. Never throws, never prints
 * a stack trace (unless `MEGURI_DEBUG=1`). `io` defaults to the real process.
 */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [first, ...rest] = argv;
  let command: string | undefined;
  try {
    if (first === undefined || first === '--help' || first === '-h') {
      io.stdout.write(overview());
      return EXIT.ok;
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      io.stdout.write(`${packageVersion()}\n`);
      return EXIT.ok;
    }
    if (first === 'help') {
      const spec = COMMANDS.find(([s]) => s.name === rest[0])?.[0];
      io.stdout.write(spec ? commandHelp(spec) : overview());
      return EXIT.ok;
    }
    const entry = COMMANDS.find(([s]) => s.name === first);
    if (entry === undefined) {
      io.stderr.write(`meguri: unknown command ${JSON.stringify(first)} (commands: ${COMMANDS.map(([s]) => s.name).join(', ')}; see meguri --help)\n`);
      return EXIT.usage;
    }
    const [spec, run] = entry;
    command = spec.name;
    const args = parseCommand(spec, rest);
    if (args.help) {
      io.stdout.write(commandHelp(spec));
      return EXIT.ok;
    }
    return await run(args, io);
  } catch (err) {
    return reportFailure(err, io, command);
  }
}
