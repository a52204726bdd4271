/** Renderers for cluster bundles: the node comparison table and the cross-node trace. Pure. */
import { printable } from '../source/index.js';
import type { Colors } from '../render/colors.js';
import { assumptionText, conditionText, formatPct, shownSteps, stepText, unknownText } from '../render/trace.js';
import type { TraceOutcome } from '../trace/types.js';
import type { NodeComparison, NodeDifference } from './compare.js';
import { renderColumns, type Cell, type Column } from '../render/columns.js';
import { elideServiceName } from '../render/services.js';
import type { CrossHop, CrossTrace } from './trace.js';
import type { ClusterSnapshot } from './types.js';

const COMPARISON_COLUMNS: readonly Column[] = [
  { head: 'service', shrink: true, min: 20, elide: elideServiceName },
  { head: 'cluster-ip', shrink: true, min: 15 },
  { head: 'port(s)' },
  { head: 'agree' },
  { head: 'differences', shrink: true, min: 12 },
];

/** `endpoints ×2, state`: the kinds of difference, in order of first appearance. */
function differenceKinds(diffs: readonly NodeDifference[]): string {
  const counts = new Map<string, number>();
  for (const d of diffs) counts.set(d.kind, (counts.get(d.kind) ?? 0) + 1);
  return [...counts].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(', ');
}

/** `text` wrapped at spaces to `width`, each line after the first indented by `indent`. */
function wrapAt(text: string, width: number, first: string, indent: string): string[] {
  const out: string[] = [];
  let cur = first;
  for (const word of text.split(' ')) {
    if (cur.trim().length > 0 && cur !== first && cur.length + 1 + word.length > width) {
      out.push(cur);
      cur = indent + word;
    } else cur += (cur === first || cur === indent ? '' : ' ') + word;
  }
  out.push(cur);
  return out;
}

/**
 * `kpx services --nodes` text, kubectl-style: one row per Service port (differing ones first)
 * with the kinds of difference, then each difference in words, wrapped to the width.
 */
export function renderNodeComparison(cmp: NodeComparison, c: Colors, opts: { all?: boolean; width?: number } = {}): string {
  const width = opts.width ?? 120;
  const out: string[] = [];
  out.push(...wrapAt(`${cmp.nodes.length} nodes: ${cmp.nodes.map((n) => `${printable(n, 253)} (${cmp.modes[n]?.join('+') || 'no kube-proxy rules'})`).join(', ')}`, width, '', '  '));
  for (const d of cmp.differences) out.push(...wrapAt(printable(d.message, 4096), width, '  ', '    ').map((l) => c.yellow(l)));
  if (cmp.services.length === 0) {
    out.push('No Kubernetes Services found on any node.');
    return out.join('\n') + '\n';
  }
  const shown = opts.all ? cmp.services : cmp.services.filter((s) => s.differences.length > 0);
  const rows = [...shown.filter((s) => s.differences.length > 0), ...shown.filter((s) => s.differences.length === 0)];
  if (rows.length > 0) {
    const cells: Cell[][] = rows.map((s) => {
      const agree = `${s.agreeing.length}/${cmp.nodes.length}`;
      const port = `${s.port === 0 && s.clusterIP === null ? '<unknown>' : s.port}/${s.protocol && s.protocol !== '?' ? s.protocol.toUpperCase() : '<unknown>'}`;
      return [
        printable(s.label, 253),
        s.clusterIP ?? '<none>',
        port,
        { text: agree, paint: s.differences.length ? c.yellow : c.green },
        s.differences.length ? differenceKinds(s.differences) : '',
      ];
    });
    out.push(renderColumns(COMPARISON_COLUMNS, cells, { width }).trimEnd());
    const differing = rows.filter((s) => s.differences.length > 0);
    if (differing.length) {
      out.push('', c.bold('DIFFERENCES'));
      for (const s of differing) {
        out.push(`  ${printable(s.label, 253)}`);
        for (const d of s.differences) out.push(...wrapAt(printable(d.message, 4096), width, '    - ', '      '));
      }
    }
  }
  const { servicePorts, agreeing, differing } = cmp.summary;
  out.push(`${servicePorts} Service ports: ${agreeing} agree on every node${differing ? `, ${differing} differ` : ''}.${!opts.all && agreeing > 0 ? ' (agreeing ones not shown: --all)' : ''}`);
  return out.join('\n') + '\n';
}

/** JSON for `kpx services --nodes -o json`: the comparison as is (see the report for the schema). */
export function nodeComparisonJson(cmp: NodeComparison): NodeComparison {
  return cmp;
}

/** `file:line` with the node's folder left out (the hop already names the node). */
function shortFile(file: string | null, line: number | null, dirs: ReadonlyMap<string, string>, node: string): string {
  if (!file || line === null || line === 0) return '';
  const dir = dirs.get(node);
  let f = file;
  if (dir && f.startsWith(dir)) f = f.slice(dir.length).replace(/^[/\\]+/, '');
  return `${f}:${line}`;
}

function stepLines(o: TraceOutcome, c: Colors, verbose: boolean, loc: (f: string | null, l: number | null) => string): string[] {
  const lines: string[] = [];
  for (const s of shownSteps(o, verbose)) {
    const at = loc(s.file, s.rule);
    lines.push(`      ${s.table}/${s.chain}  ${printable(stepText(s), 160)}${at ? c.dim(`  (${at})`) : ''}`);
    if (verbose && s.text) lines.push(c.dim(`          ${printable(s.text, 240)}`));
  }
  return lines;
}

function verdictText(o: TraceOutcome): string {
  switch (o.verdict) {
    case 'DNAT':
      return `DNAT → ${o.destination}`;
    case 'ACCEPT':
      return `ACCEPT (to ${o.destination})`;
    case 'NONE':
      return `no NAT: on to ${o.destination}`;
    case 'UNKNOWN':
      return `UNKNOWN: ${o.unknown ? unknownText(o.unknown) : 'the evidence cannot say'}`;
    default:
      return o.verdict;
  }
}

/** The cross-node trace as a story: per path (endpoint), each node with its rule lines and route. */
export function renderCrossTraceText(t: CrossTrace, c: Colors, opts: { verbose?: boolean; cluster?: ClusterSnapshot } = {}): string {
  const dirs = new Map((opts.cluster?.nodes ?? []).map((n) => [n.name, n.dir]));
  const o = t.origin.trace;
  const lines: string[] = [];
  const who = o.services.length ? o.services.join(', ') : `no Service on ${t.origin.node} matches`;
  lines.push(`${c.bold(printable(who, 200))}  ${t.request.destination}/${t.request.protocol}  from ${t.origin.node}`);
  const p = o.packet;
  lines.push(`  packet  ${p.from} ${p.src}:${p.sport} → ${t.request.destination}/${p.protocol} on ${t.origin.node}${p.inInterface ? ` in on ${p.inInterface}` : ''}${p.local ? ' (locally generated)' : ''}`);
  for (const a of o.assumptions) lines.push(c.dim(`  assume  ${printable(assumptionText(a), 240)}`));
  lines.push(c.dim(`  nodes   ${t.nodes.join(', ')}`));
  for (const path of t.paths) {
    lines.push('');
    const pct = t.paths.length > 1 ? `${formatPct(path.probability).padStart(7)}  ` : '';
    const road = path.nodes.join(' → ');
    const endText = path.end.kind === 'pod' ? c.green(`pod on ${path.end.node}${path.end.interface ? ` via ${path.end.interface}` : ''}`) : path.end.kind === 'node-local' ? c.green(`local on ${path.end.node}`) : c.red(`${path.end.kind} on ${path.end.node}`);
    lines.push(`${pct}${c.bold(verdictText(path.hops[0].outcome))}  ${road}  ${endText}`);
    for (const a of path.assumptions) lines.push(c.dim(`         assume ${printable(a, 200)}`));
    path.hops.forEach((h: CrossHop) => {
      const loc = (f: string | null, l: number | null) => shortFile(f, l, dirs, h.node);
      const head = h.arriving ? `  arrives ${h.arriving.src}:${h.arriving.sport} → ${h.arriving.dst}:${h.arriving.dport}${h.trace?.packet.inInterface ? ` in on ${h.trace.packet.inInterface}` : ''} (source ${h.arriving.srcReason})` : '';
      lines.push(`    [${c.cyan(h.node)}] ${h.role}${head}`);
      if (h.trace && h.trace.outcomes.length > 1) lines.push(c.dim(`      this node's trace splits: ${formatPct(h.outcome.probability)} on this branch`));
      for (const cond of h.outcome.conditions) lines.push(c.yellow(`      ${printable(conditionText(cond), 200)}`));
      lines.push(...stepLines(h.outcome, c, Boolean(opts.verbose), loc));
      if (h.outcome.masquerade) lines.push(`      masquerade${h.outcome.snatTo ? ` to ${h.outcome.snatTo}` : ''}`);
      const r = h.outcome.route;
      if (r) {
        const at = loc(r.file, r.line);
        lines.push(`      route  ${printable(r.summary, 200)}${at ? c.dim(`  (${at})`) : ''}`);
      }
      if (h.next) {
        const at = loc(h.next.file, h.next.line);
        lines.push(`      next   ${printable(h.next.summary, 200)}${at ? c.dim(`  (${at})`) : ''}`);
      }
    });
    const e = path.end;
    const ownerAt = e.owner ? shortFile(e.owner.file, e.owner.line, dirs, e.owner.node) : '';
    lines.push(`    end    ${printable(e.summary, 240)}${ownerAt ? c.dim(`  (${e.owner!.node}: ${ownerAt})`) : ''}`);
    for (const pr of path.problems) lines.push(c.red(`    problem: ${printable(pr, 240)}`));
  }
  if (t.paths.length === 0) lines.push('', 'no outcome: the first node\'s trace produced nothing to follow');
  return lines.join('\n') + '\n';
}

/**
 * JSON for `kpx trace --node A -o json`: the CrossTrace as is —
 * `{request, nodes, origin: {node, trace}, paths: [{probability, verdict, destination, nodes,
 * hops: [{node, role, arriving?, trace?, outcomeIndex, outcome, next}], end, problems, assumptions, conditions}]}`.
 */
export function crossTraceJson(t: CrossTrace): CrossTrace {
  return t;
}
