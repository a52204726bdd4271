/**
 * The report's header: which node bundle, which kpx, when, and what the evidence does not show
 * (missing dumps, tables that are not whole, stale rules, leftovers, second views, lint rules not
 * run for lack of input, lines kpx could not read) — the unknowns `trace` and `services` print as
 * notes, said before any answer so that no answer is read without them.
 */
import { missingDumps, proxyModes } from '../../kube/modes.js';
import type { ServiceState } from '../../kube/types.js';
import { evidenceText, nodeNotes } from '../judgement.js';
import { skippedText } from '../lint.js';
import type { ReportInput } from './input.js';
import { plural, type Block } from './model.js';

/** Gaps shown in the header before the rest is folded away (the answer must stay near the top). */
const SHOWN_GAPS = 3;

const STATES: readonly ServiceState[] = ['no-endpoints', 'no-local-endpoints', 'partial', 'unknown', 'healthy'];

/** Everything the evidence does not show, one sentence each, the weightiest first. */
export function evidenceGaps(input: ReportInput): string[] {
  const { node, lint } = input;
  const out: string[] = [];
  // Stale rules, leftovers, second views: the node notes every command prints first.
  for (const n of nodeNotes(node)) out.push(n.replace(/^note: /, ''));
  for (const e of node.evidence) if (e.kind !== 'whole' && e.kind !== 'second-view') out.push(evidenceText(e));
  for (const m of missingDumps(node.snapshot)) out.push(m);
  for (const f of node.snapshot.files) {
    const errors = f.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length) out.push(`${f.path}: ${plural(errors.length, 'line')} kpx could not read (first: line ${errors[0].line}); the rest of the file was read`);
  }
  if (lint && lint.skipped.length) out.push(`lint rules not run for lack of input: ${skippedText(lint.skipped)}`);
  if (!lint) out.push('lint was not run (--no-lint): the problems below are the judgement’s only');
  return out;
}

/** `27 healthy, 4 no-endpoints`: the judged states, unhealthy first. */
function stateCounts(input: ReportInput): string {
  const counts = new Map<ServiceState, number>();
  for (const s of input.node.resolution.services) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
  return STATES.filter((st) => counts.has(st))
    .map((st) => `${counts.get(st)} ${st}`)
    .join(', ');
}

export function headerBlocks(input: ReportInput): Block[] {
  const snap = input.node.snapshot;
  const modes = proxyModes(snap);
  const services = input.node.resolution.services.length;
  const out: Block[] = [{ kind: 'heading', level: 1, text: `kpx report: ${snap.name}` }];
  out.push({
    kind: 'paragraph',
    cls: 'meta',
    content: [
      `Node bundle ${snap.name}: ${plural(snap.files.length, 'file')} read by kpx ${input.version}, ${input.generatedAt}. `,
      `Proxy mode${modes.length === 1 ? '' : 's'}: ${modes.length ? modes.join(', ') : 'none detected'}. `,
      `${plural(services, 'Service port')}${services ? ` (${stateCounts(input)})` : ''}.`,
    ],
  });
  const gaps = evidenceGaps(input);
  if (gaps.length === 0) {
    out.push({ kind: 'paragraph', cls: 'gaps', content: ['Missing from the evidence: nothing kpx looks for — every dump it reads for these answers is here and every table is whole.'] });
    return out;
  }
  out.push({ kind: 'paragraph', cls: 'gaps', content: [`Missing from the evidence (${gaps.length}): what the answers below cannot rest on.`] });
  out.push({ kind: 'list', cls: 'gaps', items: gaps.slice(0, SHOWN_GAPS).map((g) => ({ content: [g] })) });
  if (gaps.length > SHOWN_GAPS) {
    out.push({ kind: 'details', summary: `${gaps.length - SHOWN_GAPS} more`, blocks: [{ kind: 'list', cls: 'gaps', items: gaps.slice(SHOWN_GAPS).map((g) => ({ content: [g] })) }] });
  }
  return out;
}
