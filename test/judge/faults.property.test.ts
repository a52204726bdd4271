/**
 * The judgement under faults (issue 28, acceptance 2): generated node bundles of all three proxy
 * modes, with one fault injected at random — an endpoint chain removed, a conntrack entry pinning a
 * flow to a deleted pod, a weight-0 real server, a failing sync in kube-proxy's log, the dump cut at a
 * random line, the dump reduced to a grep, a second view of the ruleset added. For every sample:
 *  - the trace verdicts, the `services` states and the lint findings do not contradict each other;
 *  - no answer claims an absence the fault created (compared with the same bundle without the fault);
 *  - the fault's own truth is said (PINNED, stale rules, the draining trap, a second view read once).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateCluster, ipAddr, ipRoute, iptablesSave, ipsetList, ipvsadmLn, ipvsIpAddr, ipvsIptablesSave, ipvsState, kubeProxyRestorePayload, nftScript, writeNftListing, type Cluster } from '../../src/generate/index.js';
import { judgeFlow, judgeNode, partialEvidence, type NodeJudgement } from '../../src/judge/index.js';
import { resolveServices } from '../../src/kube/resolve.js';
import type { ServicePort } from '../../src/kube/types.js';
import { lintSnapshot } from '../../src/lint/run.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';
import { readFileSync } from 'node:fs';
import { snapshotOf } from '../lint/helpers.js';
import { hasRuleEvidence } from '../../src/judge/inputs.js';

type Mode = 'iptables' | 'ipvs' | 'nftables';
type Fault = 'endpoint-chain-removed' | 'conntrack-pin' | 'weight-zero' | 'failing-sync' | 'table-cut' | 'grep' | 'second-view';
const FAULTS: Record<Mode, readonly Fault[]> = {
  iptables: ['endpoint-chain-removed', 'conntrack-pin', 'failing-sync', 'table-cut', 'grep', 'second-view'],
  ipvs: ['conntrack-pin', 'weight-zero', 'failing-sync', 'table-cut', 'grep', 'second-view'],
  nftables: ['endpoint-chain-removed', 'conntrack-pin', 'failing-sync', 'table-cut', 'second-view'],
};
/** A real kube-proxy log of failing syncs (kubernetes/kubernetes#104234, see its .source). */
const FAILING_LOG = readFileSync(new URL('../fixtures/kube-proxy/klog-sync-failed.log', import.meta.url), 'utf8');
const PINNED_TO = '10.244.9.99';

/** The node's files as its tools print them (in memory). */
function bundleOf(cluster: Cluster, mode: Mode): Record<string, string> {
  if (mode === 'iptables') return { 'iptables-save.txt': iptablesSave(cluster), 'ip-addr.txt': ipAddr(cluster), 'ip-route.txt': ipRoute(cluster) };
  if (mode === 'ipvs') {
    const state = ipvsState(cluster);
    const ipt = ipvsIptablesSave(cluster, {}, state);
    return { 'iptables-save.txt': ipt, 'ipvsadm-Ln.txt': ipvsadmLn(cluster, state), 'ipset-list.txt': ipsetList(cluster, state, ipt), 'ip-addr.txt': ipvsIpAddr(cluster, state), 'ip-route.txt': ipRoute(cluster) };
  }
  let nft = '';
  writeNftListing(cluster, {}, (c) => (nft += c));
  return { 'nft-ruleset.txt': nft, 'ip-addr.txt': ipAddr(cluster), 'ip-route.txt': ipRoute(cluster) };
}

const DUMP: Record<Mode, string> = { iptables: 'iptables-save.txt', ipvs: 'ipvsadm-Ln.txt', nftables: 'nft-ruleset.txt' };

interface Injected {
  readonly files: Record<string, string>;
  /** The flow the pin fault pins (traced with --established and its source port). */
  readonly pin?: { vip: string; port: number; protocol: 'tcp' | 'udp' | 'sctp'; src: string; sport: number };
}

/** Inject one fault; `pick` chooses among candidates (a number in [0, 1)). */
function inject(files: Record<string, string>, mode: Mode, fault: Fault, pick: number, cluster: Cluster): Injected {
  const f = { ...files };
  const choose = <T>(xs: readonly T[]): T => xs[Math.min(xs.length - 1, Math.floor(pick * xs.length))];
  switch (fault) {
    case 'endpoint-chain-removed': {
      if (mode === 'iptables') {
        const lines = f['iptables-save.txt'].split('\n');
        const seps = [...new Set(lines.filter((l) => /^:KUBE-SEP-/.test(l)).map((l) => l.slice(1).split(' ')[0]))];
        const sep = choose(seps);
        f['iptables-save.txt'] = lines.filter((l) => !l.startsWith(`:${sep} `) && !l.startsWith(`-A ${sep} `)).join('\n');
      } else {
        const text = f['nft-ruleset.txt'];
        const chains = [...text.matchAll(/\n\tchain (endpoint-[^ ]+) \{\n[\s\S]*?\n\t\}\n/g)];
        const c = choose(chains);
        f['nft-ruleset.txt'] = text.slice(0, c.index) + '\n' + text.slice(c.index! + c[0].length);
      }
      return { files: f };
    }
    case 'conntrack-pin': {
      const svc = choose(cluster.services.filter((s) => s.clusterIP && s.ports.some((p) => p.endpoints.length > 0 && p.protocol !== 'sctp')));
      const port = svc.ports.find((p) => p.endpoints.length > 0 && p.protocol !== 'sctp')!;
      const src = '10.244.1.200';
      f['conntrack.txt'] = `${port.protocol}      ${port.protocol === 'tcp' ? 6 : 17} 117 ${port.protocol === 'tcp' ? 'ESTABLISHED ' : ''}src=${src} dst=${svc.clusterIP} sport=45000 dport=${port.port} src=${PINNED_TO} dst=${src} sport=${port.endpoints[0].port} dport=45000 [ASSURED] mark=0 use=1\n`;
      return { files: f, pin: { vip: svc.clusterIP, port: port.port, protocol: port.protocol as 'tcp' | 'udp', src, sport: 45000 } };
    }
    case 'weight-zero': {
      const lines = f['ipvsadm-Ln.txt'].split('\n');
      const rs = lines.map((l, i) => [l, i] as const).filter(([l]) => /^ {2}-> .* Masq {4}1 /.test(l));
      const [, at] = choose(rs);
      lines[at] = lines[at].replace(/Masq {4}1 /, 'Masq    0 ');
      f['ipvsadm-Ln.txt'] = lines.join('\n');
      f['sysctl.txt'] = `net.ipv4.vs.conn_reuse_mode = ${pick < 0.5 ? 0 : 1}\n`;
      return { files: f };
    }
    case 'failing-sync':
      f['kube-proxy.log'] = FAILING_LOG;
      return { files: f };
    case 'table-cut': {
      // A paste or a copy cut short, mid-line (a listing cut at a line's end cannot be told from a shorter
      // one: ipvsadm prints no end mark; iptables-save and nft do, and are cut anywhere).
      const text = f[DUMP[mode]];
      let at = 1 + Math.floor(pick * (text.length - 2));
      if (text[at - 1] === '\n') at++;
      f[DUMP[mode]] = text.slice(0, at);
      return { files: f };
    }
    case 'grep': {
      // `iptables-save | grep NEEDLE`: a Service's chain hash or its VIP.
      const lines = f['iptables-save.txt'].split('\n').filter((l) => l.startsWith('-A '));
      const needles = [...new Set(lines.flatMap((l) => [...l.matchAll(/KUBE-(?:SVC|SEP)-([A-Z2-7]{16})/g)].map((m) => m[1])))];
      const vips = cluster.services.map((s) => s.clusterIP).filter(Boolean);
      const needle = pick < 0.5 && needles.length ? choose(needles) : choose(vips);
      f['iptables-save.txt'] = lines.filter((l) => l.includes(needle)).join('\n') + '\n';
      if (f['iptables-save.txt'].trim() === '') f['iptables-save.txt'] = lines.slice(0, 3).join('\n') + '\n';
      return { files: f };
    }
    case 'second-view':
      if (mode === 'nftables') f['nft-script.nft'] = nftScript(cluster);
      else f['restore-input.txt'] = kubeProxyRestorePayload(f['iptables-save.txt']);
      return { files: f };
  }
}

async function judgeFiles(files: Record<string, string>): Promise<NodeJudgement> {
  const snap = await snapshotOf(files);
  return judgeNode(snap, await resolveServices(snap));
}

const label = (s: ServicePort) => (s.namespace && s.name ? `${s.namespace}/${s.name}${s.portName ? ':' + s.portName : ''}` : s.id);
const ABSENCE_STATES = new Set(['no-endpoints', 'no-local-endpoints']);
const ABSENCE_RULES = new Set(['service-no-endpoints', 'local-policy-no-local-endpoints', 'ipvs-no-real-servers']);

/** Trace a Service port's cluster IP from a pod (or the pinned flow) and judge it. */
function traceOf(node: NodeJudgement, s: ServicePort, flow?: Injected['pin']) {
  const d = parseDestination(`${s.clusterIP}:${s.port}/${s.protocol}`) as Destination;
  const t = tracePacket(node.snapshot, node.resolution, d, s.protocol!, flow ? { from: { ip: flow.src }, sport: flow.sport, assumptions: { established: true, affinityHit: false } } : { from: 'pod', assumptions: { established: false, affinityHit: false } });
  return { t, j: judgeFlow(node, t) };
}

/** The checks every sample must pass; returns nothing, throws (expect) on a contradiction. */
async function check(mode: Mode, seed: number, fault: Fault, pick: number): Promise<void> {
  const cluster = generateCluster({ seed, services: 8, nodes: 3 });
  const clean = bundleOf(cluster, mode);
  const { files, pin } = inject(clean, mode, fault, pick, cluster);
  const base = await judgeFiles(clean);
  const node = await judgeFiles(files);
  const lint = await lintSnapshot(node.snapshot, { resolution: node.resolution });
  const baseLint = await lintSnapshot(base.snapshot, { resolution: base.resolution });
  const where = `${mode} seed ${seed} ${fault} ${pick.toFixed(3)}`;

  // "No Services" is claimed only from whole evidence (the CLI says cannot tell otherwise: no ruleset at all, or partial evidence).
  if (node.resolution.services.length === 0 && hasRuleEvidence(node.snapshot)) expect(partialEvidence(node.snapshot).length, `${where}: no Service from whole evidence`).toBeGreaterThan(0);

  // No absence the fault created: a Service port not without endpoints before is not so now; lint adds no such finding.
  const before = new Map(base.resolution.services.map((s) => [s.id, s.state]));
  for (const s of node.resolution.services) {
    if (ABSENCE_STATES.has(s.state)) expect(before.get(s.id), `${where}: ${s.id} is ${s.state}, it was ${before.get(s.id)}`).toBe(s.state);
  }
  const absenceFindings = (fs: typeof lint.findings) => new Set(fs.filter((f) => ABSENCE_RULES.has(f.ruleId)).map((f) => `${f.ruleId} ${f.service ?? f.message}`));
  const baseAbsence = absenceFindings(baseLint.findings);
  for (const f of absenceFindings(lint.findings)) expect(baseAbsence.has(f), `${where}: lint claims ${f}, which the fault created`).toBe(true);

  // Lint agrees with the states: a no-endpoints finding names a Service port whose judged state is no-endpoints.
  for (const f of lint.findings.filter((x) => x.ruleId === 'service-no-endpoints')) {
    const svc = node.resolution.services.find((s) => label(s) === f.service);
    expect(svc?.state, `${where}: ${f.message}`).toBe('no-endpoints');
  }

  // Trace verdicts agree with the states, for a few Service ports with a cluster IP.
  const traced = node.resolution.services.filter((s) => s.clusterIP !== null && s.protocol !== null && s.family === 4).slice(0, 5);
  const baseById = new Map(base.resolution.services.map((s) => [s.id, s]));
  for (const s of traced) {
    const { t, j } = traceOf(node, s);
    const verdicts = new Set(t.outcomes.map((o) => o.verdict));
    const unknownShare = j.shares.find((x) => x.verdict === 'UNKNOWN')?.share ?? 0;
    const w = `${where}: ${s.id} (${s.state}) traced ${[...verdicts].join('/')}`;
    // Healthy: it DNATs; an UNKNOWN share only where the path's other rules are not whole (an IPVS node's grepped iptables-save).
    if (s.state === 'healthy') {
      expect(verdicts.has('DNAT') || unknownShare > 0, w).toBe(true);
      if (unknownShare > 0) expect(partialEvidence(node.snapshot).length, w).toBeGreaterThan(0);
    }
    if (s.state === 'no-endpoints') expect(verdicts.has('DNAT'), w).toBe(false);
    if (s.state === 'unknown') expect(unknownShare > 0 || j.verdict === 'DEPENDS' || j.cannotTell, w).toBe(true);
    const ju = node.judgementOf(s).unknown;
    if (s.state === 'partial' && ju?.share) expect(unknownShare, w).toBeGreaterThan(0);
    // A Service port that DNATed before the fault is not now refused, dropped or passed on unclaimed.
    const was = baseById.get(s.id);
    if (was?.state === 'healthy') expect(verdicts.has('DNAT') || verdicts.has('UNKNOWN'), `${w}: was healthy`).toBe(true);
  }

  // The fault's own truth.
  switch (fault) {
    case 'conntrack-pin': {
      const s = node.resolution.services.find((x) => x.clusterIP === pin!.vip && x.port === pin!.port && x.protocol === pin!.protocol)!;
      const { j } = traceOf(node, s, pin);
      expect(j.verdict, where).toBe('PINNED');
      expect(j.pinned, where).toMatchObject({ to: expect.stringContaining(PINNED_TO), fate: 'blackholed', seconds: 117 });
      expect(node.resolution.services.map((x) => [x.id, x.state]), where).toEqual(base.resolution.services.map((x) => [x.id, x.state]));
      break;
    }
    case 'failing-sync':
      expect(node.stale, where).toMatchObject({ tool: 'iptables-restore', count: 5 });
      for (const s of traced) expect(traceOf(node, s).j.caveats.map((c) => c.code), where).toContain('rules-may-be-stale');
      expect(lint.findings.some((x) => x.ruleId === 'kube-proxy-sync-failing'), where).toBe(true);
      break;
    case 'second-view':
      expect(node.resolution.services.map((x) => [x.id, x.state]), where).toEqual(base.resolution.services.map((x) => [x.id, x.state]));
      expect(lint.findings.map((x) => `${x.ruleId} ${x.message}`), where).toEqual(baseLint.findings.map((x) => `${x.ruleId} ${x.message}`));
      expect(node.secondViews.length, where).toBe(1);
      break;
    case 'weight-zero': {
      const drained = node.resolution.services.filter((s) => s.endpoints.some((e) => e.weight === 0) && s.endpoints.some((e) => e.weight !== 0));
      for (const s of drained) expect(node.judgementOf(s).caveats.map((c) => c.code), `${where}: ${s.id}`).toContain('draining-real-servers');
      break;
    }
    case 'endpoint-chain-removed': {
      const hurt = node.resolution.services.filter((s) => baseById.get(s.id)?.state === 'healthy' && s.state !== 'healthy');
      // The removed chain belonged to a Service port that is not healthy now (a chain of no Service: none is).
      for (const s of hurt) expect(['partial', 'unknown'], `${where}: ${s.id}`).toContain(s.state);
      break;
    }
    default:
      break;
  }
}

describe('the judgement under injected faults (fast-check)', () => {
  for (const mode of ['iptables', 'ipvs', 'nftables'] as const) {
    it(`${mode} mode: trace, services and lint never contradict each other, and no absence is made up`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 400 }), fc.constantFrom(...FAULTS[mode]), fc.double({ min: 0, max: 0.999, noNaN: true }), async (seed, fault, pick) => check(mode, seed, fault, pick)),
        // A fixed seed by default (a failure reproduces); KPX_FC_SEED / KPX_FC_RUNS explore further.
        { numRuns: Number(process.env.KPX_FC_RUNS ?? 25), seed: Number(process.env.KPX_FC_SEED ?? 28 + mode.length) },
      );
    }, 300_000);
  }

  it('every fault of every mode at least once (a deterministic sweep)', async () => {
    for (const mode of ['iptables', 'ipvs', 'nftables'] as const) for (const fault of FAULTS[mode]) await check(mode, 3, fault, 0.37);
  }, 300_000);
});
