/** kube-proxy's log, summed up (src/kube/kube-proxy-account.ts), in one line for a terminal. */
import type { LogAccount } from '../kube/kube-proxy-account.js';
import { printable } from '../source/index.js';

const times = (n: number) => (n === 1 ? 'once' : `${n} times`);

/** What the log shows, most serious first; "nothing failing" when it shows nothing wrong. */
export function logAccountLine(a: LogAccount): string {
  const parts: string[] = [];
  if (a.exited !== undefined) parts.push(`kube-proxy exited (${a.exited.slice(0, 120)})`);
  else if (a.unitFailed) parts.push(`systemd says its unit ${a.unitFailed === 'start-refused' ? 'refused to restart' : a.unitFailed}`);
  for (const s of a.syncFailures) parts.push(`${s.tool}${s.family ? ` (IPv${s.family})` : ''} sync failing ${times(s.count)}${s.count > 1 ? `, ${s.first} to ${s.last}` : `, ${s.first}`}`);
  if (a.fallback) parts.push(`asked for ${a.fallback.requested}, runs ${a.fallback.chosen ?? 'another mode'}`);
  if (a.nodeNotFound !== undefined) parts.push(`no Node named "${a.nodeNotFound}"`);
  if (a.nodeIpFallback !== undefined) parts.push(`node IP fell back to ${a.nodeIpFallback}`);
  if (a.apiUnreachable) parts.push(`API server unreachable ${times(a.apiUnreachable)}`);
  for (const h of a.hostMissing) parts.push(h === 'br-netfilter' ? 'br_netfilter / bridge-nf-call-iptables missing' : 'conntrack tool missing');
  const proxier = a.proxier ? `${a.proxier.mode} proxier${a.proxier.families.length === 2 ? ' (dual-stack)' : a.proxier.families.length === 1 ? ` (IPv${a.proxier.families[0]})` : ''}` : undefined;
  const what = parts.length ? parts.join('; ') : `${proxier ? `the ${proxier}, ` : ''}nothing failing in it`;
  const extra = [a.otherComponents ? `${a.otherComponents} other components' lines skipped` : '', a.cutLines ? `${a.cutLines} line${a.cutLines === 1 ? '' : 's'} cut by the terminal` : ''].filter(Boolean);
  return printable(`kube-proxy's log ${a.file} (${a.entries} entr${a.entries === 1 ? 'y' : 'ies'}${extra.length ? `, ${extra.join(', ')}` : ''}) shows: ${what}`, 400);
}
