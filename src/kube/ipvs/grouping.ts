/**
 * Virtual servers → Service ports. The ClusterIP virtual server is the anchor; the others
 * (externalIP, LoadBalancer, and every node address × NodePort as one item) join it by set
 * comment when the sets carry names, else by protocol (+ port for externalIP/LoadBalancer) and
 * identical real servers, or a subset or superset when a Local policy explains the difference.
 * When the grouping is ambiguous the item is a Service port of its own, with the candidates in a
 * problem.
 */
import { problem } from '../problems.js';
import { fmtId, spnKey } from './identity.js';
import type { Group, Item, Vs } from './types.js';

const push = <K, V>(m: Map<K, V[]>, k: K, v: V) => {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
};

/** The ClusterIP virtual servers, one group each, and the indexes items are matched through. */
class Anchors {
  readonly groups: Group[] = [];
  readonly groupOf = new Map<Vs, Group>();
  readonly bySpn = new Map<string, Group>();
  readonly bySig = new Map<string, Vs[]>();
  readonly byRs = new Map<string, Vs[]>();
  readonly byProto = new Map<string, Vs[]>();
  /** Candidate key lists shared between items (see candidateKeys). */
  private readonly sharedKeys = new Map<string, readonly string[]>();

  constructor(vss: readonly Vs[]) {
    for (const v of vss) {
      if (v.role !== 'cluster') continue;
      const g: Group = { anchor: v, items: [], problems: [], internalLocal: false, inferredExternalLocal: false };
      this.groups.push(g);
      this.groupOf.set(v, g);
      if (v.spn) this.bySpn.set(spnKey(v.spn, v.family, v.protocol), g);
      const fp = `${v.family}|${v.protocol}`;
      push(this.bySig, `${fp}|${v.sig}`, v);
      push(this.byProto, fp, v);
      for (const k of v.rsKeys) push(this.byRs, `${fp}|${k}`, v);
    }
  }

  /** Anchors containing every real server of `keys` (and, with `strict`, more). */
  supersets(fp: string, keys: readonly string[], strict: boolean): Vs[] {
    return [...this.countShared(fp, keys)].filter(([a, n]) => n === keys.length && (!strict || a.rsKeys.length > keys.length)).map(([a]) => a);
  }

  /** Anchors whose real servers are all in `keys`, and fewer (non-empty ones only). */
  strictSubsets(fp: string, keys: readonly string[]): Vs[] {
    return [...this.countShared(fp, keys)].filter(([a, n]) => n === a.rsKeys.length && n < keys.length).map(([a]) => a);
  }

  private countShared(fp: string, keys: readonly string[]): Map<Vs, number> {
    const count = new Map<Vs, number>();
    for (const k of keys) for (const a of this.byRs.get(`${fp}|${k}`) ?? []) count.set(a, (count.get(a) ?? 0) + 1);
    return count;
  }

  /**
   * The keys of candidate anchors for a problem. A NodePort without real servers under a Local
   * policy could belong to every ClusterIP virtual server of its protocol (11k at 10k Services):
   * those lists are equal for every such item, so one array serves them all.
   */
  candidateKeys(it: Item, fp: string, candidates: readonly Vs[]): string[] {
    if (it.rsKeys.length > 0 || it.policy !== 'Local' || it.role !== 'nodeport') return candidates.map((c) => c.key);
    let keys = this.sharedKeys.get(fp);
    if (!keys) this.sharedKeys.set(fp, (keys = candidates.map((c) => c.key)));
    return keys as string[];
  }
}

/** Each externalIP / LB virtual server is an item; NodePort virtual servers are grouped by port. */
function itemsOf(vss: readonly Vs[]): Item[] {
  const items: Item[] = [];
  const npItems = new Map<string, Item>();
  for (const v of vss) {
    if (v.role === 'cluster') continue;
    const item: Item = { role: v.role, vss: [v], family: v.family, protocol: v.protocol, port: v.port, sig: v.sig, rsKeys: v.rsKeys, policy: v.policy, spn: v.spn };
    if (v.role !== 'nodeport') {
      items.push(item);
      continue;
    }
    const k = `${v.family}|${v.protocol}|${v.port}`;
    const it = npItems.get(k);
    if (!it) {
      npItems.set(k, item);
      items.push(item);
      continue;
    }
    it.vss.push(v);
    if (it.policy === null) it.policy = v.policy;
    if (!it.spn) it.spn = v.spn;
  }
  return items;
}

export function groupVirtualServers(vss: readonly Vs[]): Group[] {
  const anchors = new Anchors(vss);
  const groups = anchors.groups;
  for (const it of itemsOf(vss)) {
    // 1. Set comments name both.
    const named = it.spn ? anchors.bySpn.get(spnKey(it.spn, it.family, it.protocol)) : undefined;
    if (named) {
      named.items.push(it);
      continue;
    }
    // 2. Real servers.
    const m = matchByRealServers(it, anchors);
    if (m.chosen) join(anchors.groupOf.get(m.chosen)!, it, m.how);
    else groups.push(ungrouped(it, anchors, m.candidates));
  }
  return groups;
}

interface Match {
  readonly chosen?: Vs;
  readonly how: 'same' | 'internal-local' | 'external-local';
  readonly candidates: Vs[];
}

function matchByRealServers(it: Item, anchors: Anchors): Match {
  const fp = `${it.family}|${it.protocol}`;
  const samePort = (a: Vs) => it.role === 'nodeport' || a.port === it.port;
  const one = (candidates: Vs[], how: Match['how']): Match => ({ chosen: candidates.length === 1 ? candidates[0] : undefined, how, candidates });
  if (it.policy === 'Local') return one((it.rsKeys.length ? anchors.supersets(fp, it.rsKeys, false) : (anchors.byProto.get(fp) ?? [])).filter(samePort), 'same');
  const same = (anchors.bySig.get(`${fp}|${it.sig}`) ?? []).filter(samePort);
  if (same.length > 0 || it.rsKeys.length === 0) return one(same, 'same');
  // More real servers than any anchor: an anchor with a subset of them has internalTrafficPolicy Local.
  let c = anchors.strictSubsets(fp, it.rsKeys).filter(samePort);
  if (c.length === 0) c = (anchors.byProto.get(fp) ?? []).filter((a) => a.rsKeys.length === 0 && samePort(a));
  if (c.length === 1) return one(c, 'internal-local');
  if (c.length === 0 && it.policy === null) {
    // Fewer: this item has externalTrafficPolicy Local (inferred, no -LOCAL set says it).
    c = anchors.supersets(fp, it.rsKeys, true).filter(samePort);
    if (c.length === 1) return one(c, 'external-local');
  }
  return { how: 'same', candidates: c };
}

function join(g: Group, it: Item, how: Match['how']): void {
  g.items.push(it);
  if (how === 'internal-local') g.internalLocal = true;
  if (how === 'external-local') {
    g.inferredExternalLocal = true;
    it.policy = 'Local';
  }
}

function ungrouped(it: Item, anchors: Anchors, candidates: readonly Vs[]): Group {
  const role = it.role === 'nodeport' ? ('nodeport' as const) : it.role === 'lb' ? ('lb' as const) : ('external' as const);
  const front = { role, id: it.role === 'nodeport' ? `${it.port}/${it.protocol}` : fmtId(it.vss[0].ipText, it.port, it.protocol) };
  const fp = `${it.family}|${it.protocol}`;
  const why =
    candidates.length > 1
      ? problem('ipvs-ambiguous-group', { role: front.role, id: front.id, candidates: anchors.candidateKeys(it, fp, candidates), superset: it.policy === 'Local' })
      : problem('ipvs-ungrouped', front);
  return { items: [it], problems: [why], internalLocal: false, inferredExternalLocal: false };
}
