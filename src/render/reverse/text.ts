/** `kpx reverse` as text: the Service ports that send connections to a pod address, their front ends and evidence. */
import type { ReverseResult } from '../../graph/reverse.js';
import { formatHostPort } from '../../model/addr.js';
import { escapeControls, printable } from '../../source/index.js';

function pct(p: number | null): string {
  if (p === null) return 'unknown';
  return `${(p * 100).toFixed(2)}%`;
}

/** Text rendering (plain; colours are added by the caller's Colors when wanted). */
export function renderReverseText(r: ReverseResult, c: { bold(s: string): string; dim(s: string): string; readonly level?: number }): string {
  const t = r.target.port !== undefined ? formatHostPort(r.target.ip, r.target.port) : r.target.ip;
  const lines: string[] = [];
  const where = r.nodes.length === 1 ? `node ${r.nodes[0]}` : `${r.nodes.length} nodes`;
  if (r.matches.length === 0) lines.push(`No Service port on ${where} sends connections to ${t}.`);
  else lines.push(c.bold(`${t} is an endpoint of ${r.matches.length} Service port${r.matches.length === 1 ? '' : 's'} on ${where}:`));
  for (const m of r.matches) {
    const ep = formatHostPort(m.endpoint.ip, m.endpoint.port ?? undefined);
    const loc = m.endpoint.local === true ? 'local' : m.endpoint.local === false ? 'remote' : 'locality unknown';
    lines.push('');
    lines.push(`  ${c.bold(m.service)}  → ${ep}  (${m.mode} mode, ${loc}${m.endpoint.via ? `, via ${m.endpoint.via}` : ''}${r.nodes.length > 1 ? `, node ${m.node}` : ''})`);
    for (const f of m.frontends) {
      const addr = f.kind === 'nodePort' ? `*:${f.port}` : formatHostPort(f.address!, f.port);
      lines.push(`    ${f.kind.padEnd(15)} ${`${addr}/${f.protocol}`.padEnd(30)} ${pct(f.probability).padStart(8)}  ${f.policy} policy${f.note ? c.dim(`  (${f.note})`) : ''}`);
    }
    lines.push(`    ${c.dim('evidence')}`);
    const seen = new Set<string>();
    for (const e of m.evidence) {
      const k = `${e.file}:${e.line}`;
      if (seen.has(k)) continue;
      seen.add(k);
      lines.push(`      ${c.dim(printable(k, 120))}  ${printable(e.text, 240)}`);
    }
  }
  if (r.otherDnat.length) {
    lines.push('');
    lines.push(c.bold(`Other DNAT rules to ${t}:`));
    for (const d of r.otherDnat) lines.push(`  ${d.where}  to ${d.to}${r.nodes.length > 1 ? ` (node ${d.node})` : ''}\n      ${c.dim(printable(`${d.file}:${d.line}`, 120))}  ${printable(d.text, 240)}`);
  }
  // Dump text (chain names, node names) that got this far is escaped; chalk's colour sequences stay.
  return escapeControls(lines.join('\n') + '\n', (c.level ?? 0) > 0);
}
