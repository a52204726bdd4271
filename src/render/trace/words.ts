/** Trace codes → phrases: shares, unknown ends, conditions, assumptions. */
import type { Condition, TraceAssumption, UnknownReason } from '../../trace/types.js';
import { switchName } from './kernel.js';

export function formatPct(p: number): string {
  // Sums of shares carry float noise (0.99999999999): round it away before choosing the digits.
  const v = Math.round(p * 1e9) / 1e7;
  return `${Number.isInteger(v) ? v : v.toFixed(v >= 10 ? 2 : 3)}%`;
}

export const hex = (n: number) => `0x${n.toString(16)}`;

export function unknownText(r: UnknownReason): string {
  switch (r.code) {
    case 'chain-missing':
      return `chain ${r.chain} is not in the evidence: what happens after this ${r.via} is unknown`;
    case 'chain-not-listed':
      return `chain ${r.chain} of table ${r.table} is not in ${r.file} (a listing of some chains, not the whole table): what the table does to this packet is unknown`;
    case 'chain-truncated':
      return `table ${r.table} was cut before COMMIT (last line read: ${r.line}): rules of chain ${r.chain} past the cut are not in the evidence, so what happens here is unknown`;
    case 'chain-partial':
      return `${r.file.split(/[\\/]/).pop() ?? r.file} is a paste without *table (a grep; kpx takes it as table ${r.table}): rules of chain ${r.chain} it left out decide what happens here, so it is unknown`;
    case 'hook-unknown':
      return `the walk started at ${r.table}/${r.chain} because no ${r.hook} chain is in the evidence: what the hook's other rules and its policy do is unknown`;
    case 'map-missing':
      return `map ${r.map} is not in the evidence: what happens after this lookup is unknown`;
    case 'listing-truncated':
      return `${r.file} ends mid-line at line ${r.line} (truncated) inside ${r.what}: its real servers may go on past the cut, so where the packet goes is unknown`;
    case 'userspace-verdict':
      return `${r.target}: a userspace program decides the verdict`;
    case 'not-evaluated':
      return `${r.what} is not evaluated by kpx`;
    case 'real-server-name':
      return `real server ${r.name} is printed by name (ipvsadm -L without -n): its address is not in the evidence`;
    case 'too-deep':
      return `more than ${r.limit} nested chains (a loop?): the trace stops here`;
    case 'too-many-branches':
      return `more than ${r.limit} branches: the trace stops here`;
    case 'too-many-scenarios':
      return `more than ${r.limit} ways the undecided matches can go: the ${r.notFollowed}+ ways not followed end where the evidence does not say`;
  }
}

/** The fact a condition is about, as a clause ("the packet arrives on cni0"). */
export function conditionClause(c: Condition): string {
  const s = c.subject ?? '';
  switch (c.code) {
    case 'in-interface':
      return c.holds ? `the packet arrives on ${s}` : `the packet does not arrive on ${s}`;
    case 'out-interface':
      return c.holds ? `the packet leaves by ${s}` : `the packet does not leave by ${s}`;
    case 'local-address':
      return c.holds ? `${s} is one of this node's addresses` : `${s} is not one of this node's addresses`;
    case 'ipset-missing':
      return c.holds ? `the packet is in ipset ${s} (not in the dumps)` : `the packet is not in ipset ${s} (not in the dumps)`;
    case 'ipset-undecidable':
      return c.holds ? `the packet is in ipset ${s}` : `the packet is not in ipset ${s}`;
    case 'physdev':
      return c.holds ? `physdev ${s} holds for the packet` : `physdev ${s} does not hold for the packet`;
    case 'address-type':
      return c.holds ? `${s} is of that address type` : `${s} is not of that address type`;
    default:
      return c.holds ? `\`${c.match}\` matches` : `\`${c.match}\` does not match`;
  }
}

/** Conditions about a match as written already quote it in their clause. */
export const quotesMatch = (c: Condition) => !['in-interface', 'out-interface', 'local-address', 'ipset-missing', 'ipset-undecidable', 'physdev', 'address-type'].includes(c.code);

/** `if the packet arrives on cni0 (iptables-save.txt:41 `-i cni0`)`. */
export function conditionText(c: Condition): string {
  const at = c.file && c.line !== null ? `${c.file}:${c.line}` : '';
  const evidence = [at, quotesMatch(c) ? '' : `\`${c.match}\``].filter(Boolean).join(' ');
  return `if ${conditionClause(c)}${evidence ? ` (${evidence})` : ''}`;
}

export function assumptionText(a: TraceAssumption): string {
  switch (a.code) {
    case 'source':
      switch (a.kind) {
        case 'pod': {
          const why = a.subnet ? `this node's pod subnet ${a.subnet}` : a.podNetwork ? `the pod network ${a.podNetwork} from kube-proxy's rules` : `no pod network found in the rules; assumed ${a.assumedNetwork ?? '?'}`;
          return `a pod ${a.address} (in ${why}) sends the packet`;
        }
        case 'node':
          return `the node itself sends from ${a.address} (OUTPUT path)`;
        case 'external':
          return `an external client ${a.address} (documentation address) sends to the node`;
        case 'local-address':
          return `${a.address} is one of this node's addresses: the packet is locally generated (OUTPUT path)`;
        case 'node-pod':
          return a.route ? `a pod ${a.address} of ${a.node} sends the packet (its route: ${a.route.interface ?? '?'}, ${a.route.file.split(/[\\/]/).pop() ?? a.route.file}:${a.route.line})` : `a pod ${a.address} in ${a.node}'s own pod block ${a.block ?? '?'} sends the packet`;
      }
      break;
    case 'source-port':
      return `source port ${a.port}`;
    case 'connection':
      return a.established ? 'the packet belongs to an ESTABLISHED connection: conntrack reuses its NAT, nat chains are not traversed' : 'the first packet of a NEW connection (conntrack state NEW)';
    case 'affinity':
      return a.hit ? 'session-affinity entries (-m recent) exist for this source' : 'no session-affinity entry exists for this source yet (-m recent --rcheck does not match)';
    case 'node-addresses-unknown':
      return "the node's own addresses are unknown (no ip addr, no --node-ip): where a rule asks whether an address is the node's, each answer is a scenario";
    case 'no-routes':
      return 'no ip route dump: where the packet goes after NAT is not shown';
    case 'no-ruleset':
      return `no IPv${a.family} iptables or nft ruleset in the dumps`;
    case 'in-interface':
      return `arrives on ${a.dev} (the route back to the source)`;
    case 'entry-assumed':
      return a.startKind === 'map'
        ? `the evidence has ${a.table}'s map ${a.start} but no base chain at the ${a.hook.toLowerCase()} hook: the walk starts with kube-proxy's lookup in ${a.start}`
        : `the evidence has ${a.table}/${a.start} but no ${a.hook} chain that reaches it (a fragment): the walk starts at ${a.start}`;
    case 'listing-interfaces-hidden':
      return `${a.table} is an iptables -L listing without -v (${a.file.split(/[\\/]/).pop() ?? a.file}): it does not show the rules' -i/-o interfaces; each rule is taken as if it had none`;
    case 'switch-assumed':
      return `${switchName(a.switch)}${a.iface ? ` on ${a.iface}` : ''} is not in the dumps: assumed ${a.assumed}`;
    case 'ipvs-address-local':
      return `${a.address} is an IPVS virtual server: kube-proxy binds it to kube-ipvs0, so it is taken as this node's address (no kube-ipvs0 in the evidence)`;
    case 'conntrack-pinned': {
      const at = `${a.file.split(/[\\/]/).pop() ?? a.file}:${a.line}`;
      const flags = [a.state, a.unreplied ? '[UNREPLIED]' : '', a.assured ? '[ASSURED]' : ''].filter(Boolean).join(' ');
      const where = a.translated ? `to ${a.to}` : `untranslated (reply from ${a.to} itself)`;
      const now = a.current === false ? ', NOT an endpoint now: blackholed' : a.current ? ', a current endpoint' : '';
      const until = a.timeout !== undefined ? `, for ${a.timeout}s unless a packet refreshes it` : '';
      return `conntrack entry ${at}${flags ? ` ${flags}` : ''} pins this flow ${where}${now}${until}; rules decide only NEW flows`;
    }
    case 'conntrack-no-entry':
      return a.established
        ? `no entry for this 5-tuple in the conntrack dump${a.tables > 1 ? 's' : ''}: the flow is not established on this node; the trace shows a NEW connection's fate`
        : `no conntrack entry for this 5-tuple: a packet of it is NEW, as traced`;
    case 'node-address':
      return a.from === 'assumed'
        ? `the node's addresses are unknown (no ip addr, no --node-ip): the NodePort is traced on ${a.address}, assumed to be one of them (--node-ip gives a real one)`
        : `the NodePort is traced on ${a.address}, this node's address ${a.from === 'node-ip' ? 'given with --node-ip' : 'from ip addr (--node-ip chooses another)'}`;
    case 'too-many-scenarios':
      return `more than ${a.limit} ways the undecided matches can go: only the first ${a.limit} are followed; the others end UNKNOWN`;
    case 'table-inferred':
      return a.basis === 'content'
        ? `${a.file.split(/[\\/]/).pop() ?? a.file} has no *table line: its rules are read as table ${a.table}, inferred from line ${a.line}: ${a.why}`
        : `${a.file.split(/[\\/]/).pop() ?? a.file} has no *table line and no rule says which table: ${a.table} is a guess`;
  }
  return '';
}

