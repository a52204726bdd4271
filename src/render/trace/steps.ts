/** One trace step, a fate and where an outcome goes, as text. */
import type { RouteInfo, Share, TraceOutcome, TraceStep } from '../../trace/types.js';
import { printable } from '../../source/index.js';
import { type Colors } from '../colors.js';
import { formatPct, hex, conditionClause, quotesMatch, unknownText } from './words.js';
import { switchStepText, mtuStepText, kernelFateText } from './kernel.js';

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
export const chainAt = (s: { table: string; chain: string }) => printable(`${s.table}/${s.chain}`, 200);
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

