/**
 * `kpx trace -o json`: always `{schemaVersion, traces: [Trace…]}`, one Trace per protocol traced
 * (one when a protocol is named). Step, condition, assumption and unknown-reason objects are open:
 * their code says which further fields they carry (docs/commands/trace.md).
 */
import { arr, bool, document, int, judgementCaveat, nullable, num, obj, oneOfStr, str, unknownPart, type Schema } from './common.js';

/**
 * 2: each trace carries its `judgement` (the verdict line: src/judge/flow.ts); an IPVS virtual server
 * without a schedulable real server REJECTs (ICMP port unreachable, ip_vs_leave), it no longer DROPs;
 * the end of a grep's chain or of an assumed entry is UNKNOWN (`chain-partial`, `hook-unknown`); the
 * ways past the scenario cap are one more scenario (`notFollowed`) with an UNKNOWN outcome.
 */
export const TRACE_VERSION = 2;

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

const unknownReason = obj({ code: code('chain-missing', 'chain-not-listed', 'chain-truncated', 'chain-partial', 'hook-unknown', 'listing-truncated', 'map-missing', 'userspace-verdict', 'not-evaluated', 'real-server-name', 'too-deep', 'too-many-branches', 'too-many-scenarios') }, {}, { closed: false });

const share = obj({ kind: code('statistic', 'numgen', 'map') }, { probability: num }, { closed: false });

const step = obj(
  {
    code: code('jump', 'goto', 'return', 'accept', 'drop', 'reject', 'dnat', 'redirect', 'snat', 'masquerade', 'mark', 'log', 'extension', 'matched', 'not-taken', 'assumed', 'policy', 'nat-map-miss', 'unknown', 'ipvs-real-server', 'ipvs-no-real-servers', 'ipvs-draining', 'conntrack-nat', 'kernel-switch', 'mtu'),
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
  { code: code('source', 'source-port', 'connection', 'affinity', 'node-addresses-unknown', 'no-routes', 'no-ruleset', 'in-interface', 'entry-assumed', 'too-many-scenarios', 'ipvs-address-local', 'node-address', 'conntrack-pinned', 'conntrack-no-entry', 'switch-assumed', 'table-inferred', 'listing-interfaces-hidden') },
  {},
  { closed: false },
);

const packet = obj({ protocol: code('tcp', 'udp', 'sctp'), family: { enum: [4, 6] }, src: str, sport: int, dst: str, dport: int, from: str, local: bool }, { inInterface: str });

const mention = obj({ file: str, line: int, text: str });

/** The flow's judgement (src/judge/types.ts FlowJudgement): the verdict line's content, with what must be read with it. */
export const flowJudgement = obj({
  verdict: code('DNAT', 'ACCEPT', 'DROP', 'REJECT', 'NONE', 'UNKNOWN', 'PINNED', 'DEPENDS', 'MIXED'),
  shares: arr(obj({ verdict: code('DNAT', 'ACCEPT', 'DROP', 'REJECT', 'NONE', 'UNKNOWN'), share: num })),
  unknown: unknownPart,
  caveats: arr(judgementCaveat),
  outcomeCaveats: arr(obj({ outcome: int, caveat: judgementCaveat })),
  cannotTell: bool,
}, {
  pinned: obj({ to: str, fate: code('blackholed', 'endpoint', 'unknown', 'untranslated'), cite: obj({ file: str, line: int }, { text: str }) }, { seconds: int }),
  noService: obj({ evidence: code('complete', 'partial'), mentions: arr(mention), partial: arr(obj({ file: str, dialect: str, table: str, kind: str }, {}, { closed: false })) }),
});

/** One node's trace of one packet. */
export const trace: Schema = obj(
  {
    packet,
    services: arr(str),
    assumptions: arr(assumption),
    outcomes: arr(outcome),
    scenarios: arr(obj({ conditions: arr(condition), outcomes: arr(int) }, { notFollowed: int })),
  },
  // `kpx trace` adds the judgement; the cluster trace's per-node traces carry none.
  { judgement: flowJudgement },
);

/** A target that names nothing here (`traces` empty): what was asked and the nearest real targets (docs/commands/trace.md). */
const noMatch = obj({}, {}, { closed: false });

export const TRACE_SCHEMA = document('trace', TRACE_VERSION, 'kpx trace -o json', obj({ traces: arr(trace) }, { noMatch }));
