/**
 * kpx's commands and options (commander). Each command's module is imported only when that
 * command runs, so `kpx --help` and small jobs start fast. Building the program has no side
 * effects: main.ts runs it as the binary; the tests run it in-process (test/helpers/cli.ts).
 */
import { setPagerEnabled } from './pager.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { collectRepeatable } from './inputs.js';
import { EXIT_CODES_HELP, ExitCode, exitCodeFor } from './exit.js';
import { writeErr } from './output.js';
import { escapeControls } from '../source/index.js';
import { VERSION } from '../version.js';
import { DEFAULT_INPUT_SETTINGS, DEFAULT_MAX_GZIP_RATIO, DEFAULT_MAX_INPUT_BYTES, parseSize, sizeWords, useInputSettings, type InputSettings } from '../load/input.js';

/** `--help` examples, per command: real invocations (the samples ship with kpx). */
const EXAMPLES: Record<string, readonly string[]> = {
  dump: [
    'kpx dump samples/iptables-mode-node/iptables-save.txt',
    "kpx dump iptables-save.txt -o json | jq '.model.tables[].name'",
    'iptables-save | kpx dump -',
  ],
  inspect: [
    'kpx inspect samples/iptables-mode-node',
    'kpx inspect -i bundle/ -o json',
  ],
  services: [
    'kpx services -i samples/iptables-mode-node',
    'kpx services -i bundle/ --namespace kube-system --state partial',
    'kpx services -i bundle/ -o wide           # endpoint list, chains, policy, how each was identified',
    'kpx services -i bundle/ --service kube-system/kube-dns:dns',
    'kpx services -i cluster/ --nodes',
    'kpx services            # collect from this node (as root)',
  ],
  trace: [
    'kpx trace 10.96.0.10:53/udp -i samples/iptables-mode-node',
    'kpx trace 10.96.0.1:443 -i bundle/ --from external -v',
    'kpx trace kube-system/kube-dns -i samples/iptables-mode-node',
    'kpx trace 10.96.0.10 -i samples/iptables-mode-node',
    'kpx trace nodeport:32658 -i samples/iptables-mode-node',
    "kpx trace '[fd00:10:96::a]:53/udp' -i bundle/ -o json",
    'kpx trace 10.96.0.10:53/udp -i cluster/ --node worker-1',
  ],
  lint: [
    'kpx lint -i samples/iptables-mode-node',
    'kpx lint -i bundle/ --fail-on warning -o sarif > kpx.sarif',
    'kpx lint -i bundle/ --baseline previous.json',
    'kpx lint --list-rules',
    'kpx lint --list-rules --rule kube-proxy-sync-failing',
  ],
  'migrate-check': [
    'kpx migrate-check --to nftables -i samples/iptables-mode-node',
    'kpx migrate-check --to nftables -i bundle/ -o json',
    'kpx migrate-check --to nftables -i bundle/ --fail-on warning -o sarif > migrate.sarif',
    'kpx migrate-check --list-rules',
  ],
  summarize: [
    'kpx summarize -i bundle/ -o json > node-1.json',
    'kpx summarize -o json --node-name "$NODE_NAME" > /out/$NODE_NAME.json   # on the node itself (as root)',
    'kpx services --nodes -i summaries/   # compare the nodes from their summaries',
  ],
  diff: [
    'kpx diff before/ after/',
    'kpx diff node-a/ node-b/ -o json',
  ],
  reverse: [
    'kpx reverse 10.244.1.2 -i samples/iptables-mode-node',
    'kpx who-dnat 10.244.1.2:53 -i bundle/ -o json',
  ],
  graph: [
    'kpx graph -i samples/iptables-mode-node --service kube-system/kube-dns --svg dns.svg',
    'kpx graph -i bundle/ --format mermaid > node.mmd',
    'kpx graph -i bundle/ --service 10.96.0.1 | dot -Tpng > kubernetes.png',
  ],
  report: [
    'kpx report -i samples/iptables-mode-node -o report.html --service kube-system/kube-dns',
    'kpx report -i bundle/ -o - > report.md',
  ],
  redact: [
    'kpx redact bundle/ -o redacted/ --key "$KPX_REDACT_KEY"',
    'kpx redact -i bundle/ -o redacted/ --hostname node-1.example.com --force',
  ],
  collect: [
    'sudo kpx collect -o bundle/',
    'sudo ip netns exec NS kpx collect -o ns-bundle/',
    'sudo kpx collect -o bundle/ --force   # into a non-empty directory',
  ],
  schema: [
    'kpx schema                 # the documents and the commands that print them',
    'kpx schema services > services.schema.json',
  ],
  kpx: [
    'kpx services -i samples/iptables-mode-node',
    'kpx trace 10.96.0.10:53/udp -i samples/iptables-mode-node',
    'kpx lint -i bundle/ --fail-on error',
    'kubectl kpx services -i bundle/   # the same, as a kubectl plugin (kubectl-kpx on PATH)',
  ],
};

const examples = (command: string) => `\nExamples:\n${EXAMPLES[command].map((e) => `  $ ${e}`).join('\n')}\n\n${EXIT_CODES_HELP}\n`;

/**
 * The input layer's limits (src/load/input.ts), on every command that reads dumps. They are this
 * run's input settings (inputSettingsOf(), set before each command), and cluster parser workers
 * get them as workerData: nothing travels through the environment.
 */
function limitOptions(cmd: Command): Command {
  return cmd
    .option('--max-input-size <size>', `the most text kpx reads from one input, after inflating a .gz (e.g. 512M, 1G; default ${sizeWords(DEFAULT_MAX_INPUT_BYTES).replace(' ', '')})`, (v: string) => {
      const n = parseSize(v);
      if (n === undefined) throw new InvalidArgumentError('not a size: give bytes, or a number with K, M or G (512M, 1G)');
      return n;
    })
    .option('--max-gzip-ratio <n>', `the most a .gz may inflate, as a multiple of its compressed size (default ${DEFAULT_MAX_GZIP_RATIO}; 0: no ratio limit)`, (v: string) => {
      const n = Number(v);
      if (!/^\d+(\.\d+)?$/.test(v.trim()) || !Number.isFinite(n)) throw new InvalidArgumentError('not a number (0: no ratio limit)');
      return n;
    })
    .option('--follow-symlinks', 'in a bundle directory, follow symlinks that lead out of it (never into /proc, /sys or /dev; redact never copies from outside)');
}

/** The input settings a command's options say (the defaults where a flag is not given). */
export function inputSettingsOf(opts: { maxInputSize?: number; maxGzipRatio?: number; followSymlinks?: boolean }): InputSettings {
  const d = DEFAULT_INPUT_SETTINGS.limits;
  return {
    limits: { maxBytes: opts.maxInputSize ?? d.maxBytes, maxGzipRatio: opts.maxGzipRatio ?? d.maxGzipRatio },
    followSymlinks: opts.followSymlinks === true,
  };
}

function inputOptions(cmd: Command): Command {
  return limitOptions(cmd)
    .option('-i, --input <path>', 'a dump file, a bundle directory, a .gz file, or - for stdin (repeatable); none = collect from this node', collectRepeatable, [])
    .option('--node-ip <ip>', "one of the node's own addresses, when no `ip addr` dump says them (repeatable)", collectRepeatable, [])
    .option('--node <name>', 'with a cluster bundle (one folder per node): the node to read; for trace, the node the packet starts on')
    .option('--no-color', 'no colour, even on a terminal (NO_COLOR is honoured too)')
    .option('--no-pager', 'never page a long answer (default on a terminal: KPX_PAGER, PAGER, else less -FRX)');
}

async function run(action: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await action();
  } catch (e) {
    const { code, message } = exitCodeFor(e);
    // Messages quote paths, node names and dump text: escaped here, where every error is printed.
    writeErr(`kpx: ${escapeControls(message)}\n`);
    process.exitCode = code;
  }
}

export interface ProgramHooks {
  /** The name kpx was run as (argv[1]'s base name): installed as kubectl-kpx too, `kubectl kpx …` runs it as a plugin. */
  readonly invokedAs: string;
  /** Ends the run with this code: process.exit in the binary; the in-process test runner throws instead. */
  exit(code: number): never;
}

/** A fresh commander program: one per run (commander keeps the parsed options on it). */
export function buildProgram(hooks: ProgramHooks): Command {
  const program = new Command();
  program
    .name(hooks.invokedAs === 'kubectl-kpx' ? 'kubectl kpx' : 'kpx')
    .addHelpText('after', examples('kpx'))
    .description('How does a packet to a Kubernetes Service reach a pod on this node, and where does it go wrong? Offline, from node dumps.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride((err) => {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') hooks.exit(0);
      hooks.exit(ExitCode.Error);
    })
    // `--no-pager` on any command: this run writes straight to stdout (set per run: in-process runs share the module).
    .hook('preAction', (_program, command) => {
      setPagerEnabled(command.opts().pager !== false);
      // Set per run too, from this command's flags (defaults without them): in-process runs share the module.
      useInputSettings(inputSettingsOf(command.opts()));
    });

  addReaders(program);
  addAnalyses(program);
  addComparisons(program);
  addTools(program);
  for (const name of ['dump', 'diff', 'redact']) limitOptions(program.commands.find((c) => c.name() === name)!);

  return program;
}

/** `dump` and `inspect`: what a file holds. */
function addReaders(program: Command): void {
  program
    .command('dump')
    .description('parse one dump and print it back: as iptables-save (lossless round trip) or as the JSON model')
    .argument('[file]', 'the dump (or - for stdin)')
    .option('-i, --input <path>', 'the dump, as with other commands', collectRepeatable, [])
    .addOption(new Option('-o, --output <format>', 'output format').choices(['iptables-save', 'json']).default('iptables-save'))
    .addHelpText('after', examples('dump'))
    .action((file, opts) => run(async () => (await import('./commands/dump.js')).dumpAction(file, opts)));

  inputOptions(
    program
      .command('inspect')
      .description('report what each input file is (detected format), what it holds, and its diagnostics')
      .argument('[inputs...]', 'dump files or bundle directories')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text')),
  ).addHelpText('after', examples('inspect'))
    .action((inputs, opts) => run(async () => (await import('./commands/inspect.js')).inspectAction(inputs, opts)));

}

/** `services`, `summarize`, `trace`, `lint`: the node's Services and what is wrong. */
function addAnalyses(program: Command): void {
  inputOptions(
    program
      .command('services')
      .description("list the Services this node's dataplane implements, with endpoints, policies and state")
      .argument('[inputs...]', 'dump files or bundle directories')
      .option('--service <target>', 'show the Service ports a target names in detail, with every chain and rule they own: ns/name[:port][/proto], VIP[:PORT][/proto] or nodeport:PORT (the grammar of trace)')
      .option('--namespace <ns>', 'only Services in this namespace')
      .option('--state <state>', 'only Services in this state (healthy, no-endpoints, no-local-endpoints, partial)')
      .option('--nodes', 'compare the nodes of a cluster bundle (-i DIR, or several -i NODE_DIR): where they disagree per Service')
      .option('--all', 'with --nodes: list the Service ports every node agrees on too')
      .addOption(new Option('-o, --output <format>', 'text (fitted to the terminal, else 120 columns; COLUMNS overrides), wide (more columns, nothing cut), json or yaml').choices(['text', 'wide', 'json', 'yaml']).default('text')),
  ).addHelpText('after', examples('services'))
    .action((inputs, opts) => run(async () => (await import('./commands/services.js')).servicesAction(inputs, opts)));

  inputOptions(
    program
      .command('summarize')
      .description("one node's Services, endpoints, lint findings and evidence references as compact JSON (for fleets: compare with services --nodes)")
      .argument('[inputs...]', 'dump files or bundle directories')
      .option('--node-name <name>', "the node's name in the summary (default: the bundle's manifest host, else its folder name)")
      .option('--no-lint', 'leave the lint findings out')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['json']).default('json')),
  ).addHelpText('after', examples('summarize'))
    .action((inputs, opts) => run(async () => (await import('./commands/summarize.js')).summarizeAction(inputs, opts)));

  inputOptions(
    program
      .command('trace')
      .description('follow a packet to a Service through this node, step by step, with the kernel semantics: the answer first, then the road')
      .argument('<target>', 'VIP:PORT[/proto] ([IPv6]:PORT), a bare VIP (every port it serves), ns/name[:port] (a Service by name), or nodeport:PORT[/proto]')
      .option('--from <source>', 'pod | external | node | an IP address (default: pod; external for nodeport:PORT)')
      .option('--sport <port>', 'source port')
      .option('-p, --protocol <proto>', 'tcp, udp or sctp (or use the /proto suffix)')
      .option('--in-interface <name>', 'the interface the packet arrives on')
      .option('--established', 'assume the packet belongs to an ESTABLISHED connection (default: the first packet of a NEW one)')
      .option('--affinity-hit', 'assume session-affinity (recent) entries exist for the source')
      .option('--exact', 'trace VIP:PORT as given even when no Service is there (no "did you mean")')
      .option('-v, --verbose', 'show every rule text and every policy step')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text')),
  ).addHelpText('after', examples('trace'))
    .action((dest, opts) => run(async () => (await import('./commands/trace.js')).traceAction(dest, opts)));

  inputOptions(
    program
      .command('lint')
      .description('find broken and risky dataplane state; exit 1 when findings reach --fail-on')
      .argument('[inputs...]', 'dump files or bundle directories')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'sarif', 'github']).default('text'))
      .addOption(new Option('--fail-on <severity>', 'lowest severity that fails').choices(['error', 'warning', 'never']).default('error'))
      .option('--rule <id>', 'run only these rules (repeatable)', collectRepeatable, [])
      .option('--disable <id>', 'do not run these rules (repeatable)', collectRepeatable, [])
      .option('--config <file>', 'a .kpx.yaml / JSON file with per-rule severities and disabled rules')
      .option('--baseline <file>', 'a previous `kpx lint -o json` result: report only new findings')
      .option('--list-rules', 'print the rule catalogue and exit; with --rule ID, that rule\'s whole documentation (why it matters, the fix, an example)'),
  ).addHelpText('after', examples('lint'))
    .action((inputs, opts) => run(async () => (await import('./commands/lint.js')).lintAction(inputs, opts)));

  inputOptions(
    program
      .command('migrate-check')
      .description("what will behave differently on this node once kube-proxy runs in nftables mode (from iptables or IPVS mode); exit 1 when findings reach --fail-on")
      .argument('[inputs...]', 'dump files or bundle directories')
      .option('--to <mode>', 'the mode to move to (only nftables)', 'nftables')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'sarif', 'github']).default('text'))
      .addOption(new Option('--fail-on <severity>', 'lowest severity that fails').choices(['error', 'warning', 'never']).default('error'))
      .option('--rule <id>', 'run only these checks (repeatable)', collectRepeatable, [])
      .option('--disable <id>', 'do not run these checks (repeatable)', collectRepeatable, [])
      .option('--config <file>', 'a .kpx.yaml / JSON file with per-rule severities and disabled rules')
      .option('--baseline <file>', 'a previous `kpx migrate-check -o json` result: report only new findings')
      .option('--list-rules', "print the checks and exit; with --rule ID, that check's whole documentation"),
  ).addHelpText('after', examples('migrate-check'))
    .action((inputs, opts) => run(async () => (await import('./commands/migrate-check.js')).migrateCheckAction(inputs, opts)));

}

/** `diff`, `reverse`, `graph`, `report`: comparisons, reverse lookups and pictures. */
function addComparisons(program: Command): void {
  program
    .command('diff')
    .description('what changed between two snapshots (one node at two times, or two nodes): Services first, then rules not explained by them')
    .argument('<old>', 'the older dump file or bundle directory')
    .argument('<new>', 'the newer dump file or bundle directory')
    .option('--node-ip <ip>', "one of the node's own addresses, when no `ip addr` dump says them (repeatable)", collectRepeatable, [])
    .option('--max-rules <n>', 'list at most this many changed rules per chain in text output', '20')
    .option('--no-color', 'no colour, even on a terminal (NO_COLOR is honoured too)')
    .option('--no-pager', 'never page a long answer (default on a terminal: KPX_PAGER, PAGER, else less -FRX)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addHelpText('after', examples('diff'))
    .action((oldPath, newPath, opts) => run(async () => (await import('./commands/diff.js')).diffAction(oldPath, newPath, opts)));

  inputOptions(
    program
      .command('reverse')
      .alias('who-dnat')
      .description('reverse lookup: which Services, NodePorts, externalIPs and LoadBalancer IPs send connections to this pod address, with what chance')
      .argument('<address>', 'POD-IP or POD-IP:PORT ([IPv6]:PORT)')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text')),
  ).addHelpText('after', examples('reverse'))
    .action((address, opts) => run(async () => (await import('./commands/reverse.js')).reverseAction(address, opts)));

  inputOptions(
    program
      .command('graph')
      .description('the chain/set/virtual-server graph of Services (or the whole node) as Graphviz DOT or Mermaid')
      .argument('[inputs...]', 'dump files or bundle directories')
      .option('--service <target>', 'only the Service ports this target names: ns/name[:port], VIP[:PORT] or nodeport:PORT, each [/proto] (repeatable)', collectRepeatable, [])
      .addOption(new Option('--format <format>', 'graph language').choices(['dot', 'mermaid']).default('dot'))
      .option('--svg <file>', 'also render the graph to this SVG file (Graphviz built in, as WebAssembly)')
      .option('--full', 'the whole node in full (every chain, set and endpoint), even above 10 Service ports where an overview is drawn')
      .option('--output <file>', 'write the DOT/Mermaid text to this file instead of stdout'),
  ).addHelpText('after', examples('graph'))
    .action((inputs, opts) => run(async () => (await import('./commands/graph.js')).graphAction(inputs, opts)));

  inputOptions(
    program
      .command('report')
      .description('write a one-file incident report, answer first: the problems, the Services they touch, the other Services, the evidence lines')
      .argument('[inputs...]', 'dump files or bundle directories')
      .requiredOption('-o, --output <file>', 'report.md or report.html (format from the extension; - for Markdown on stdout)')
      .option('--service <target>', 'draw the graph of the Service ports this target names: ns/name[:port], VIP[:PORT] or nodeport:PORT, each [/proto] (repeatable)', collectRepeatable, [])
      .addOption(new Option('--format <format>', 'force the format').choices(['md', 'html']))
      .option('--no-lint', 'leave out lint findings'),
  ).addHelpText('after', examples('report'))
    .action((inputs, opts) => run(async () => (await import('./commands/report.js')).reportAction(inputs, opts)));

}

/** `redact`, `schema`, `collect`. */
function addTools(program: Command): void {
  program
    .command('redact')
    .description('rewrite dumps for sharing (IPs, Service names, namespaces, chain hashes, MACs, host names, comments), consistently for a key; kpx reads the result the same way')
    .argument('[inputs...]', 'dump files or bundle directories')
    .option('-i, --input <path>', 'a dump file or bundle directory (repeatable)', collectRepeatable, [])
    .requiredOption('-o, --output <dir>', 'the directory to write the redacted files to (- : one dump file, to standard output)')
    .option('--key <secret>', 'the redaction key: the same key gives the same output (default: $KPX_REDACT_KEY, else random)')
    .option('--hostname <name>', 'another host name to replace wherever it appears (repeatable)', collectRepeatable, [])
    .option('--force', 'write into a non-empty output directory')
    .addHelpText('after', examples('redact'))
    .action((inputs, opts) => run(async () => (await import('./commands/redact.js')).redactAction(inputs, opts)));

  program
    .command('schema')
    .description('print the JSON Schema of a JSON output (every one carries a schemaVersion); without a name, list them')
    .argument('[name]', 'the output: services, trace, lint, inspect, diff, reverse, dump, …')
    .addHelpText('after', examples('schema'))
    .action((name) => run(async () => (await import('./commands/schema.js')).schemaAction(name)));

  program
    .command('collect')
    .description("collect this node's dumps (read-only commands) into a bundle directory")
    .requiredOption('-o, --output <dir>', 'the directory to write (new or empty)')
    .option('--force', 'write into a non-empty directory')
    .option('--no-conntrack', 'do not list the conntrack table (conntrack -S is still recorded)')
    .option('--conntrack-max-entries <n>', 'keep at most this many conntrack -L entries (default 200000)')
    .addHelpText('after', examples('collect'))
    .action((opts) => run(async () => (await import('./commands/collect.js')).collectAction(opts)));

  // The other commands that read dumps take the same limits.
}
