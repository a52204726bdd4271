/** A whole trace as text: the answer first, then each outcome with its road. */
import type { Condition, Trace, TraceOutcome, TraceStep } from '../../trace/types.js';
import { printable, appendAll } from '../../source/index.js';
import { chalkInit, type Colors, terminalText } from '../colors.js';
import { compareOutcomes, fold, sharedSteps, wrapWords } from '../trace-layout.js';
import { textWidth } from '../width.js';
import type { FlowJudgement } from '../../judge/index.js';
import { caveatText, noServiceText, pinText, unknownText as unknownPartText } from '../judgement.js';
import { formatPct, conditionText, assumptionText } from './words.js';
import { kernelFateText, shortfallText } from './kernel.js';
import { stepText, chainAt, whereText, fateText, shownSteps } from './steps.js';
import { masqueradeText, answerOf, answerOfScenarios } from './answer.js';

interface TextOptions {
  readonly verbose: boolean;
  /** Evidence location of a dump line: `file:line` (cluster traces leave the node's folder out). */
  readonly loc?: (file: string | null, line: number | null) => string;
}

/** An outcome's first line: share, fate, where it goes, masquerade. */
export function outcomeHead(o: TraceOutcome, c: Colors, indent: string): string[] {
  const head = `${indent}${formatPct(o.probability).padStart(7)}  `;
  const masq = masqueradeText(o);
  const where = printable(whereText(o), 240) + (masq ? ` · ${masq}` : '');
  const fate = fateText(o, chalkless);
  const lines = wrapWords(`${fate}${o.verdict === 'UNKNOWN' ? ':' : ' '} ${where}`, `${indent}           `, textWidth(), head);
  // Colour the fate after folding (widths are counted on plain text).
  lines[0] = lines[0].replace(fate, fateText(o, c));
  return lines;
}
const chalkless = chalkInit(false);

/** A run of rules a statistic ladder did not take, said once without -v. */
interface Folded {
  readonly step: TraceStep;
  readonly count: number;
  readonly last: number | null;
}

function foldLadders(steps: readonly TraceStep[], verbose: boolean): Folded[] {
  const out: Folded[] = [];
  for (const s of steps) {
    const prev = out[out.length - 1];
    if (!verbose && prev && s.code === 'not-taken' && !s.missing && prev.step.code === 'not-taken' && !prev.step.missing && prev.step.table === s.table && prev.step.chain === s.chain && prev.step.file === s.file) {
      out[out.length - 1] = { step: prev.step, count: prev.count + 1, last: s.rule };
    } else out.push({ step: s, count: 1, last: s.rule });
  }
  return out;
}

/** Step lines (with their rule text under -v), each fitting the width. */
export function stepLines(steps: readonly TraceStep[], c: Colors, indent: string, opts: TextOptions): string[] {
  const lines: string[] = [];
  for (const f of foldLadders(steps, opts.verbose)) {
    const s = f.step;
    const line = s.rule !== null && s.file ? (f.count > 1 ? `:${s.rule}-${f.last}` : `:${s.rule}`) : '';
    const where = opts.loc ? opts.loc(s.file, s.rule) : '';
    const text = f.count > 1 ? `statistic: ${f.count} rules not taken` : stepText(s);
    const head = opts.loc ? `${indent}${chainAt(s)}` : `${indent}${chainAt(s)}${line}`;
    appendAll(lines, fold(head, printable(text, 200) + (where ? `  (${where})` : ''), `${indent}    `));
    if (s.text && opts.verbose) appendAll(lines, wrapWords(printable(s.text, 400), `${indent}    `).map((l) => c.dim(l)));
  }
  return lines;
}

function routeLines(o: TraceOutcome, c: Colors, indent: string, opts: TextOptions): string[] {
  const lines: string[] = [];
  const r = o.route;
  if (r) {
    const where = opts.loc ? opts.loc(r.file, r.line) : r.line ? `${r.file}:${r.line}` : '';
    appendAll(lines, wrapWords(`${printable(r.summary, 200)}${where ? ` (${printable(where, 400)})` : ''}`, `${indent}       `, textWidth(), `${indent}route  `));
    if (r.policyRule) appendAll(lines, wrapWords(`chosen by ip rule ${printable(r.policyRule, 160)}`, `${indent}      `).map((l) => c.dim(l)));
    if (r.problem) appendAll(lines, wrapWords(`problem: ${r.problem}`, indent).map((l) => c.red(l)));
  }
  // A kernel switch that ends the packet after a verdict that let it through (a reply that bypasses NAT…), and MTU shortfalls.
  if (o.fate && o.verdict !== 'DROP') appendAll(lines, wrapWords(`problem: ${printable(kernelFateText(o.fate), 400)}`, indent).map((l) => c.red(l)));
  for (const s of o.steps) if (s.code === 'mtu' && s.shortfall) appendAll(lines, wrapWords(`problem: ${shortfallText(s.shortfall)}`, indent).map((l) => c.red(l)));
  return lines;
}

/** The conditions of a scenario, as `if …` / `and if …` lines; a long one puts its evidence below. */
function conditionLines(conds: readonly Condition[], c: Colors, indent: string): string[] {
  return conds.flatMap((cond, k) => {
    const text = `${indent}${k === 0 ? '' : 'and '}${printable(conditionText(cond), 240)}`;
    const cut = text.lastIndexOf(' (');
    const lines = text.length <= textWidth() ? [text] : cut > indent.length ? [...wrapWords(text.slice(0, cut).trimStart(), indent), ...wrapWords(text.slice(cut + 1), `${indent}    `)] : wrapWords(text.trimStart(), indent);
    return lines.map((l) => c.yellow(l));
  });
}

/**
 * A trace, answer first: the verdict and each outcome's fate (per scenario when matches are
 * undecided), the assumptions, the road every outcome shares (once), then each outcome's own
 * steps. `-v` shows every step and every rule's text.
 */
/** A labelled line of the answer (`  verdict  …`, `  unknown  …`), folded to the width. */
const labelled = (label: string, text: string): string[] => wrapWords(printable(text, 1200), '           ').map((l, i) => (i === 0 ? `  ${label.padEnd(7)}  ${l.trimStart()}` : l));

/** The verdict line and what must be read with it, from the flow's judgement (src/judge/flow.ts) when given. */
function answerLines(t: Trace, groups: readonly (readonly TraceOutcome[])[], dst: string, j: FlowJudgement | undefined, c: Colors): string[] {
  const lines: string[] = [];
  if (j?.pinned) appendAll(lines, labelled('verdict', pinText(j.pinned)).map((l, i) => (i === 0 ? l.replace('PINNED', c.yellow('PINNED')) : l)));
  else if (j?.noService && j.verdict === 'UNKNOWN' && j.noService.evidence === 'partial') appendAll(lines, labelled('verdict', noServiceText(j.noService, `${dst}/${t.packet.protocol}`)));
  else if (t.outcomes.length === 0) lines.push(`  verdict  none: the trace produced no outcome`);
  else if (groups.length === 1) appendAll(lines, labelled('verdict', answerOf(groups[0])));
  else appendAll(lines, labelled('verdict', answerOfScenarios(groups)));
  if (j?.unknown && !j.pinned) appendAll(lines, labelled('unknown', unknownPartText(j.unknown)).map((l) => c.yellow(l)));
  // Stale rules are the answer's first line (nodeNotes): here, where the verdict is, they are recalled in a word.
  for (const cv of j?.caveats ?? []) appendAll(lines, labelled(cv.code === 'rules-may-be-stale' ? 'stale' : 'note', cv.code === 'rules-may-be-stale' ? `the rules shown may be stale since ${cv.since} (kube-proxy's syncs fail: note above)` : caveatText(cv)).map((l) => c.yellow(l)));
  return lines;
}

export function renderTraceText(t: Trace, c: Colors, opts: { verbose?: boolean; judgement?: FlowJudgement } = {}): string {
  const o: TextOptions = { verbose: Boolean(opts.verbose) };
  const j = opts.judgement;
  const lines: string[] = [];
  const p = t.packet;
  const dst = p.dst.includes(':') ? `[${p.dst}]:${p.dport}` : `${p.dst}:${p.dport}`;
  // "No Service matches" only when the evidence is whole and the walk saw the whole way: otherwise what is missing is said.
  const who = t.services.length
    ? t.services.join(', ')
    : j?.noService?.evidence === 'partial'
      ? 'no Service resolved (the evidence is partial)'
      : t.outcomes.some((x) => x.verdict === 'UNKNOWN')
        ? 'no Service found in this evidence (part of the way is not in it)'
        : 'no Service on this node matches';
  lines.push(`${c.bold(printable(who, 200))}  ${dst}/${p.protocol}`);

  const scenarios = t.scenarios.length ? t.scenarios : [{ conditions: [], outcomes: t.outcomes.map((_, i) => i) }];
  const groups = scenarios.map((s) => ({ conditions: s.conditions, notFollowed: s.notFollowed, outcomes: s.outcomes.map((i) => t.outcomes[i]).sort(compareOutcomes) }));
  const many = groups.length > 1;
  appendAll(lines, answerLines(t, groups.map((g) => g.outcomes), dst, j, c));
  lines.push(`  packet   ${p.from} ${p.src}:${p.sport} → ${dst}/${p.protocol}${p.inInterface ? ` in on ${p.inInterface}` : ''}${p.local ? ' (locally generated)' : ''}`);

  // The summary: every outcome's fate (with what to read with it), per scenario.
  const caveatsOf = (x: TraceOutcome) => (j?.outcomeCaveats ?? []).filter((oc) => t.outcomes[oc.outcome] === x);
  lines.push('');
  groups.forEach((g, k) => {
    if (many) {
      lines.push(c.bold(`  scenario ${k + 1} of ${groups.length}`));
      if (g.notFollowed) lines.push(c.yellow(`    the ways the trace did not follow (at least ${g.notFollowed}): unknown`));
      appendAll(lines, conditionLines(g.conditions, c, '    '));
    }
    for (const x of g.outcomes) {
      appendAll(lines, outcomeHead(x, c, many ? '  ' : ''));
      for (const oc of caveatsOf(x)) appendAll(lines, wrapWords(`note: ${printable(caveatText(oc.caveat), 600)}`, `${many ? '  ' : ''}           `).map((l) => c.yellow(l)));
    }
  });
  if (t.assumptions.length) lines.push('');
  for (const a of t.assumptions) appendAll(lines, wrapWords(printable(assumptionText(a), 240), '          ').map((l, i) => c.dim(i === 0 ? `  assume  ${l.trimStart()}` : l)));

  // The road: the steps every outcome shares once, then each outcome's own.
  const all = groups.flatMap((g) => g.outcomes);
  const roads = all.map((x) => shownSteps(x, o.verbose));
  if (all.length === 1) {
    // One outcome: its fate is the summary's line; its road follows the assumptions.
    lines.push('', '  road');
    appendAll(lines, stepLines(roads[0], c, '    ', o));
    appendAll(lines, routeLines(all[0], c, '    ', o));
    return terminalText(lines.join('\n') + '\n', c);
  }
  const { before, after, tails } = sharedSteps(roads, { kernelTails: true });
  if (before + after > 0) {
    const end0 = roads[0].length - tails[0];
    lines.push('', `  road shared by every outcome (${all.length}${many ? `, in ${groups.length} scenarios` : ''})`);
    appendAll(lines, stepLines(roads[0].slice(0, before), c, '    ', o));
    lines.push(c.dim(`    … here each outcome takes its own steps (below)${after ? ', then all go on:' : ''}`));
    appendAll(lines, stepLines(roads[0].slice(end0 - after, end0), c, '    ', o));
  }
  let n = 0;
  groups.forEach((g, k) => {
    if (many) lines.push('', c.bold(`  scenario ${k + 1} of ${groups.length}`));
    for (const x of g.outcomes) {
      const tail = tails[n];
      const own = roads[n++];
      const indent = many ? '      ' : '    ';
      if (!many) lines.push('');
      appendAll(lines, outcomeHead(x, c, many ? '  ' : ''));
      if (x.roads) lines.push(c.dim(`           ${x.roads} roads end this way; the likeliest is shown`));
      appendAll(lines, stepLines(own.slice(before, own.length - tail - after), c, indent, o));
      if (tail) {
        lines.push(c.dim(`${indent}… then, after the shared steps:`));
        appendAll(lines, stepLines(own.slice(own.length - tail), c, indent, o));
      }
      appendAll(lines, routeLines(x, c, many ? '      ' : '    ', o));
    }
  });
  return terminalText(lines.join('\n') + '\n', c);
}

