/** The answer line of a trace: verdicts, places and masquerade over every outcome and scenario. */
import type { TraceOutcome } from '../../trace/types.js';
import { formatPct } from './words.js';

export function masqueradeText(o: TraceOutcome): string {
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
export function answerOf(os: readonly TraceOutcome[]): string {
  return [fatesOf(os), masqueradeMix(os)].filter(Boolean).join('; ');
}
const fatesOf = (os: readonly TraceOutcome[]) => [verdictMix(os), placeMix(os)].filter(Boolean).join(' ');

/** The answer over several scenarios: what they agree on said once, what differs said to differ. */
export function answerOfScenarios(groups: readonly (readonly TraceOutcome[])[]): string {
  const fates = groups.map(fatesOf);
  const masq = groups.map(masqueradeMix);
  const n = groups.length;
  const same = (xs: string[]) => xs.every((x) => x === xs[0]);
  const why = `${n} scenarios: matches the evidence cannot decide (below)`;
  if (!same(fates)) return `depends on ${why}`;
  return `${fates[0]} in each of ${why}; ${same(masq) ? masq[0] : 'masquerade depends on the scenario'}`;
}

