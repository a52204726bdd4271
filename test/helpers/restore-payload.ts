/**
 * kube-proxy's restore payload from a dump of the same node: what its iptables proxier pipes to
 * `iptables-restore --noflush` — the filter and nat tables with only the chains kube-proxy owns
 * declared (`:KUBE-… - [0:0]`), their rules, COMMIT; no built-in chain declarations, no rules in
 * built-in chains (kube-proxy adds those jumps one by one with `iptables -I`), none of kubelet's
 * or a CNI's chains. In iptables-save's option order (the grammar reads it; kube-proxy's own
 * order is the grammar's business).
 */
const KUBE_PROXY_CHAIN = /^KUBE-(SERVICES|EXTERNAL-SERVICES|FORWARD|NODEPORTS|PROXY-FIREWALL|POSTROUTING|MARK-MASQ|SVC-|SVL-|EXT-|FW-|SEP-|XLB-)/;

export function restorePayloadOf(save: string, owned: (chain: string) => boolean = (c) => KUBE_PROXY_CHAIN.test(c)): string {
  const out: string[] = [];
  let table: string | undefined;
  for (const line of save.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    if (line.startsWith('*')) {
      table = line.slice(1);
      if (table === 'filter' || table === 'nat') out.push(line);
      continue;
    }
    if (table !== 'filter' && table !== 'nat') continue;
    if (line === 'COMMIT') out.push(line);
    else if (line.startsWith(':')) {
      if (owned(line.slice(1).split(' ')[0])) out.push(line);
    } else if (line.startsWith('-A ')) {
      if (owned(line.split(' ')[1])) out.push(line);
    } else throw new Error(`restorePayloadOf: unexpected line ${JSON.stringify(line)}`);
  }
  return out.join('\n') + '\n';
}
