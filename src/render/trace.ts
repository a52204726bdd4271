/**
 * Trace → words. The only place a trace's codes (steps, conditions, assumptions, unknown ends)
 * become text: a readable story (Service first, then each hop with its dump line). JSON is the
 * trace itself.
 */
import type { Condition, KernelFate, Share, Trace, TraceAssumption, TraceOutcome, TraceStep, UnknownReason } from '../trace/types.js';
import type { MtuShortfall, SwitchEvidence, SwitchName } from '../model/switches.js';
import { printable } from '../source/index.js';
import type { Colors } from './colors.js';

export function formatPct(p: number): string {
  const v = p * 100;
  return `${Number.isInteger(v) ? v : v.toFixed(v >= 10 ? 2 : 3)}%`;
}

const hex = (n: number) => `0x${n.toString(16)}`;

export function unknownText(r: UnknownReason): string {
  switch (r.code) {
    case 'chain-missing':
      return `chain ${r.chain} is not in the evidence: what happens after this ${r.via} is unknown`;
    case 'chain-truncated':
      return `table ${r.table} was cut before COMMIT (last line read: ${r.line}): rules of chain ${r.chain} past the cut are not in the evidence, so what happens here is unknown`;
    case 'map-missing':
      return `map ${r.map} is not in the evidence: what happens after this lookup is unknown`;
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
    case 'switch-assumed':
      return `${switchName(a.switch)}${a.iface ? ` on ${a.iface}` : ''} is not in the dumps: assumed ${a.assumed}`;
    case 'ipvs-address-local':
      return `${a.address} is an IPVS virtual server: kube-proxy binds it to kube-ipvs0, so it is taken as this node's address (no kube-ipvs0 in the evidence)`;
    case 'too-many-scenarios':
      return `more than ${a.limit} ways the undecided matches can go: only the first ${a.limit} are shown`;
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
export function fateText(f: KernelFate): string {
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
      return 'virtual server: every real server has weight 0 (draining): no new connections';
    case 'ipvs-no-real-servers':
      return 'virtual server has no real servers: the packet is dropped';
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

function verdictText(o: TraceOutcome, c: Colors): string {
  switch (o.verdict) {
    case 'DNAT':
      return c.green(`DNAT → ${o.destination}`);
    case 'ACCEPT':
      return c.green(`ACCEPT (to ${o.destination})`);
    case 'NONE':
      return c.yellow(`NONE: no rule claimed the packet; it passes on to ${o.destination} unchanged`);
    case 'DROP':
      return c.red(o.fate ? `DROP: ${fateText(o.fate)}` : 'DROP');
    case 'REJECT':
      return c.red('REJECT');
    case 'UNKNOWN':
      return c.yellow(`UNKNOWN: ${o.unknown ? unknownText(o.unknown) : 'the evidence cannot say'}`);
  }
}

function outcomeLines(o: TraceOutcome, c: Colors, pct: boolean, verbose: boolean): string[] {
  const lines: string[] = [''];
  const head = pct ? `${formatPct(o.probability).padStart(7)}  ` : '';
  lines.push(`${head}${verdictText(o, c)}${o.masquerade ? `  masquerade${o.snatTo ? ` to ${o.snatTo}` : ''}` : ''}`);
  if (o.roads) lines.push(c.dim(`         ${o.roads} roads end this way; the likeliest is shown`));
  for (const s of shownSteps(o, verbose)) {
    const line = s.rule !== null && s.file ? c.dim(`:${s.rule}`) : '';
    lines.push(`    ${s.table}/${s.chain}${line}  ${printable(stepText(s), 160)}`);
    if (s.text && verbose) lines.push(c.dim(`        ${printable(s.text, 240)}`));
  }
  if (o.route) lines.push(`    route  ${o.route.summary}${o.route.line ? c.dim(`  (${o.route.file}:${o.route.line})`) : ''}`);
  if (o.route?.policyRule) lines.push(c.dim(`           chosen by ip rule ${printable(o.route.policyRule, 160)}`));
  if (o.route?.problem) lines.push(c.red(`    problem: ${o.route.problem}`));
  if (o.fate && o.verdict !== 'DROP') lines.push(c.red(`    problem: ${printable(fateText(o.fate), 400)}`));
  for (const s of o.steps) if (s.code === 'mtu' && s.shortfall) lines.push(c.red(`    problem: ${shortfallText(s.shortfall)}`));
  return lines;
}

export function renderTraceText(t: Trace, c: Colors, opts: { verbose?: boolean } = {}): string {
  const lines: string[] = [];
  const p = t.packet;
  const verbose = Boolean(opts.verbose);
  const dst = p.dst.includes(':') ? `[${p.dst}]:${p.dport}` : `${p.dst}:${p.dport}`;
  const who = t.services.length ? t.services.join(', ') : 'no Service on this node matches';
  lines.push(`${c.bold(printable(who, 200))}  ${dst}/${p.protocol}`);
  lines.push(`  packet  ${p.from} ${p.src}:${p.sport} → ${dst}/${p.protocol}${p.inInterface ? ` in on ${p.inInterface}` : ''}${p.local ? ' (locally generated)' : ''}`);
  for (const a of t.assumptions) lines.push(c.dim(`  assume  ${printable(assumptionText(a), 240)}`));
  if (t.scenarios.length <= 1) {
    const many = t.outcomes.length > 1;
    for (const o of t.outcomes) lines.push(...outcomeLines(o, c, many, verbose));
  } else {
    // Conditional alternatives: within each scenario the shares sum to 100%.
    lines.push('', c.yellow(`  ${t.scenarios.length} scenarios: kpx cannot decide every match from the evidence; each holds under its conditions`));
    t.scenarios.forEach((s, i) => {
      lines.push('', c.bold(`  scenario ${i + 1} of ${t.scenarios.length}`));
      s.conditions.forEach((cond, k) => lines.push(c.yellow(`  ${k === 0 ? '  ' : 'and '}${printable(conditionText(cond), 240)}`)));
      for (const idx of s.outcomes) lines.push(...outcomeLines(t.outcomes[idx], c, true, verbose).map((l) => (l ? `  ${l}` : l)));
    });
  }
  return lines.join('\n') + '\n';
}
