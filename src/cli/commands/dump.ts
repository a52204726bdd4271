/** `kpx dump FILE`: print a parsed dump back (iptables-save) or its model (json). */
import { parseInput, readInputs } from '../../load/index.js';
import { renderIptablesSave } from '../../render/iptables-save.js';
import { writeJsonDeep } from '../../render/json-deep-stream.js';
import { versioned } from '../../render/schemas/index.js';
import { formatDiagnostic } from '../../render/diagnostics.js';
import type { Ruleset } from '../../model/netfilter.js';
import { ExitCode, UsageError } from '../exit.js';
import { printable } from '../../source/index.js';
import { writeOut, writeErr, writeJsonOut } from '../output.js';

export interface DumpOptions {
  input?: string[];
  output: 'iptables-save' | 'json';
}

export async function dumpAction(file: string | undefined, opts: DumpOptions): Promise<number> {
  const paths = [...(file ? [file] : []), ...(opts.input ?? [])];
  if (paths.length !== 1) throw new UsageError('kpx dump takes exactly one dump (a file or - for stdin)');
  const inputs = readInputs(paths);
  if (inputs.length !== 1) throw new UsageError(`${paths[0]}: kpx dump takes one file, not a directory of ${inputs.length}`);
  const parsed = await parseInput(inputs[0]);
  for (const d of parsed.diagnostics) if (d.severity !== 'info') writeErr(formatDiagnostic(d) + '\n');
  if (!parsed.parsed) {
    // Nothing was read (unreadable, refused by a limit, not a dump): that is an input error (exit 2).
    const why = parsed.diagnostics.find((d) => d.severity === 'error');
    if (why === undefined && parsed.format === 'empty') writeErr(`kpx: ${printable(parsed.path, 4096)}: the file is empty\n`);
    return ExitCode.Error;
  }
  if (opts.output === 'json') {
    // Written piece by piece: a 10k-Service model printed as one string is longer than V8 allows.
    writeJsonDeep(versioned('dump', { file: parsed.path, format: parsed.format, counts: parsed.parsed.counts, model: parsed.parsed.data, diagnostics: parsed.diagnostics }), (text) => writeJsonOut(text));
  } else {
    if (parsed.format !== 'iptables-save') throw new UsageError(`-o iptables-save needs an iptables-save dump; ${parsed.path} is ${parsed.format} (use -o json)`);
    writeOut(renderIptablesSave(parsed.parsed.data as Ruleset));
  }
  return parsed.diagnostics.some((d) => d.severity === 'error') ? ExitCode.Findings : ExitCode.Ok;
}
