/**
 * `kpx trace -o json`: always `{schemaVersion, traces: [Trace…]}`, one Trace per protocol traced
 * (one when a protocol is named). Step, condition, assumption and unknown-reason objects are open:
 * their code says which further fields they carry (docs/commands/trace.md).
 */
import { arr, bool, document, int, nullable, num, obj, oneOfStr, str, type Schema } from './common.js';

export const TRACE_VERSION = 1;

const code = (...codes: string[]) => oneOfStr(...codes);

export const condition = obj(
  {
    code: code('in-interface', 'out-interface', 'local-address', 'address-type', 'ipset-missing', 'ipset-undecidable', 'set-element', 'limit', 'physdev', 'socket', 'not-evaluated'),
    holds: bool,
    match: str,
    table: str,
    chain: str,
    file: nullable(str),
    line: nullable(int),
  },
  { subject: str },
);

const unknownReason = obj({ code: code('chain-missing', 'chain-not-listed', 'chain-truncated', 'listing-truncated', 'map-missing', 'userspace-verdict', 'not-evaluated', 'real-server-name', 'too-deep', 'too-many-branches') }, {}, { closed: false });

const share = obj({ kind: code('statistic', 'numgen', 'map') }, { probability: num }, { closed: false });

const step = obj(
  {
    code: code('jump', 'goto', 'return', 'accept', 'drop', 'reject', 'dnat', 'redirect', 'snat', 'masquerade', 'mark', 'log', 'extension', 'matched', 'not-taken', 'assumed', 'policy', 'nat-map-miss', 'unknown', 'ipvs-real-server', 'ipvs-no-real-servers', 'ipvs-draining', 'kernel-switch', 'mtu'),
    dialect: code('iptables', 'nft', 'ipvs', 'kernel'),
    table: str,
    chain: str,
    rule: nullable(int),
    file: nullable(str),
  },
  { text: str, share, condition, reason: unknownReason },
  { closed: false },
);

const route = obj({ destination: str, type: str, table: str, summary: str, line: int, file: str }, { dev: str, via: str, src: str, policyRule: str, interfaceRole: str, problem: str });

export const outcome = obj(
  {
    probability: num,
    verdict: code('DNAT', 'ACCEPT', 'DROP', 'REJECT', 'NONE', 'UNKNOWN'),
    destination: str,
    masquerade: bool,
    route: nullable(route),
    conditions: arr(condition),
    delivery: code('forward', 'local', 'stopped', 'unknown'),
    steps: arr(step),
  },
  {
    snatTo: str,
    unknown: unknownReason,
    roads: int,
    // A kernel switch that ended the packet (src/model/switches.ts): its code and the evidence it rests on.
    fate: obj({ code: code('dropped-forwarding-off', 'dropped-rp-filter', 'dropped-route-localnet', 'dropped-hairpin-off', 'reply-bypasses-nat') }, {}, { closed: false }),
  },
);

const assumption = obj(
  { code: code('source', 'source-port', 'connection', 'affinity', 'node-addresses-unknown', 'no-routes', 'no-ruleset', 'in-interface', 'entry-assumed', 'too-many-scenarios', 'ipvs-address-local', 'node-address', 'conntrack-pinned', 'conntrack-no-entry', 'switch-assumed', 'listing-interfaces-hidden') },
  {},
  { closed: false },
);

const packet = obj({ protocol: code('tcp', 'udp', 'sctp'), family: { enum: [4, 6] }, src: str, sport: int, dst: str, dport: int, from: str, local: bool }, { inInterface: str });

/** One node's trace of one packet. */
export const trace: Schema = obj({
  packet,
  services: arr(str),
  assumptions: arr(assumption),
  outcomes: arr(outcome),
  scenarios: arr(obj({ conditions: arr(condition), outcomes: arr(int) })),
});

/** A target that names nothing here (`traces` empty): what was asked and the nearest real targets (docs/commands/trace.md). */
const noMatch = obj({}, {}, { closed: false });

export const TRACE_SCHEMA = document('trace', TRACE_VERSION, 'kpx trace -o json', obj({ traces: arr(trace) }, { noMatch }));
