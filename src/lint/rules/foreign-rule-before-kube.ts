import type { Rule, Ruleset } from '../../model/netfilter.js';
import { isTerminal } from '../../model/netfilter.js';
import { formatIp, parseIp, type Ip } from '../../model/addr.js';
import { chainOwner } from '../../kube/chains.js';
import type { ServicePort } from '../../kube/types.js';
import { tracePacket, type SourceSpec } from '../../trace/trace.js';
import type { TraceProtocol } from '../../trace/packet.js';
import type { TraceStep } from '../../trace/types.js';
import { createRule, type RuleContext } from '../rule.js';
import { jumpTarget, ruleRelated, type LintContext } from '../context.js';

/** Built-in chains where kube-proxy hooks its jumps, per table. */
const HOOKS: Readonly<Record<string, readonly string[]>> = {
  raw: ['PREROUTING', 'OUTPUT'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'OUTPUT'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
};
const BUILTIN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);
const isKubeChain = (name: string) => !BUILTIN.has(name) && chainOwner(name) === 'kube-proxy';
/** Steps that decide a packet's fate, and how the finding says it. */
const DECIDES: Partial<Record<TraceStep['code'], string>> = { accept: 'accepts', drop: 'drops', reject: 'rejects', dnat: 'rewrites (DNAT)', redirect: 'redirects' };
/** Probe packets per source kind (keeps the rule cheap on large dumps). */
const MAX_PROBES = 6;

interface Probe {
  service: ServicePort;
  from: SourceSpec;
  fromLabel: string;
  ip: Ip;
  port: number;
}

function candidatesOf(rs: Ruleset): Rule[] {
  const out: Rule[] = [];
  for (const t of rs.tables) {
    for (const name of HOOKS[t.name] ?? []) {
      const chain = t.chainsByName.get(name);
      if (!chain) continue;
      let lastKube = -1;
      chain.rules.forEach((r, i) => {
        const j = jumpTarget(r);
        if (j && isKubeChain(j)) lastKube = i;
      });
      for (let i = 0; i < lastKube; i++) {
        const r = chain.rules[i];
        const j = jumpTarget(r);
        if (j ? isKubeChain(j) : !isTerminal(r.target) && r.target?.kind !== 'return') continue;
        out.push(r);
      }
    }
  }
  return out;
}

/** Does a destination pass the rule's plain dst/protocol/port conditions? (Only to choose probes.) */
function mayMatch(r: Rule, ip: Ip, proto: string, port: number): boolean {
  for (const m of r.matches) {
    if (m.kind === 'address' && m.dir === 'dst' && m.cidr && !m.negated) {
      const c = m.cidr;
      if (c.family !== ip.family) return false;
      const bits = c.family === 4 ? 32 : 128;
      const mask = ((1n << BigInt(c.prefix)) - 1n) << BigInt(bits - c.prefix);
      if ((ip.value & mask) !== c.network) return false;
    }
    if (m.kind === 'protocol' && !m.negated && m.protocol.toLowerCase() !== proto) return false;
    if (m.kind === 'port' && m.dir === 'dst' && !m.negated && !m.ranges.some((x) => port >= x.from && port <= x.to)) return false;
  }
  return true;
}

function nodeIp(ctx: LintContext, family: 4 | 6): Ip | undefined {
  for (const ip of ctx.snapshot.extraNodeIps) if (ip.family === family) return ip;
  for (const i of ctx.snapshot.interfaces) {
    if (i.name === 'lo' || i.name === 'kube-ipvs0') continue;
    for (const a of i.addresses) if (a.family === family && a.scope !== 'host' && a.scope !== 'link') return a.ip;
  }
  return undefined;
}

/** Where a probe of a Service goes (its VIP, or a node address and its NodePort); undefined: none. */
type Destination = (s: ServicePort) => { ip: Ip; port: number } | undefined;

/**
 * Up to MAX_PROBES Services to probe from one source: those a candidate's own destination
 * conditions point at first (up to half), then the first Services.
 */
function probesFrom(candidates: readonly Rule[], services: readonly ServicePort[], from: SourceSpec, fromLabel: string, dests: Destination): Probe[] {
  const chosen = new Set<ServicePort>();
  for (const r of candidates) {
    for (const s of services) {
      if (chosen.size >= MAX_PROBES / 2) break;
      const d = dests(s);
      if (d && s.protocol !== null && !chosen.has(s) && mayMatch(r, d.ip, s.protocol, d.port) && r.matches.some((m) => (m.kind === 'address' && m.dir === 'dst') || (m.kind === 'port' && m.dir === 'dst'))) chosen.add(s);
    }
  }
  for (const s of services) {
    if (chosen.size >= MAX_PROBES) break;
    if (dests(s)) chosen.add(s);
  }
  const probes: Probe[] = [];
  for (const s of chosen) {
    const d = dests(s)!;
    probes.push({ service: s, from, fromLabel, ip: d.ip, port: d.port });
  }
  return probes;
}

/** Probes to this ruleset's iptables-mode Services: from a pod and from the node to VIPs, from outside to NodePorts. */
function probesOf(ctx: LintContext, rs: Ruleset, candidates: readonly Rule[]): Probe[] {
  const services = ctx.resolution.services.filter((s) => s.mode === 'iptables' && s.family === rs.family && s.clusterIP !== null);
  const vip: Destination = (s) => {
    const ip = s.clusterIP ? parseIp(s.clusterIP) : undefined;
    return ip ? { ip, port: s.port } : undefined;
  };
  const probes = probesFrom(candidates, services, 'pod', 'a pod', vip);
  const node = nodeIp(ctx, rs.family);
  if (node) {
    for (const p of probesFrom(candidates, services, 'node', 'the node', vip)) probes.push(p);
    for (const p of probesFrom(candidates, services, 'external', 'outside', (s) => (s.nodePort !== null ? { ip: node, port: s.nodePort } : undefined))) probes.push(p);
  }
  return probes;
}

/** A candidate that decided probes' fate: the first such probe, how it decided, and how many traced paths. */
interface Hit {
  readonly probe: Probe;
  readonly verdict: string;
  count: number;
}

type Outcomes = ReturnType<typeof tracePacket>['outcomes'];

/**
 * The candidates that decide a traced packet's fate in a built-in chain before it reaches any
 * kube-proxy chain of that table, added to `hits`.
 */
function addDecisions(outcomes: Outcomes, rs: Ruleset, byLine: ReadonlyMap<number, Rule>, probe: Probe, hits: Map<Rule, Hit>): void {
  // Rules whose match the trace could not decide (each scenario answers it one way: an `assumed`
  // step). A path that passed such a rule before reaching the candidate holds only under an
  // assumption: it does not count. Later undecided matches (e.g. POSTROUTING) do not matter.
  const undecided = new Set<string>();
  for (const o of outcomes) for (const st of o.steps) if (st.rule !== null && st.code === 'assumed') undecided.add(`${st.file}\0${st.rule}`);
  for (const o of outcomes) {
    const steps = o.steps;
    for (let i = 0; i < steps.length; i++) {
      const st = steps[i];
      if (st.rule !== null && undecided.has(`${st.file}\0${st.rule}`)) break;
      if (st.rule === null || st.file !== rs.file || !BUILTIN.has(st.chain)) continue;
      const r = byLine.get(st.rule);
      if (!r || r.chain !== st.chain || r.table !== st.table) continue;
      // The steps the candidate's chain (and the chains it reaches) took before the packet left the table.
      let k = i + 1;
      let reachedKube = false;
      while (k < steps.length && steps[k].table === st.table && (steps[k].chain === st.chain || !BUILTIN.has(steps[k].chain))) {
        if (isKubeChain(steps[k].chain)) reachedKube = true;
        k++;
      }
      if (reachedKube) continue;
      const verdict = DECIDES[steps[k - 1].code];
      if (!verdict) continue;
      const h = hits.get(r);
      if (h) h.count++;
      else hits.set(r, { probe, verdict, count: 1 });
    }
  }
}

function reportHit(ctx: RuleContext, rs: Ruleset, r: Rule, h: Hit): void {
  const j = jumpTarget(r);
  const owner = j ? chainOwner(j) : 'a non-kube-proxy';
  const dest = `${h.probe.ip.family === 6 ? `[${formatIp(h.probe.ip)}]` : formatIp(h.probe.ip)}:${h.probe.port}/${h.probe.service.protocol}`;
  const label = ctx.serviceLabel(h.probe.service);
  const firstKube = r.table && rs.tables.find((t) => t.name === r.table)?.chainsByName.get(r.chain)?.rules.find((x) => {
    const t = jumpTarget(x);
    return t !== undefined && isKubeChain(t);
  });
  ctx.report({
    messageId: 'decides',
    data: {
      owner: owner === 'unknown' ? 'a non-kube-proxy' : owner === 'a non-kube-proxy' ? owner : `a ${owner}`,
      table: r.table,
      chain: r.chain,
      verdict: h.verdict,
      from: h.probe.fromLabel,
      service: label,
      dest,
      more: h.count > 1 ? ` (${h.count} traced paths in all)` : '',
    },
    file: r.file,
    line: r.line,
    column: r.column,
    text: r.raw,
    service: label,
    related: firstKube ? [ruleRelated(firstKube)] : [],
  });
}

export default createRule({
  id: 'foreign-rule-before-kube',
  meta: {
    description: 'A rule of another agent, placed before kube-proxy\'s jumps in PREROUTING/INPUT/FORWARD/OUTPUT, accepts, drops, rejects or rewrites Service traffic first (found by tracing packets).',
    severity: 'warning',
    docs: [
      'kube-proxy inserts its jumps (KUBE-SERVICES, KUBE-FORWARD, KUBE-NODEPORTS, KUBE-PROXY-FIREWALL…) into the',
      'built-in chains, but other agents (Docker, firewalld, ufw, a CNI, a security agent) may insert their own',
      'rules above them. A rule that ACCEPTs in nat PREROUTING/OUTPUT before KUBE-SERVICES means the packet is',
      'never DNATed to a pod; a DROP/REJECT in filter INPUT/FORWARD before kube-proxy\'s rules blocks Service',
      'or NodePort traffic; a foreign DNAT hijacks the VIP. kpx does not guess from chain names: for each such',
      'rule it traces probe packets to Service VIPs (from a pod, from the node, from outside to a NodePort)',
      'and reports the rule only when a trace shows it deciding the packet\'s fate before any kube-proxy chain.',
      '',
      '**Fix:** configure the agent to append rather than insert, or to exclude the Service and pod CIDRs',
      '(Docker: `DOCKER-USER`; firewalld: put pod/Service CIDRs in a trusted zone; ufw: `ufw route allow`), or',
      'remove the rule.',
    ].join('\n'),
    messages: {
      decides: '{{owner}} rule in {{table}}/{{chain}} {{verdict}} Service traffic before kube-proxy\'s rules: traced a packet from {{from}} to {{service}} ({{dest}}) that ends here{{more}}',
    },
  },
  check(ctx) {
    for (const rs of ctx.snapshot.rulesets) {
      const candidates = candidatesOf(rs);
      if (candidates.length === 0) continue;
      const byLine = new Map<number, Rule>(candidates.map((r) => [r.line, r]));
      const hits = new Map<Rule, Hit>();
      for (const p of probesOf(ctx, rs, candidates)) {
        let trace;
        try {
          trace = tracePacket(ctx.snapshot, ctx.resolution, { ip: p.ip, ipText: formatIp(p.ip), port: p.port }, p.service.protocol as TraceProtocol, {
            from: p.from,
            assumptions: { established: false, affinityHit: false },
          });
        } catch {
          continue;
        }
        addDecisions(trace.outcomes, rs, byLine, p, hits);
      }
      for (const [r, h] of hits) reportHit(ctx, rs, r, h);
    }
  },
});
