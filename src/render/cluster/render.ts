/** Renderers for cluster bundles: the node comparison table and the cross-node trace. Pure. */
import { printable, appendAll } from '../../source/index.js';
import type { Colors } from '../colors.js';
import { chalkInit, terminalText } from '../colors.js';
import { assumptionText, boundedStep, conditionText, fateText, formatPct, shownSteps, stepLines, traceJson } from '../trace/index.js';
import { compareOutcomes, sharedSteps, wrapWords } from '../trace-layout.js';
import { textWidth } from '../width.js';
import type { NodeComparison, NodeDifference } from '../../cluster/compare.js';
import { renderColumns, type Cell, type Column } from '../columns.js';
import type { CrossHop, CrossPath, CrossTrace } from '../../cluster/trace.js';
import type { ClusterSnapshot } from '../../cluster/types.js';

const COMPARISON_COLUMNS: readonly Column[] = [
  // Names and addresses are copied into the next command: never cut (a long one goes alone on its line).
  { head: 'service', keep: true },
  { head: 'cluster-ip', keep: true },
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
  appendAll(out, wrapAt(`${cmp.nodes.length} nodes: ${cmp.nodes.map((n) => `${printable(n, 253)} (${printable(cmp.modes[n]?.join('+') || 'no kube-proxy rules', 120)})`).join(', ')}`, width, '', '  '));
  for (const d of cmp.differences) appendAll(out, wrapAt(printable(d.message, 4096), width, '  ', '    ').map((l) => c.yellow(l)));
  if (cmp.services.length === 0) {
    out.push('No Kubernetes Services found on any node.');
    return terminalText(out.join('\n') + '\n', c);
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
        for (const d of s.differences) appendAll(out, wrapAt(printable(d.message, 4096), width, '    - ', '      '));
      }
    }
  }
  const { servicePorts, agreeing, differing } = cmp.summary;
  out.push(`${servicePorts} Service ports: ${agreeing} agree on every node${differing ? `, ${differing} differ` : ''}.${!opts.all && agreeing > 0 ? ' (agreeing ones not shown: --all)' : ''}`);
  return terminalText(out.join('\n') + '\n', c);
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

/** A path's end in words: a pod on which node via which device, or where and why it stops. */
function endText(path: CrossPath, c: Colors): string {
  const e = path.end;
  if (e.kind === 'pod') return c.green(`to a pod on ${e.node}${e.interface ? ` via ${e.interface}` : ''}`);
  if (e.kind === 'node-local') return c.green(`to a process on ${e.node}`);
  return c.red(`${e.kind} on ${e.node}`);
}

/** A path's first line: share, fate on the first node, the nodes it crosses, where it ends. */
function pathHead(path: CrossPath, c: Colors): string[] {
  const o = path.hops[0].outcome;
  const plain = chalkInit(false);
  const road = path.nodes.length > 1 ? `${path.nodes.join(' → ')}, ` : '';
  const masq = path.hops.some((h) => h.outcome.masquerade) ? ' · masquerade' : '';
  const fate = fateText(o, plain);
  const lines = wrapWords(`${fate}${o.verdict === 'UNKNOWN' ? ':' : ' '} ${road}${endText(path, plain)}${masq}`, '           ', textWidth(), `${formatPct(path.probability).padStart(7)}  `);
  lines[0] = lines[0].replace(fate, fateText(o, c));
  return lines;
}

/** `DNAT 100% to 2 endpoints: 1 on k8s-worker (50%), …`: the answer over every path. */
function crossAnswer(paths: readonly CrossPath[]): string {
  const verdicts = new Map<string, number>();
  for (const p of paths) verdicts.set(p.verdict, (verdicts.get(p.verdict) ?? 0) + p.probability);
  const mix = [...verdicts].sort((a, b) => b[1] - a[1]).map(([v, p]) => `${v} ${formatPct(p)}`).join(' · ');
  const ends = new Map<string, { n: number; p: number }>();
  for (const p of paths) {
    const k = p.end.kind === 'pod' ? `on ${p.end.node}` : `${p.end.kind} on ${p.end.node}`;
    const e = ends.get(k) ?? { n: 0, p: 0 };
    ends.set(k, { n: e.n + 1, p: e.p + p.probability });
  }
  const where = [...ends].sort((a, b) => b[1].p - a[1].p).map(([k, e]) => `${e.n} ${k} (${formatPct(e.p)})`).join(', ');
  const masq = paths.filter((p) => p.hops.some((h) => h.outcome.masquerade));
  const m = masq.length === 0 ? 'no masquerade' : masq.length === paths.length ? 'masqueraded (source NAT)' : `masqueraded on ${formatPct(masq.reduce((n, p) => n + p.probability, 0))}`;
  const n = new Set(paths.map((p) => p.destination)).size;
  return `${mix} to ${n} ${paths.every((p) => p.verdict === 'DNAT') ? 'endpoint' : 'destination'}${n === 1 ? '' : 's'}: ${where}; ${m}`;
}

/**
 * The cross-node trace, answer first: every path's fate and end, the first node's road shared by
 * every path once, then each path's own steps, node by node, to its end.
 */
export function renderCrossTraceText(t: CrossTrace, c: Colors, opts: { verbose?: boolean; cluster?: ClusterSnapshot } = {}): string {
  const dirs = new Map((opts.cluster?.nodes ?? []).map((n) => [n.name, n.dir]));
  const verbose = Boolean(opts.verbose);
  const o = t.origin.trace;
  const lines: string[] = [];
  const who = o.services.length ? o.services.join(', ') : `no Service on ${t.origin.node} matches`;
  lines.push(`${c.bold(printable(who, 200))}  ${t.request.destination}/${t.request.protocol}  from ${t.origin.node}`);
  const paths = [...t.paths].sort((a, b) => compareOutcomes({ ...a.hops[0].outcome, probability: a.probability, destination: a.destination }, { ...b.hops[0].outcome, probability: b.probability, destination: b.destination }));
  if (paths.length) appendAll(lines, wrapWords(crossAnswer(paths), '           ', textWidth(), '  verdict  '));
  const p = o.packet;
  lines.push(`  packet   ${p.from} ${p.src}:${p.sport} → ${t.request.destination}/${p.protocol} on ${t.origin.node}${p.inInterface ? ` in on ${p.inInterface}` : ''}${p.local ? ' (locally generated)' : ''}`);
  lines.push('');
  for (const path of paths) appendAll(lines, pathHead(path, c));
  if (paths.length === 0) lines.push("no outcome: the first node's trace produced nothing to follow");
  lines.push('');
  for (const a of o.assumptions) appendAll(lines, wrapWords(printable(assumptionText(a), 240), '          ', textWidth(), '  assume  ').map((l) => c.dim(l)));
  appendAll(lines, wrapWords(t.nodes.join(', '), '          ', textWidth(), '  nodes   ').map((l) => c.dim(l)));

  // The first node's steps every path shares, once; then each path's own.
  const origin = t.origin.node;
  const originLoc = (f: string | null, l: number | null) => shortFile(f, l, dirs, origin);
  const firstRoads = paths.map((x) => shownSteps(x.hops[0].outcome, verbose));
  const { before, after } = sharedSteps(firstRoads);
  if (before + after > 0) {
    lines.push('', `  road on ${origin} shared by every path (${paths.length})`);
    appendAll(lines, stepLines(firstRoads[0].slice(0, before), c, '    ', { verbose, loc: originLoc }));
    lines.push(c.dim(`    … here each path takes its own steps (below)${after ? ', then all go on:' : ''}`));
    appendAll(lines, stepLines(firstRoads[0].slice(firstRoads[0].length - after), c, '    ', { verbose, loc: originLoc }));
  }
  paths.forEach((path, k) => {
    lines.push('');
    appendAll(lines, pathHead(path, c));
    for (const a of path.assumptions) appendAll(lines, wrapWords(printable(a, 200), '                ', textWidth(), '         assume ').map((l) => c.dim(l)));
    path.hops.forEach((h: CrossHop, i) => {
      const loc = (f: string | null, l: number | null) => shortFile(f, l, dirs, h.node);
      const head = h.arriving ? `  arrives ${h.arriving.src}:${h.arriving.sport} → ${h.arriving.dst}:${h.arriving.dport}${h.trace?.packet.inInterface ? ` in on ${h.trace.packet.inInterface}` : ''} (source ${h.arriving.srcReason})` : '';
      appendAll(lines, wrapWords(`${h.role}${head}`, '        ', textWidth(), `    [${h.node}] `).map((l, j) => (j === 0 ? l.replace(`[${h.node}]`, `[${c.cyan(h.node)}]`) : l)));
      if (h.trace && h.trace.outcomes.length > 1) lines.push(c.dim(`      this node's trace splits: ${formatPct(h.outcome.probability)} on this branch`));
      for (const cond of h.outcome.conditions) appendAll(lines, wrapWords(printable(conditionText(cond), 200), '        ', textWidth(), '      ').map((l) => c.yellow(l)));
      const steps = i === 0 ? firstRoads[k].slice(before, firstRoads[k].length - after) : shownSteps(h.outcome, verbose);
      appendAll(lines, stepLines(steps, c, '      ', { verbose, loc }));
      if (h.outcome.masquerade) lines.push(`      masquerade${h.outcome.snatTo ? ` to ${h.outcome.snatTo}` : ''}`);
      const r = h.outcome.route;
      if (r) {
        const at = loc(r.file, r.line);
        appendAll(lines, wrapWords(`${printable(r.summary, 200)}${at ? ` (${at})` : ''}`, '             ', textWidth(), '      route  '));
      }
      if (h.next) {
        const at = loc(h.next.file, h.next.line);
        appendAll(lines, wrapWords(`${printable(h.next.summary, 200)}${at ? ` (${at})` : ''}`, '             ', textWidth(), '      next   '));
      }
    });
    const e = path.end;
    const ownerAt = e.owner ? shortFile(e.owner.file, e.owner.line, dirs, e.owner.node) : '';
    appendAll(lines, wrapWords(`${printable(e.summary, 240)}${ownerAt ? ` (${e.owner!.node}: ${ownerAt})` : ''}`, '           ', textWidth(), '    end    '));
    for (const pr of path.problems) appendAll(lines, wrapWords(`problem: ${printable(pr, 240)}`, '      ', textWidth(), '    ').map((l) => c.red(l)));
  });
  return terminalText(lines.join('\n') + '\n', c);
}

/**
 * JSON for `kpx trace --node A -o json`: the CrossTrace as is —
 * `{request, nodes, origin: {node, trace}, paths: [{probability, verdict, destination, nodes,
 * hops: [{node, role, arriving?, trace?, outcomeIndex, outcome, next}], end, problems, assumptions, conditions}]}`.
 */
export function crossTraceJson(t: CrossTrace): CrossTrace {
  // Long rule texts are cut in every step, as in `trace -o json` (render/trace/json.ts traceJson).
  return { ...t, origin: { ...t.origin, trace: traceJson(t.origin.trace) }, paths: t.paths.map((p) => ({ ...p, hops: p.hops.map((h) => (h.trace ? { ...h, trace: traceJson(h.trace), outcome: { ...h.outcome, steps: h.outcome.steps.map(boundedStep) } } : { ...h, outcome: { ...h.outcome, steps: h.outcome.steps.map(boundedStep) } })) })) };
}
