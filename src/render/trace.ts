/**
 * Trace → words. The only place a trace's codes (steps, conditions, assumptions, unknown ends)
 * become text: a readable story (Service first, then each hop with its dump line). JSON is the
 * trace itself.
 */
import type { Condition, KernelFate, RouteInfo, Share, Trace, TraceAssumption, TraceOutcome, TraceStep, UnknownReason } from '../trace/types.js';
import type { MtuShortfall, SwitchEvidence, SwitchName } from '../model/switches.js';
import { printable, appendAll, maxOf } from '../source/index.js';
import { formatHostPort } from '../model/addr.js';
import type { NoMatchCode, Plan, PlannedTrace, Target } from '../trace/target.js';
import { chalkInit, type Colors, terminalText } from './colors.js';
import { compareOutcomes, fold, sharedSteps, wrapWords } from './trace-layout.js';
import { textWidth } from './width.js';
import type { FlowJudgement } from '../judge/index.js';
import { caveatText, noServiceText, pinText, unknownText as unknownPartText } from './judgement.js';

export function formatPct(p: number): string {
  // Sums of shares carry float noise (0.99999999999): round it away before choosing the digits.
  const v = Math.round(p * 1e9) / 1e7;
  return `${Number.isInteger(v) ? v : v.toFixed(v >= 10 ? 2 : 3)}%`;
}

const hex = (n: number) => `0x${n.toString(16)}`;

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
function conditionClause(c: Condition): string {
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
const quotesMatch = (c: Condition) => !['in-interface', 'out-interface', 'local-address', 'ipset-missing', 'ipset-undecidable', 'physdev', 'address-type'].includes(c.code);

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

const SWITCH_NAMES: Record<SwitchName | 'mtu', string> = {
  forwarding: 'forwarding',
  rp_filter: 'rp_filter',
  route_localnet: 'route_localnet',
  'bridge-nf-call-iptables': 'bridge-nf-call-iptables',
  hairpin: 'hairpin on the bridge ports',
  mtu: 'MTU along the path',
};
const switchName = (s: SwitchName | 'mtu') => SWITCH_NAMES[s];

/** `sysctl.txt:12 net.ipv4.ip_forward = 0`, or `net.bridge.… not in the dump`. */
export function evidenceText(e: SwitchEvidence): string {
  if (e.value === null) return `${e.key} not in the dump`;
  const at = e.file ? `${e.file.split(/[\\/]/).pop()}${e.line !== null ? `:${e.line}` : ''} ` : '';
  return e.key.endsWith(' hairpin') ? `${at}${e.key} ${e.value}` : `${at}${e.key} = ${e.value}`;
}

const evidenceList = (ev: readonly SwitchEvidence[]) => (ev.length ? ` (${ev.map(evidenceText).join(', ')})` : '');

function bridgeOff(iface: string | undefined, moduleLoaded: boolean | undefined): string {
  const why = moduleLoaded === false ? 'br_netfilter not loaded (no net.bridge.* key in sysctl -a)' : 'bridge-nf-call-iptables off';
  return `${why}: the endpoint's reply crosses ${iface ?? 'the bridge'} without conntrack's reverse NAT; the client sees the pod's address, not the Service's, and discards it`;
}

/** How a kernel switch ended (or broke) an outcome, for its first line: `dropped by forwarding off on eth0 (…)`. */
export function kernelFateText(f: KernelFate): string {
  const on = f.iface ? ` on ${f.iface}` : '';
  const ev = evidenceList(f.evidence);
  switch (f.code) {
    case 'dropped-forwarding-off':
      return `dropped by forwarding off${on} at the routing decision${ev}`;
    case 'dropped-rp-filter':
      return `dropped by rp_filter ${f.value ?? ''} (${f.value === 1 ? 'strict' : 'loose'})${on}: ${f.value === 1 ? `the route back to the source does not leave by ${f.iface ?? 'the input interface'}` : 'no route back to the source'}${ev}`;
    case 'dropped-route-localnet':
      return `dropped by route_localnet off${on}: 127.0.0.0/8 may not cross it${ev}`;
    case 'dropped-hairpin-off':
      return `dropped by hairpin off on ${f.iface ?? 'the bridge'}'s ports${ev}`;
    case 'reply-bypasses-nat':
      return `reply broken: ${f.moduleLoaded === false ? 'br_netfilter not loaded' : 'bridge-nf-call-iptables off'}${on}: the pod's reply is bridged to the client without reverse NAT${ev}`;
  }
}

function shortfallText(m: MtuShortfall): string {
  return `${m.tunnel} (${m.kind}) has MTU ${m.tunnelMtu}: with ${m.overhead} bytes of encapsulation that is ${m.tunnelMtu + m.overhead}, more than ${m.underlay}'s ${m.underlayMtu}; packets over ${m.underlayMtu - m.overhead} bytes are fragmented or dropped`;
}

function switchStepText(s: Extract<TraceStep, { code: 'kernel-switch' }>): string {
  const on = s.iface ? ` on ${s.iface}` : '';
  const ev = evidenceList(s.evidence);
  switch (s.switch) {
    case 'forwarding':
      return s.effect === 'drop' ? `forwarding off${on}: dropped at the routing decision${ev}` : `forwarding on${on}${ev}`;
    case 'rp_filter':
      return s.effect === 'drop'
        ? `rp_filter ${s.value ?? ''}${on}: the route back to the source fails the check: dropped${ev}`
        : `rp_filter ${s.value ?? ''} (${s.value === 1 ? 'strict' : s.value === 2 ? 'loose' : 'off'})${on}: the route back to the source passes${ev}`;
    case 'route_localnet':
      return s.effect === 'drop' ? `route_localnet off${on}: a 127.0.0.0/8 address may not cross it: dropped${ev}` : `route_localnet on${on}: 127.0.0.0/8 may cross it${ev}`;
    case 'bridge-nf-call-iptables':
      return s.effect === 'reply-bypasses-nat' ? `${bridgeOff(s.iface, s.moduleLoaded)}${ev}` : `bridged frames${on} traverse iptables${ev}`;
    case 'hairpin':
      return s.effect === 'drop'
        ? `hairpin off on every port of ${s.iface ?? 'the bridge'}: the frame would go back out of the port it came in on: dropped${ev}`
        : s.effect === 'unknown'
          ? `hairpin differs between the ports of ${s.iface ?? 'the bridge'} and the dumps do not say which port the pod is behind${ev}`
          : `hairpin on${on}: the frame may go back out of the port it came in on${ev}`;
  }
}

function mtuStepText(s: Extract<TraceStep, { code: 'mtu' }>): string {
  const hops = s.hops.map((h) => `${h.role} ${h.iface} ${h.mtu}`).join(', ');
  const largest =
    s.largest !== undefined
      ? `; the largest packet that passes unfragmented is ${s.largest} bytes`
      : s.underlayUnknown
        ? `; ${s.underlayUnknown}'s underlay is not in the dumps (ip addr holds its local address): the room for encapsulation is unknown`
        : '';
  return `MTU: ${hops}${largest}${s.shortfall ? `; ${shortfallText(s.shortfall)}` : ''}`;
}

function shareNote(s: Share | undefined, dialect: TraceStep['dialect']): string {
  if (!s) return '';
  switch (s.kind) {
    case 'statistic':
      return s.taken ? ` (statistic: taken, ${formatPct(s.probability)})` : '';
    case 'numgen':
      return ` (numgen ${s.key}: ${formatPct(s.probability)})`;
    case 'map':
      return ` (${s.map !== null ? '@' + s.map : 'map'}: ${s.key}${s.comment ? ` "${s.comment}"` : ''})`;
  }
  void dialect;
}

/** One step as its dialect would say it: `jump KUBE-SVC-…`, `DNAT to 10.244.0.3:53`, `policy ACCEPT`… */
export function stepText(s: TraceStep): string {
  const ipt = s.dialect === 'iptables';
  const note = shareNote(s.share, s.dialect);
  switch (s.code) {
    case 'jump':
    case 'goto':
      return `${s.code} ${s.target}${note}`;
    case 'return':
    case 'accept':
    case 'drop':
      return `${ipt ? s.code.toUpperCase() : s.code}${note}`;
    case 'reject':
      return `${ipt ? 'REJECT' : 'reject'}${s.with ? ` with ${s.with}` : ''}${note}`;
    case 'dnat':
      return `${ipt ? 'DNAT' : 'dnat'} to ${s.to}${s.firstOfRange ? ' (first of a range)' : ''}${note}`;
    case 'redirect':
      return ipt ? `REDIRECT to a local port ${s.ports ?? ''}${note}` : `redirect to ${s.to}${s.flags?.length ? ` ${s.flags.join(',')}` : ''}${note}`;
    case 'snat':
    case 'masquerade': {
      const flags = ipt ? s.flags.map((f) => ` --${f}`).join('') : s.flags.length ? ` ${s.flags.join(',')}` : '';
      return `${ipt ? s.code.toUpperCase() : s.code}${s.to ? ` to ${s.to}` : ''}${flags}${note}`;
    }
    case 'mark':
      return `${ipt ? (s.which === 'ct' ? 'CONNMARK' : 'MARK') : `${s.which} mark`} ${hex(s.before)} → ${hex(s.after)}${note}`;
    case 'log':
      return `LOG${s.prefix ? ` "${s.prefix}"` : ''} (continues)${note}`;
    case 'extension':
      return `${s.name} (continues)${note}`;
    case 'matched':
      return ipt ? `matched, no target${note}` : `matched (no verdict)${note}`;
    case 'not-taken':
      return s.missing ? `numgen: ${s.missing.values} of ${s.missing.of} values have no map element (${formatPct(s.probability)}): the rule does not match` : `statistic: not taken (${formatPct(s.probability)})`;
    case 'assumed':
      return `undecided, assumed: ${conditionClause(s.condition)}${quotesMatch(s.condition) ? '' : ` (\`${s.condition.match}\`)`}`;
    case 'policy':
      if (s.base === 'assumed-entry') return `end of ${s.chain}, where the walk started: policy ${s.policy} assumed`;
      return s.base === 'built-in' ? `end of built-in chain: policy ${s.policy}` : `end of base chain: policy ${s.policy.toLowerCase()}`;
    case 'nat-map-miss':
      return `${s.nat} map: no element for this packet`;
    case 'unknown':
      return unknownText(s.reason);
    case 'ipvs-real-server':
      return `${s.forward} to ${s.address}:${s.port ?? ''} (weight ${s.weight ?? '?'}, ${formatPct(s.probability)})${s.persistent ? `; persistent ${s.persistent}s: a client sticks to its first real server` : ''}`;
    case 'ipvs-draining':
      return 'virtual server: every real server has weight 0 (draining): no new connection is scheduled; ICMP port unreachable is sent back';
    case 'ipvs-no-real-servers':
      return 'virtual server has no real servers: no destination; ICMP port unreachable is sent back (ip_vs_leave)';
    case 'conntrack-nat':
      return `conntrack entry: the connection's NAT binding sends it to ${s.to} (nat chains are not walked)`;
    case 'kernel-switch':
      return switchStepText(s);
    case 'mtu':
      return mtuStepText(s);
  }
}

/** Steps worth showing without -v: an iptables built-in chain's ACCEPT policy is noise on long roads. */
export function shownSteps(o: TraceOutcome, verbose: boolean): readonly TraceStep[] {
  if (verbose || o.steps.length < 6) return o.steps;
  return o.steps.filter((s) => !(s.code === 'policy' && s.base === 'built-in' && s.policy === 'ACCEPT'));
}

/** An outcome's fate in a few words, for the first column: `DNAT → 10.244.1.5:8080`, `REJECT`… */
export function fateText(o: TraceOutcome, c: Colors): string {
  switch (o.verdict) {
    case 'DNAT':
      return c.green(`DNAT → ${o.destination}`);
    case 'ACCEPT':
      return c.green(`ACCEPT → ${o.destination}`);
    case 'NONE':
      return c.yellow(`NONE → ${o.destination}`);
    case 'DROP':
      return c.red(o.fate ? `DROP: ${kernelFateText(o.fate)}` : 'DROP');
    case 'REJECT':
      return c.red(o.verdict);
    case 'UNKNOWN':
      return c.yellow('UNKNOWN');
  }
}

/** `table/chain:rule`: table and chain names are dump text (a chain may be named with control characters). */
const chainAt = (s: { table: string; chain: string }) => printable(`${s.table}/${s.chain}`, 200);
const at = (s: TraceStep) => `${chainAt(s)}${s.rule !== null && s.file ? `:${s.rule}` : ''}`;

/** Where a delivered packet goes, from the route's typed fields (device, next hop, role). */
function routeWhere(r: RouteInfo): string {
  if (r.problem) return r.summary;
  if (r.type === 'local') return 'to a process on this node (local address)';
  const dev = r.dev ?? '?';
  const bridge = r.interfaceRole === 'bridge' ? 'bridge ' : r.interfaceRole === 'tunnel' ? 'tunnel ' : '';
  if (r.via && r.destination && /\/0$/.test(r.destination)) return `out of the node by the default gateway ${r.via} on ${dev}`;
  if (r.via) return `to another node via ${bridge}${dev}, next hop ${r.via}`;
  if (r.interfaceRole === 'pod-veth' || r.interfaceRole === 'bridge') return `to a pod on this node via ${bridge}${dev}`;
  return r.summary;
}

/** The end of an outcome in words: where it is delivered, or which rule stopped it, or why kpx cannot tell. */
export function whereText(o: TraceOutcome): string {
  if (o.verdict === 'UNKNOWN') return o.unknown ? unknownText(o.unknown) : 'the evidence cannot say';
  if (o.delivery === 'stopped') {
    const last = o.steps[o.steps.length - 1];
    if (!last) return 'stopped';
    switch (last.code) {
      case 'drop':
        return `dropped by ${at(last)}`;
      case 'reject':
        return `rejected by ${at(last)}${last.with ? ` (${last.with})` : ''}`;
      case 'policy':
        return `dropped by the policy of ${chainAt(last)}`;
      case 'ipvs-no-real-servers':
        return `refused: IPVS virtual server ${printable(last.chain, 200)} has no real servers; the kernel answers ICMP port unreachable (ip_vs_leave): connection refused at once`;
      case 'ipvs-draining':
        return `refused: every real server of IPVS virtual server ${printable(last.chain, 200)} has weight 0; the kernel answers ICMP port unreachable (ip_vs_leave): connection refused at once`;
      default:
        return `stopped at ${at(last)}: ${stepText(last)}`;
    }
  }
  if (o.route) {
    // The route table is only consulted for forwarded packets; a local delivery is the INPUT path.
    return o.delivery === 'local' && o.route.type === 'local' ? 'to a process on this node (INPUT)' : routeWhere(o.route);
  }
  return o.delivery === 'local' ? 'to a process on this node (INPUT)' : 'route not known (no ip route dump)';
}

function masqueradeText(o: TraceOutcome): string {
  return o.masquerade ? `masquerade${o.snatTo ? ` to ${o.snatTo}` : ''}` : '';
}

/** Where an endpoint is, for the summary's counts. */
type Place = 'this node' | 'other nodes' | 'outside the node' | 'route not known';
function placeOf(o: TraceOutcome): Place | undefined {
  if (o.delivery === 'stopped' || o.delivery === 'unknown') return undefined;
  if (o.delivery === 'local') return 'this node';
  const r = o.route;
  if (!r || r.problem) return 'route not known';
  if (r.type === 'local') return 'this node';
  if (r.via && /\/0$/.test(r.destination)) return 'outside the node';
  if (r.via) return 'other nodes';
  if (r.interfaceRole === 'pod-veth' || r.interfaceRole === 'bridge') return 'this node';
  return 'route not known';
}

/** `DNAT 71.43% · REJECT 28.57%`: the verdicts of a set of outcomes whose shares sum to 1. */
function verdictMix(os: readonly TraceOutcome[]): string {
  const by = new Map<string, number>();
  for (const o of os) by.set(o.verdict, (by.get(o.verdict) ?? 0) + o.probability);
  return [...by].sort((a, b) => b[1] - a[1]).map(([v, p]) => `${v} ${formatPct(p)}`).join(' · ');
}

/** `to 7 endpoints: 2 on this node (28.57%), 5 on other nodes (71.43%)`. */
function placeMix(os: readonly TraceOutcome[]): string {
  const delivered = os.filter((o) => placeOf(o) !== undefined);
  if (delivered.length === 0) return '';
  const by = new Map<Place, { n: number; p: number }>();
  for (const o of delivered) {
    const k = placeOf(o)!;
    const e = by.get(k) ?? { n: 0, p: 0 };
    by.set(k, { n: e.n + 1, p: e.p + o.probability });
  }
  const parts = [...by].sort((a, b) => b[1].p - a[1].p).map(([k, e]) => `${e.n} ${k === 'route not known' ? 'with the route not known' : k === 'outside the node' ? 'outside the node' : `on ${k}`} (${formatPct(e.p)})`);
  const n = new Set(delivered.map((o) => o.destination)).size;
  const noun = delivered.every((o) => o.verdict === 'DNAT') ? 'endpoint' : 'destination';
  const known = [...by.keys()].some((k) => k !== 'route not known');
  return `to ${n} ${noun}${n === 1 ? '' : 's'}${known ? `: ${parts.join(', ')}` : ''}`;
}

function masqueradeMix(os: readonly TraceOutcome[]): string {
  const delivered = os.filter((o) => o.delivery === 'forward' || o.delivery === 'local');
  if (delivered.length === 0) return '';
  const masq = delivered.filter((o) => o.masquerade);
  if (masq.length === 0) return 'no masquerade';
  if (masq.length === delivered.length) return 'masqueraded (source NAT)';
  return `masqueraded on ${formatPct(masq.reduce((n, o) => n + o.probability, 0))}`;
}

/** One scenario's answer in a line: `DNAT 100% to 7 endpoints: …; no masquerade`. */
function answerOf(os: readonly TraceOutcome[]): string {
  return [fatesOf(os), masqueradeMix(os)].filter(Boolean).join('; ');
}
const fatesOf = (os: readonly TraceOutcome[]) => [verdictMix(os), placeMix(os)].filter(Boolean).join(' ');

/** The answer over several scenarios: what they agree on said once, what differs said to differ. */
function answerOfScenarios(groups: readonly (readonly TraceOutcome[])[]): string {
  const fates = groups.map(fatesOf);
  const masq = groups.map(masqueradeMix);
  const n = groups.length;
  const same = (xs: string[]) => xs.every((x) => x === xs[0]);
  const why = `${n} scenarios: matches the evidence cannot decide (below)`;
  if (!same(fates)) return `depends on ${why}`;
  return `${fates[0]} in each of ${why}; ${same(masq) ? masq[0] : 'masquerade depends on the scenario'}`;
}

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

/** The most characters of a rule's text each JSON trace step carries (what the text renderer shows under -v). */
export const STEP_TEXT_JSON = 400;

/**
 * A trace for `-o json`: as the engine made it, but a step's rule text longer than STEP_TEXT_JSON
 * is cut there (`textTruncated: true`; file and rule say where the whole line is). Every step of
 * a rule repeats its text: a rule of 6,000 undecided statements has 6,000 steps, and their texts
 * would make the JSON grow with the square of the rule's length.
 */
export function traceJson(t: Trace): Trace {
  const long = t.outcomes.some((o) => o.steps.some((s) => s.text !== undefined && s.text.length > STEP_TEXT_JSON));
  if (!long) return t;
  return { ...t, outcomes: t.outcomes.map((o) => ({ ...o, steps: o.steps.map(boundedStep) })) };
}

export function boundedStep<S extends TraceStep>(s: S): S {
  return s.text !== undefined && s.text.length > STEP_TEXT_JSON ? { ...s, text: `${s.text.slice(0, STEP_TEXT_JSON - 1)}…`, textTruncated: true } : s;
}
