/**
 * nftables dispatch: the maps that send an address or node port to a Service port's chains —
 * `service-ips` (`VIP . proto . port : goto service-|local-|external-…`), `service-nodeports`
 * (`proto . nodePort : goto external-…`), the no-endpoint maps (`… comment "ns/svc:port" : goto
 * reject-chain | drop`) and `firewall-ips` (`LBIP . proto . port : goto firewall-…`). Each element
 * joins the group of the Service port its target chain (or comment) names.
 */
import type { NftElement } from '../../model/nft.js';
import { valueText } from '../../model/nft.js';
import { parseServiceComment } from '../comments.js';
import { problem } from '../problems.js';
import type { Protocol } from '../types.js';
import { nftNames, type NftChainRole, type NftObjectName } from './identity.js';
import { asPort, asProtocol, cachedName, elementEvidence, elementText, verdictTarget, type Ctx, type Group } from './table.js';

/** The Service port groups of one table by `ns/svc/proto/portname` (or address), with the element comments' kind hints. */
export class NftGroups {
  readonly byKey = new Map<string, Group>();
  readonly kindHints = new Map<Group, Map<string, 'external' | 'loadbalancer'>>();
  constructor(readonly ctx: Ctx) {}

  of(key: string): Group {
    let g = this.byKey.get(key);
    if (!g) {
      g = { key, ips: new Map(), lbIPs: new Set(), chains: {}, directEndpoints: [], absentTargets: [], referenced: false, evidence: [], problems: [] };
      this.byKey.set(key, g);
    }
    return g;
  }

  /** The fullest parsed name seen for the group, and its protocol. */
  adoptName(g: Group, n: NftObjectName): void {
    if (!g.parsed || (g.parsed.namespace === undefined && n.namespace !== undefined)) g.parsed = n;
    if (n.protocol) g.protocol ??= n.protocol;
  }

  /** An element comment saying `external` / `loadbalancer`, kept per address. */
  hint(g: Group, ip: string, e: NftElement): void {
    const k = e.comment && /load ?balancer/i.test(e.comment) ? 'loadbalancer' : e.comment && /external/i.test(e.comment) ? 'external' : undefined;
    if (!k) return;
    if (!this.kindHints.has(g)) this.kindHints.set(g, new Map());
    this.kindHints.get(g)!.set(ip, k);
  }
}

/** 1. Per-Service-port chains, grouped by the `ns/svc/proto/portname` in their names. */
export function groupChains(groups: NftGroups): void {
  const { ctx } = groups;
  for (const c of ctx.table.chains) {
    const n = cachedName(ctx, c.name);
    if (!n || n.role === 'endpoint' || n.role === 'affinity') continue;
    const g = groups.of(n.key);
    groups.adoptName(g, n);
    if (g.chains[n.role]) g.problems.push(problem('nft-two-chains', { role: n.role, chain: g.chains[n.role]!.name, other: c.name }));
    else g.chains[n.role] = c;
  }
}

/** The group a map element's target chain belongs to (problems when it does not exist). */
function targetGroup(groups: NftGroups, set: string, e: NftElement): { g: Group; role: NftChainRole } | undefined {
  const { ctx } = groups;
  const target = verdictTarget(e);
  const ev = elementEvidence(ctx, set, e);
  if (!target) return undefined;
  const n = cachedName(ctx, target);
  if (!n) {
    ctx.problems.push({ problem: problem('nft-element-not-service-chain', { set, element: e.key.join(' . '), target }), evidence: [ev] });
    return undefined;
  }
  const g = groups.of(n.key);
  groups.adoptName(g, n);
  g.referenced = true;
  g.evidence.push(ev);
  if (!ctx.chains.has(target)) g.absentTargets.push(target);
  if (n.role === 'endpoint') {
    g.problems.push(problem('nft-element-to-endpoint-chain', { set, element: e.key.join(' . '), chain: target }));
    if (set === nftNames.serviceIPsMap) g.directEndpoints.push({ chain: target, element: ev });
  }
  return { g, role: n.role };
}

/** The group an element's comment (`ns/svc:port`) names. */
function commentGroup(groups: NftGroups, set: string, e: NftElement, protocol: Protocol | undefined): Group | undefined {
  const id = e.comment !== undefined ? parseServiceComment(e.comment) : undefined;
  if (!id || !protocol) return undefined;
  const g = groups.of(`${id.namespace}/${id.name}/${protocol}/${id.portName ?? ''}`);
  g.commentId ??= { namespace: id.namespace, name: id.name, portName: id.portName };
  g.protocol ??= protocol;
  g.referenced = true;
  g.evidence.push(elementEvidence(groups.ctx, set, e));
  return g;
}

/** 2. service-ips: VIP . proto . port : goto service-|local-|external-… */
export function readServiceIPs(groups: NftGroups): void {
  const { ctx } = groups;
  for (const e of ctx.sets.get(nftNames.serviceIPsMap)?.elements ?? []) {
    const [ip, proto, port] = e.key;
    const tg = targetGroup(groups, nftNames.serviceIPsMap, e);
    if (!tg) {
      if (!verdictTarget(e)) ctx.problems.push({ problem: problem('nft-element-no-goto', { set: nftNames.serviceIPsMap, element: elementText(e) }), evidence: [elementEvidence(ctx, nftNames.serviceIPsMap, e)] });
      continue;
    }
    const { g, role } = tg;
    g.protocol ??= asProtocol(proto);
    const p = asPort(port);
    if (p !== undefined) {
      if (g.port !== undefined && g.port !== p) g.problems.push(problem('nft-ports-disagree', { set: nftNames.serviceIPsMap, port: p, other: g.port }));
      g.port ??= p;
    }
    const entry = g.ips.get(ip) ?? { ip };
    entry.target = role === 'endpoint' ? 'service' : role;
    entry.evidence ??= elementEvidence(ctx, nftNames.serviceIPsMap, e);
    if (e.comment) entry.comment = e.comment;
    g.ips.set(ip, entry);
    groups.hint(g, ip, e);
  }
}

/** 3. service-nodeports: proto . nodePort : goto external-… */
export function readServiceNodePorts(groups: NftGroups): void {
  const { ctx } = groups;
  for (const e of ctx.sets.get(nftNames.serviceNodePortsMap)?.elements ?? []) {
    const tg = targetGroup(groups, nftNames.serviceNodePortsMap, e);
    if (!tg) continue;
    tg.g.protocol ??= asProtocol(e.key[0]);
    const np = asPort(e.key[1]);
    if (np !== undefined) {
      tg.g.nodePort = np;
      tg.g.nodePortEvidence ??= elementEvidence(ctx, nftNames.serviceNodePortsMap, e);
    }
    if (tg.role !== 'external' && tg.role !== 'endpoint') tg.g.problems.push(problem('nft-nodeport-not-external', { element: e.key.join(' . '), target: verdictTarget(e) }));
  }
}

/** 4a. no-endpoint-services: VIP . proto . port comment "ns/svc:port" : goto reject-chain | drop */
export function readNoEndpointServices(groups: NftGroups): void {
  const { ctx } = groups;
  const groupsByAddress = new Map<string, Group>();
  for (const g of groups.byKey.values()) for (const ip of g.ips.keys()) if (g.protocol && g.port !== undefined) groupsByAddress.set(`${ip}|${g.protocol}|${g.port}`, g);
  for (const e of ctx.sets.get(nftNames.noEndpointServicesMap)?.elements ?? []) {
    const [ip, proto, port] = e.key;
    const protocol = asProtocol(proto);
    let g = commentGroup(groups, nftNames.noEndpointServicesMap, e, protocol) ?? groupsByAddress.get(`${ip}|${protocol}|${asPort(port)}`);
    if (!g) {
      g = groups.of(`${ip}:${port}/${proto}`);
      g.referenced = true;
      g.evidence.push(elementEvidence(ctx, nftNames.noEndpointServicesMap, e));
    }
    g.protocol ??= protocol;
    g.port ??= asPort(port);
    const entry = g.ips.get(ip) ?? { ip };
    entry.noEndpointVerdict = e.value ? valueText(e.value) : '';
    entry.evidence ??= elementEvidence(ctx, nftNames.noEndpointServicesMap, e);
    g.ips.set(ip, entry);
    groups.hint(g, ip, e);
    checkNoEndpointVerdict(ctx, g, nftNames.noEndpointServicesMap, e);
  }
}

/** 4b. no-endpoint-nodeports: proto . nodePort comment "ns/svc:port" : goto reject-chain | drop */
export function readNoEndpointNodePorts(groups: NftGroups): void {
  const { ctx } = groups;
  for (const e of ctx.sets.get(nftNames.noEndpointNodePortsMap)?.elements ?? []) {
    const protocol = asProtocol(e.key[0]);
    let g = commentGroup(groups, nftNames.noEndpointNodePortsMap, e, protocol);
    if (!g) {
      g = [...groups.byKey.values()].find((x) => x.nodePort === asPort(e.key[1]) && x.protocol === protocol);
      if (!g) {
        ctx.problems.push({ problem: problem('nft-element-names-no-service', { set: nftNames.noEndpointNodePortsMap, element: elementText(e) }), evidence: [elementEvidence(ctx, nftNames.noEndpointNodePortsMap, e)] });
        continue;
      }
      g.evidence.push(elementEvidence(ctx, nftNames.noEndpointNodePortsMap, e));
    }
    const np = asPort(e.key[1]);
    if (np !== undefined && g.nodePort === undefined) {
      g.nodePort = np;
      g.nodePortEvidence ??= elementEvidence(ctx, nftNames.noEndpointNodePortsMap, e);
    }
    g.nodePortNoEndpoint = e.value ? valueText(e.value) : '';
    checkNoEndpointVerdict(ctx, g, nftNames.noEndpointNodePortsMap, e);
  }
}

/** 5. firewall-ips: LBIP . proto . port : goto firewall-… */
export function readFirewallIPs(groups: NftGroups): void {
  for (const e of groups.ctx.sets.get(nftNames.firewallIPsMap)?.elements ?? []) {
    const tg = targetGroup(groups, nftNames.firewallIPsMap, e);
    if (!tg) continue;
    tg.g.lbIPs.add(e.key[0]);
    if (tg.role !== 'firewall') tg.g.problems.push(problem('nft-firewall-element-not-firewall', { set: nftNames.firewallIPsMap, element: e.key.join(' . '), target: verdictTarget(e) }));
  }
}

function checkNoEndpointVerdict(ctx: Ctx, g: Group, set: string, e: NftElement): void {
  const v = e.value;
  if (!v || v.kind !== 'verdict') {
    g.problems.push(problem('nft-element-no-verdict', { set, element: e.key.join(' . ') }));
    return;
  }
  if (v.verdict === 'drop') return;
  if ((v.verdict === 'goto' || v.verdict === 'jump') && v.chain) {
    if (!ctx.chains.has(v.chain)) g.problems.push(problem('nft-element-target-absent', { set, element: e.key.join(' . '), chain: v.chain }));
    return;
  }
  g.problems.push(problem('nft-no-endpoint-verdict-passes', { set, element: e.key.join(' . '), verdict: valueText(v) }));
}
