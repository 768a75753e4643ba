/**
 * The flag tables and their parser, and `main`'s handling of bad command lines: every mistake
 * is one clear line naming the flag and the value, exit code 2, and no stack trace.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CommandSpec, commandHelp, parseCommand, parseDuration, parseSize } from '../../src/cli/args.js';
import { CRAWL_SPEC, tableResolver } from '../../src/cli/crawl.js';
import { main } from '../../src/cli/main.js';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { AGENT, ROOT, STACK_LINE, bufferIo } from './helpers.js';

describe('values', () => {
  it('parses durations (bare numbers are seconds) and sizes (powers of 1024)', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('2s')).toBe(2000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('0.5')).toBe(500);
    for (const bad of ['', 's', '-1s', '1 d', '1e3', 'ms']) expect(parseDuration(bad), bad).toBeUndefined();
    expect(parseSize('4096')).toBe(4096);
    expect(parseSize('512K')).toBe(512 * 1024);
    expect(parseSize('100MB')).toBe(100 * 1024 * 1024);
    expect(parseSize('1GiB')).toBe(1024 ** 3);
    for (const bad of ['', 'M', '-1', '1T', '1.5.2G']) expect(parseSize(bad), bad).toBeUndefined();
  });
});

describe('parseCommand', () => {
  const spec: CommandSpec = {
    name: 'try',
    summary: 'a test command',
    usage: 'DIR',
    minPositionals: 1,
    maxPositionals: 1,
    flags: [
      { name: 'n', kind: 'integer', min: 1, max: 10, help: 'a count' },
      { name: 'rate', kind: 'number', above: 0, help: 'a rate' },
      { name: 'wait', kind: 'duration', min: 100, help: 'a wait' },
      { name: 'mode', kind: 'choice', choices: ['a', 'b'], help: 'a mode' },
      { name: 'agent', kind: 'agent', help: 'who', required: 'say who you are' },
      { name: 'map', kind: 'mapping', multiple: true, help: 'names' },
      { name: 'quiet', kind: 'boolean', help: 'hush' },
    ],
  };
  const ok = (argv: string[]) => parseCommand(spec, ['dir', '--agent', AGENT, ...argv]);
  const fails = (argv: string[]): string => {
    try {
      parseCommand(spec, argv);
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidArgumentError);
      return (err as Error).message;
    }
    throw new Error(`parsed: ${argv.join(' ')}`);
  };

  it('converts every kind', () => {
    const a = ok(['--n', '3', '--rate=0.5', '--wait', '2s', '--mode', 'b', '--map', 'x.test=10.0.0.1', '--map', 'Y.test.=[::1]', '--map', 'Bücher.test=10.0.0.2', '--quiet']);
    expect(a.positionals).toEqual(['dir']);
    expect(a.number('n')).toBe(3);
    expect(a.number('rate')).toBe(0.5);
    expect(a.number('wait')).toBe(2000);
    expect(a.text('mode')).toBe('b');
    expect(a.text('agent')).toBe(AGENT);
    expect(a.pairs('map')).toEqual([
      ['x.test', '10.0.0.1'],
      ['y.test', '::1'],
      // An internationalized name by its ASCII form, as canonical URLs name the host.
      ['xn--bcher-kva.test', '10.0.0.2'],
    ]);
    expect(a.flag('quiet')).toBe(true);
    expect(ok([]).has('n')).toBe(false);
  });

  it('names the flag, what it expects and what it got', () => {
    expect(fails(['d', '--agent', AGENT, '--n', '0'])).toBe('--n: expected a whole number >= 1 and <= 10, received "0"');
    expect(fails(['d', '--agent', AGENT, '--n', '2.5'])).toMatch(/^--n: expected a whole number .* received "2.5"$/);
    expect(fails(['d', '--agent', AGENT, '--rate', '0'])).toMatch(/^--rate: expected a number > 0, received "0"$/);
    expect(fails(['d', '--agent', AGENT, '--wait', '50ms'])).toMatch(/^--wait: expected a duration .* received "50ms"$/);
    expect(fails(['d', '--agent', AGENT, '--mode', 'c'])).toBe('--mode: expected one of a, b, received "c"');
    expect(fails(['d', '--agent', 'not a product'])).toMatch(/^--agent: expected a User-Agent starting with product\/version/);
    expect(fails(['d', '--agent', '/1.0'])).toMatch(/^--agent: expected a User-Agent/);
    expect(fails(['d', '--agent', AGENT, '--map', 'nohost'])).toMatch(/^--map: expected NAME=IP/);
    expect(fails(['d', '--agent', AGENT, '--map', 'a.test=300.1.1.1'])).toMatch(/^--map: expected NAME=IP/);
    expect(fails(['d', '--agent', AGENT, '--map', 'a b.test=10.0.0.1'])).toMatch(/^--map: expected NAME=IP/);
    expect(fails(['d', '--agent', AGENT, '--bogus'])).toBe('try: unknown option --bogus');
    expect(fails(['d', '--agent'])).toMatch(/^--agent needs a value/);
    expect(fails(['d', '--agent', AGENT, '--quiet=yes'])).toBe('--quiet takes no value');
    expect(fails(['d'])).toBe('try: --agent is required (say who you are)');
    expect(fails(['--agent', AGENT])).toMatch(/^try: missing DIR/);
    expect(fails(['a', 'b', '--agent', AGENT])).toMatch(/^try: unexpected argument "b"/);
  });

  it('accepts --help without the required flags, and generates help from the table', () => {
    expect(parseCommand(spec, ['--help']).help).toBe(true);
    const help = commandHelp(CRAWL_SPEC);
    for (const f of CRAWL_SPEC.flags) expect(help).toContain(`--${f.name}`);
    expect(help).toMatch(/--agent UA +User-Agent .*\(required\)/);
  });
});

describe('main with a bad command line', () => {
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['crawl', 'https://example.com/', '--data', '/tmp/x'], /--agent is required/],
    [['crawl', 'https://example.com/', '--agent', AGENT], /--data is required/],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--concurrency', '0'], /^meguri: --concurrency: expected a whole number >= 1/m],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--grouping', 'domain'], /--grouping: expected one of registrable, host, origin, received "domain"/],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--min-delay', 'soon'], /--min-delay: expected a duration/],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--max-crawl-delay', '10m'], /--max-crawl-delay: expected a duration/],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--warc-size', '1K'], /--warc-size: expected a size/],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--budget', '100'], /--budget applies to continuous mode: add --recrawl/],
    [['crawl', '--data', '/tmp/meguri-cli-test-nothing-here', '--agent', AGENT], /nothing to crawl/],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--min-delay', '400s'], /^meguri: --min-delay: expected a duration .*<= 299999 ms, received "400s"$/m],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--max-pages', '-3'], /^meguri: --max-pages: expected a whole number >= 1, received "-3"$/m],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--seeds', '/nonexistent/seeds.txt'], /^meguri: --seeds: cannot read \/nonexistent\/seeds\.txt: no such file or directory \(ENOENT\)$/m],
    [['crawl', 'https://example.com/', '--data', join(ROOT, 'package.json'), '--agent', AGENT], /^meguri: --data: ".*package\.json" is a file, expected a directory$/m],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--warc', join(ROOT, 'package.json'), '--agent', AGENT], /^meguri: --warc: ".*package\.json" is a file, expected a directory$/m],
    [['crawl', 'ftp://example.com/', 'mailto:a@example.com', '--data', '/tmp/meguri-cli-test-nothing-here', '--agent', AGENT], /^meguri: crawl: no seed is an http\(s\) URL: "ftp:\/\/example\.com\/", "mailto:a@example\.com"$/m],
    [['hosts', 'dir', '--limit', '-1'], /^meguri: --limit: expected a whole number >= 0, received "-1"$/m],
    [['stats'], /stats: missing the crawl directory/],
    [['hosts', 'a', 'b'], /unexpected argument "b"/],
    [['export', 'dir', '--format', 'csv'], /--format: expected one of jsonl, received "csv"/],
    [['demo', '--hosts', '2'], /--hosts: expected a whole number >= 4/],
    // A repeated flag has every value checked, not only the last (issue 23).
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', AGENT, '--concurrency', '0', '--concurrency', '4'], /^meguri: --concurrency: expected a whole number >= 1 and <= 100000, received "0"$/m],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', 'Bot/1.0 (ロボット)', '--agent', AGENT], /^meguri: --agent: "Bot\/1\.0 \(ロボット\)": character "ロ"/m],
    [['demo', '--hosts', '2', '--hosts', '8'], /--hosts: expected a whole number >= 4/],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', 'Bot/1.0 (ロボット)'], /^meguri: --agent: "Bot\/1\.0 \(ロボット\)": character "ロ" \(U\+30ED\) at index 9 is not visible ASCII; a User-Agent is an HTTP header value \(RFC 9110 §5\.5\)$/m],
    [['crawl', 'https://example.com/', '--data', '/tmp/x', '--agent', 'Bötchen/1.0'], /^meguri: --agent: "Bötchen\/1\.0": character "ö" \(U\+00F6\) at index 1/m],
  ];
  it.each(cases)('meguri %j → exit 2 with a clear message', async (argv, message) => {
    const io = bufferIo();
    expect(await main(argv, io)).toBe(2);
    expect(existsSync('/tmp/meguri-cli-test-nothing-here')).toBe(false);
    expect(io.err()).toMatch(message);
    expect(io.err()).not.toMatch(STACK_LINE);
    expect(io.err().trim().split('\n').length).toBeLessThanOrEqual(3);
    expect(io.out()).toBe('');
  });

  it('prints the overview and per-command help with exit 0', async () => {
    let io = bufferIo();
    expect(await main([], io)).toBe(0);
    for (const c of ['demo', 'crawl', 'stats', 'schedule', 'hosts', 'inspect', 'export']) expect(io.out()).toContain(`  ${c} `);
    io = bufferIo();
    expect(await main(['hosts', '--help'], io)).toBe(0);
    expect(io.out()).toContain('--why');
    io = bufferIo();
    expect(await main(['--version'], io)).toBe(0);
    expect(io.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('reports a missing crawl directory as a run-time failure (exit 1), naming it', async () => {
    const io = bufferIo();
    expect(await main(['stats', '/nonexistent/meguri-crawl'], io)).toBe(1);
    expect(io.err()).toMatch(/^meguri: \/nonexistent\/meguri-crawl: no such file or directory \(ENOENT\)\n$/);
    expect(io.err()).not.toMatch(STACK_LINE);
  });

  it('refuses a data directory another live crawl holds before touching its pages.jsonl', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-cli-locked-'));
    try {
      // The lock names a live process (our parent); its pages.jsonl ends in a line being written.
      writeFileSync(join(dir, 'lock'), `${process.ppid}\n`);
      const text = '{"url":"http://a.test/"}\n{"url":"http://a.te';
      writeFileSync(join(dir, 'pages.jsonl'), text);
      const io = bufferIo();
      expect(await main(['crawl', 'http://a.test/', '--data', dir, '--agent', AGENT], io)).toBe(1);
      expect(io.err()).toContain(`is in use by process ${process.ppid} (remove ${join(dir, 'lock')} if that is wrong)`);
      expect(readFileSync(join(dir, 'pages.jsonl'), 'utf8')).toBe(text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says a file that is not a checkpoint is not one (rather than damaged)', async () => {
    const io = bufferIo();
    expect(await main(['stats', join(ROOT, 'package.json')], io)).toBe(1);
    expect(io.err()).toMatch(/bad magic: not a \.meguri partition \[MEGURI_ERR_CORRUPT_PARTITION\]\n {2}this is not a meguri checkpoint: give the --data directory of a meguri crawl, or its frontier\.meguri\n$/);
  });
});

describe('the crawl resolver', () => {
  it('answers --resolve names; with --allow-private, names DNS cannot answer come from the hosts file', async () => {
    expect(tableResolver([], false)).toBeUndefined();
    expect(await tableResolver([['intranet.test', '10.0.0.7']], false)!('INTRANET.test.')).toEqual(['10.0.0.7']);
    const local = [(await tableResolver([], true)!('localhost'))].flat().map((a) => (typeof a === 'string' ? a : a.address));
    expect(local.some((a) => a === '127.0.0.1' || a === '::1')).toBe(true);
  });

  it('passes DNS records on with their TTLs, and tries the hosts file only when DNS fails', async () => {
    const record = { address: '192.0.2.1', family: 4, ttlSeconds: 42 } as const;
    const asked: string[] = [];
    const dns = async (h: string) => {
      asked.push(`dns ${h}`);
      if (h === 'intranet') throw Object.assign(new Error('queryA ENOTFOUND intranet'), { code: 'ENOTFOUND' });
      return [record];
    };
    const hosts = async (h: string) => {
      asked.push(`hosts ${h}`);
      return ['10.1.2.3'];
    };
    const r = tableResolver([['pinned.test', '10.0.0.7']], true, dns, hosts)!;
    expect(await r('example.com')).toEqual([record]);
    expect(await r('intranet')).toEqual(['10.1.2.3']);
    expect(await r('pinned.test')).toEqual(['10.0.0.7']);
    expect(asked).toEqual(['dns example.com', 'dns intranet', 'hosts intranet']);
    await expect(tableResolver([['pinned.test', '10.0.0.7']], false, dns, hosts)!('intranet')).rejects.toThrow(/ENOTFOUND/);
  });
});
