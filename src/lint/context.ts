/**
 * Everything rules share, built ONCE per lint run: the snapshot, the Service resolution, and
 * indexes (who jumps to which chain, which Service owns which chain, VIPs…). Rules must stay
 * linear in the number of rules: they look things up here instead of scanning again.
 */
import { tableShownWhole, type Chain, type Rule, type Ruleset, type Table } from '../model/netfilter.js';
import type { NodeSnapshot, ProxyMode } from '../model/snapshot.js';
import { proxyModes } from '../kube/modes.js';
import { judgeNode, type NodeJudgement } from '../judge/index.js';
import type { Evidence, Resolution, ServicePort } from '../kube/types.js';
import { servicePortName } from '../kube/hash.js';
import type { Related } from './finding.js';
import { isTargetExtension } from '../model/iptables-targets.js';

/** One iptables table of one ruleset, with reverse references. */
export interface TableIndex {
  readonly ruleset: Ruleset;
  readonly table: Table;
  /** Chain name → rules that jump or goto it (in dump order). */
  readonly referrers: ReadonlyMap<string, readonly Rule[]>;
  /** A pasted fragment: rules without `*table`/chain declarations (declaration checks are skipped). */
  readonly fragment: boolean;
  /**
   * `iptables-restore --noflush` input (kube-proxy's payload): chains it does not declare may
   * exist on the node (built-ins, other programs' chains), so they are unknown, not missing.
   */
  readonly restoreInput: boolean;
}

export interface LintContext {
  readonly snapshot: NodeSnapshot;
  /** The judged Service ports (src/judge): their `state` is the judgement's. */
  readonly resolution: Resolution;
  /** The node's judgement: evidence completeness, stale rules, leftovers, each Service port's judgement. */
  readonly judgement: NodeJudgement;
  readonly modes: readonly ProxyMode[];
  readonly tables: readonly TableIndex[];
  /** `file\0table\0chain` → the Service port that owns the chain (iptables mode). */
  serviceOfChain(file: string, table: string, chain: string): ServicePort | undefined;
  /** IPVS virtual-server key (`TCP/10.96.0.10:53`) → Service port. */
  serviceOfVirtualServer(key: string): ServicePort | undefined;
  /** `ns/name:port` of a Service port, or its id when the dump names no Service. */
  serviceLabel(s: ServicePort): string;
  /** sysctl key → value (last occurrence wins). */
  readonly sysctlValues: ReadonlyMap<string, string>;
}

export const ruleRelated = (r: Rule): Related => ({ file: r.file, line: r.line, column: r.column, text: r.raw });
export const evidenceRelated = (e: Evidence): Related => ({ file: e.file, line: e.line, text: e.text });

export function jumpTarget(r: Rule): string | undefined {
  return r.target && (r.target.kind === 'jump' || r.target.kind === 'goto') ? r.target.chain : undefined;
}

/**
 * The chain a rule's target names, as the real tools read it: `-j/-g CHAIN`, and also a `-j NAME`
 * that is no standard verdict or target extension iptables (of this family) can load — the
 * extractor keeps an undeclared NAME as an unknown extension, but iptables-restore takes it for a
 * chain and refuses it when the chain does not exist ("Couldn't load target", "Chain … does not exist").
 */
export function chainTargetOf(r: Rule, family: 4 | 6): string | undefined {
  const t = r.target;
  if (!t) return undefined;
  if (t.kind === 'jump' || t.kind === 'goto') return t.chain;
  return t.kind === 'extension' && !isTargetExtension(t.name, family) ? t.name : undefined;
}

export function buildContext(snapshot: NodeSnapshot, given: Resolution, judged?: NodeJudgement): LintContext {
  const judgement = judged ?? judgeNode(snapshot, given);
  const resolution = judgement.resolution;
  const tables: TableIndex[] = [];
  for (const rs of snapshot.rulesets) {
    for (const table of rs.tables) {
      const referrers = new Map<string, Rule[]>();
      for (const c of table.chains) {
        for (const r of c.rules) {
          const t = chainTargetOf(r, rs.family);
          if (t === undefined) continue;
          const list = referrers.get(t);
          if (list) list.push(r);
          else referrers.set(t, [r]);
        }
      }
      const declared = table.chains.some((c: Chain) => c.line !== undefined);
      // A grep, or a listing of some chains: what it does not show is unknown (issue 30).
      tables.push({ ruleset: rs, table, referrers, fragment: !tableShownWhole(table) || !declared, restoreInput: rs.restoreInput === true });
    }
  }

  const byChain = new Map<string, ServicePort>();
  const byVs = new Map<string, ServicePort>();
  // Chains of one Service port share their hash across tables: index by file and chain name.
  const fileOfService = new Map<ServicePort, Set<string>>();
  for (const s of resolution.services) {
    const files = new Set(s.evidence.map((e) => e.file));
    fileOfService.set(s, files);
    for (const [role, name] of Object.entries(s.chains)) {
      if (s.mode === 'ipvs') {
        byVs.set(name, s);
        continue;
      }
      void role;
      for (const f of files) if (!byChain.has(`${f}\0${name}`)) byChain.set(`${f}\0${name}`, s);
    }
  }
  const sysctlValues = new Map<string, string>();
  for (const [k, v] of snapshot.sysctls) sysctlValues.set(k, v.value);

  return {
    snapshot,
    resolution,
    judgement,
    modes: proxyModes(snapshot),
    tables,
    serviceOfChain: (file, _table, chain) => byChain.get(`${file}\0${chain}`),
    serviceOfVirtualServer: (key) => byVs.get(key),
    serviceLabel: (s) => (s.namespace !== null && s.name !== null ? servicePortName(s.namespace, s.name, s.portName) : s.id),
    sysctlValues,
  };
}
