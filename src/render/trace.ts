/** Trace → a readable story (Service first, then each hop with its dump line), or JSON. */
import type { Trace, TraceOutcome } from '../trace/types.js';
import { printable } from '../source/index.js';
import type { Colors } from './colors.js';
import { formatPct } from '../trace/iptables.js';

function verdictText(o: TraceOutcome, c: Colors): string {
  switch (o.verdict) {
    case 'DNAT':
      return c.green(`DNAT → ${o.destination}`);
    case 'ACCEPT':
      return c.green(`ACCEPT (to ${o.destination})`);
    case 'NONE':
      return c.yellow(`NONE: no rule claimed the packet; it passes on to ${o.destination} unchanged`);
    case 'DROP':
      return c.red('DROP');
    case 'REJECT':
      return c.red('REJECT');
  }
}

export function renderTraceText(t: Trace, c: Colors, opts: { verbose?: boolean } = {}): string {
  const lines: string[] = [];
  const p = t.packet;
  const dst = p.dst.includes(':') ? `[${p.dst}]:${p.dport}` : `${p.dst}:${p.dport}`;
  const who = t.services.length ? t.services.join(', ') : 'no Service on this node matches';
  lines.push(`${c.bold(printable(who, 200))}  ${dst}/${p.protocol}`);
  lines.push(`  packet  ${p.from} ${p.src}:${p.sport} → ${dst}/${p.protocol}${p.inInterface ? ` in on ${p.inInterface}` : ''}${p.local ? ' (locally generated)' : ''}`);
  for (const a of t.assumptions) lines.push(c.dim(`  assume  ${a}`));
  const many = t.outcomes.length > 1;
  t.outcomes.forEach((o, i) => {
    lines.push('');
    const head = many ? `${formatPct(o.probability).padStart(7)}  ` : '';
    lines.push(`${head}${verdictText(o, c)}${o.masquerade ? `  masquerade${o.snatTo ? ` to ${o.snatTo}` : ''}` : ''}`);
    for (const cond of o.conditions) lines.push(c.yellow(`         ${cond}`));
    const shown = opts.verbose ? o.steps : o.steps.filter((s) => !s.action.startsWith('end of built-in chain: policy ACCEPT') || o.steps.length < 6);
    for (const s of shown) {
      const where = `${s.table}/${s.chain}`;
      const line = s.rule !== null && s.file ? c.dim(`:${s.rule}`) : '';
      lines.push(`    ${where}${line}  ${printable(s.action, 160)}`);
      if (s.text && opts.verbose) lines.push(c.dim(`        ${printable(s.text, 240)}`));
    }
    if (o.route) lines.push(`    route  ${o.route.summary}${o.route.line ? c.dim(`  (${o.route.file}:${o.route.line})`) : ''}`);
    if (o.route?.policyRule) lines.push(c.dim(`           chosen by ip rule ${printable(o.route.policyRule, 160)}`));
    if (o.route?.problem) lines.push(c.red(`    problem: ${o.route.problem}`));
    void i;
  });
  return lines.join('\n') + '\n';
}
