/** A target that names nothing here (the near misses), and the header over the ports of a bare VIP or a Service name. */
import { printable, appendAll, maxOf } from '../../source/index.js';
import { formatHostPort } from '../../model/addr.js';
import type { NoMatchCode, Plan, PlannedTrace, Target } from '../../trace/target.js';
import { type Colors, terminalText } from '../colors.js';
import { wrapWords } from '../trace-layout.js';
import { textWidth } from '../width.js';

/** `kpx trace` on a target that names nothing here: what is missing, then the nearest real targets. */
export function renderNoMatchText(m: Extract<Plan, { kind: 'no-match' }>, c: Colors): string {
  const t = printable(m.target, 120);
  const head: Record<NoMatchCode, string> = {
    'port-not-served': `no Service on this node answers ${t}; its address serves:`,
    'unknown-address': `no Service on this node at ${t}`,
    'unknown-service': `no Service ${t} in the dumps`,
    'services-unnamed': `the dumps name no Service (ipvsadm and kube-ipvs0 show addresses only): trace ${t} by its VIP; VIPs here:`,
    'unknown-service-port': `${t}: the Service has no such port; its ports:`,
    'unknown-nodeport': `no Service on this node has ${t}`,
  };
  const lines = [c.yellow(head[m.code])];
  if (m.suggestions.length === 0) lines.push('  and nothing near it: `kpx services` lists what the dumps hold');
  else {
    if (m.code !== 'port-not-served' && m.code !== 'unknown-service-port' && m.code !== 'services-unnamed') lines.push('did you mean:');
    const w = Math.min(40, maxOf(m.suggestions.map((s) => s.target.length)));
    for (const s of m.suggestions) {
      const first = `  ${printable(s.target, 80).padEnd(w)}  `;
      appendAll(lines, (s.services.length ? wrapWords(printable(s.services.join(', '), 400), ' '.repeat(Math.min(first.length, 44)), textWidth(), first) : [first.trimEnd()]));
    }
  }
  if (m.more) lines.push(`  … and ${m.more} more (kpx services lists them all)`);
  if (m.code === 'unknown-address' || m.code === 'port-not-served') lines.push(c.dim(`(to trace ${t} as given: kpx trace ${t} --exact)`));
  return terminalText(lines.join('\n') + '\n', c);
}

/** Above the traces of a bare VIP or a Service name: which ports are traced, one line each. */
export function renderPlanHeader(target: Target, traces: readonly PlannedTrace[], c: Colors): string {
  if ((target.kind !== 'vip' && target.kind !== 'service') || traces.length < 2) return '';
  const what = target.kind === 'vip' ? `${printable(target.ipText, 60)} serves` : `${printable(`${target.namespace}/${target.name}`, 120)} has`;
  const lines = [c.bold(`${what} ${traces.length} port${traces.length === 1 ? '' : 's'} on this node; each is traced below:`)];
  for (const p of traces) lines.push(`  ${`${formatHostPort(p.dest.ipText, p.dest.port)}/${p.protocol}`.padEnd(28)}  ${printable(p.service ?? '', 120)}`);
  return terminalText(lines.join('\n') + '\n\n', c);
}

