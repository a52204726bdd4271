/**
 * TEST ORACLE: the all-in-memory node comparison as it was before the streaming aggregate
 * (src/cluster/compare.ts at e68b774, imports adjusted, types from the current module), kept to
 * check that the streamed comparison prints the same. Not shipped; do not change it.
 *
 * Node comparison (`kpx services --nodes`): per Service port, which nodes implement it, each
 * node's endpoint set, and where nodes disagree — an endpoint on 3 of 5 nodes, a Service or
 * chains missing on one node, another proxy mode, other policies or state. Differences that
 * the design explains (which endpoints are local, states that follow from a Local policy)
 * are not disagreements.
 */
import { formatHostPort } from '../../src/model/addr.js';
import { proxyModes } from '../../src/kube/modes.js';
import { resolveJudged } from '../../src/judge/index.js';
import type { Resolution, ServicePort } from '../../src/kube/types.js';
import { servicePortKey } from '../../src/kube/types.js';
import { serviceLabel } from '../../src/render/services.js';
import { ownerOf } from '../../src/cluster/owner.js';
import { problemText } from '../../src/render/problems.js';
import type { ClusterSnapshot } from '../../src/cluster/types.js';
import { intendedDataplane } from '../../src/kube/intent.js';

import type { NodeComparison, NodeDifference, EndpointPresence, NodeView, ServiceComparison } from '../../src/cluster/compare.js';

function keyOf(s: ServicePort): string {
  return s.namespace !== null && s.name !== null ? servicePortKey(s) : `${formatHostPort(s.clusterIP ?? s.externalIPs[0] ?? s.loadBalancerIPs[0] ?? '?', s.port)}/${s.protocol}`;
}

const ep = (e: { ip: string; port: number | null }) => formatHostPort(e.ip, e.port ?? undefined);

/** The most common value and the nodes holding something else. */
function majority<T>(entries: readonly { node: string; value: T }[], key: (v: T) => string): { value: T; others: { node: string; value: T }[] } {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(key(e.value), (counts.get(key(e.value)) ?? 0) + 1);
  let bestKey = '';
  let best = -1;
  for (const e of entries) {
    const c = counts.get(key(e.value))!;
    if (c > best) {
      best = c;
      bestKey = key(e.value);
    }
  }
  return { value: entries.find((e) => key(e.value) === bestKey)!.value, others: entries.filter((e) => key(e.value) !== bestKey) };
}

/** The chain roles whose presence does not depend on where endpoints run. */
function chainRoles(s: ServicePort): string[] {
  const keys = Object.keys(s.chains);
  // The typed roles say which objects follow endpoints (their keys are the JSON form of them).
  return s.owned
    .map((o, i) => ({ o, key: keys[i] }))
    .filter(({ o, key }) => key !== undefined && o.role !== 'endpoint' && o.role !== 'svl' && o.role !== 'local' && !/local/i.test(key))
    .map(({ key }) => key!)
    .sort();
}

function policyText(s: ServicePort): string {
  return [
    `externalTrafficPolicy=${s.externalTrafficPolicy}`,
    `internalTrafficPolicy=${s.internalTrafficPolicy}`,
    `affinity=${s.sessionAffinity ? `${s.sessionAffinity.timeoutSeconds ?? '?'}s` : 'none'}`,
    s.loadBalancerSourceRanges.length ? `sourceRanges=${[...s.loadBalancerSourceRanges].sort().join(',')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

function addressText(s: ServicePort): string {
  return [
    `clusterIP=${s.clusterIP ?? '-'}`,
    `nodePort=${s.nodePort ?? '-'}`,
    s.externalIPs.length ? `externalIPs=${[...s.externalIPs].sort().join(',')}` : '',
    s.loadBalancerIPs.length ? `loadBalancerIPs=${[...s.loadBalancerIPs].sort().join(',')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;

/** Compare every node's Services. Resolutions may be given (by node name) to avoid resolving twice. */
export async function oldCompareNodes(cluster: ClusterSnapshot, given?: ReadonlyMap<string, Resolution>): Promise<NodeComparison> {
  const names = cluster.nodes.map((n) => n.name);
  const res = new Map<string, Resolution>();
  for (const n of cluster.nodes) res.set(n.name, given?.get(n.name) ?? n.resolution ?? (await resolveJudged(n.snapshot)));
  const modes: Record<string, string[]> = {};
  for (const n of cluster.nodes) modes[n.name] = [...(n.modes ?? proxyModes(n.snapshot))];

  // Service port key → node → ServicePort (a dual-stack / multi-mode node may give one key twice: keep each, keyed by mode+family).
  // IPVS mode names no Service (identifiedBy 'address'): match it to the named Service port that
  // another node shows on the same VIP:port/proto.
  const vipKey = (s: ServicePort) => `${formatHostPort(s.clusterIP ?? s.externalIPs[0] ?? s.loadBalancerIPs[0] ?? '?', s.port)}/${s.protocol}`;
  const named = new Map<string, string>();
  for (const n of cluster.nodes) for (const s of res.get(n.name)!.services) if (s.namespace !== null && s.name !== null && !named.has(vipKey(s))) named.set(vipKey(s), keyOf(s));
  const byKey = new Map<string, Map<string, ServicePort>>();
  for (const n of cluster.nodes) {
    for (const s of res.get(n.name)!.services) {
      const k = `${s.namespace !== null && s.name !== null ? keyOf(s) : (named.get(vipKey(s)) ?? keyOf(s))}|v${s.family}`;
      let m = byKey.get(k);
      if (!m) byKey.set(k, (m = new Map()));
      if (!m.has(n.name)) m.set(n.name, s);
    }
  }

  // The API's intent for each node whose bundle holds the API objects: VIP key → the endpoints kube-proxy
  // would program there (zone-filtered by hints, Local sets). A node lacking an endpoint its intent does not
  // hold is explained (topology, policy), not a disagreement.
  const intended = new Map<string, Map<string, Set<string>>>();
  for (const n of cluster.nodes) {
    if (!n.snapshot.api) continue;
    const m = new Map<string, Set<string>>();
    for (const p of intendedDataplane(n.snapshot.api, n.snapshot).ports) m.set(`${formatHostPort(p.clusterIP, p.port)}/${p.protocol}`, new Set(p.reachable.map(ep)));
    intended.set(n.name, m);
  }
  const explainedAbsence = (node: string, s: ServicePort, endpoint: string) => {
    const set = s.clusterIP !== null ? intended.get(node)?.get(`${formatHostPort(s.clusterIP, s.port)}/${s.protocol}`) : undefined;
    return set !== undefined && !set.has(endpoint);
  };

  const ownerCache = new Map<string, string | null>();
  const ownerName = (ip: string) => {
    if (!ownerCache.has(ip)) ownerCache.set(ip, ownerOf(cluster, ip).owner?.node ?? null);
    return ownerCache.get(ip)!;
  };

  const services: ServiceComparison[] = [];
  for (const [k, perNode] of byKey) {
    const present = names.filter((n) => perNode.has(n));
    const missing = names.filter((n) => !perNode.has(n));
    const sample = present.map((n) => perNode.get(n)!).find((x) => x.name !== null) ?? perNode.get(present[0])!;
    const views: NodeView[] = present.map((n) => {
      const s = perNode.get(n)!;
      return { node: n, mode: s.mode, state: s.state, endpoints: [...new Set(s.endpoints.map(ep))].sort(), chains: chainRoles(s), problems: s.problems.map(problemText) };
    });
    const differences: NodeDifference[] = [];
    const differing = new Set<string>(missing);
    if (missing.length) differences.push({ kind: 'missing-service', message: `not on ${missing.join(', ')} (present on ${present.length} of ${names.length} nodes)`, nodes: missing });

    // Endpoints: each endpoint present on fewer nodes than have the Service.
    const epNodes = new Map<string, { nodes: string[]; localOn: string[] }>();
    for (const n of present) {
      for (const e of perNode.get(n)!.endpoints) {
        const key = ep(e);
        let x = epNodes.get(key);
        if (!x) epNodes.set(key, (x = { nodes: [], localOn: [] }));
        if (!x.nodes.includes(n)) x.nodes.push(n);
        if (e.local === true && !x.localOn.includes(n)) x.localOn.push(n);
      }
    }
    const endpoints: EndpointPresence[] = [...epNodes.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([endpoint, x]) => ({ endpoint, nodes: x.nodes, localOn: x.localOn, owner: ownerName(endpoint.replace(/^\[(.*)\]:\d+$/, '$1').replace(/:\d+$/, '')) }));
    // A Local-policy node legitimately lists only its local endpoints: compare those by the cluster-wide set only when policy is Cluster.
    const localOnly = (n: string) => {
      const s = perNode.get(n)!;
      return s.internalTrafficPolicy === 'Local' && s.nodePort === null && s.externalIPs.length === 0 && s.loadBalancerIPs.length === 0;
    };
    // A node where the Service port is unknown (its endpoint chains not in the evidence) cannot be said to lack an endpoint.
    const comparable = present.filter((n) => !localOnly(n) && perNode.get(n)!.state !== 'unknown');
    for (const e of endpoints) {
      const lacking = comparable.filter((n) => !e.nodes.includes(n) && !explainedAbsence(n, perNode.get(n)!, e.endpoint));
      if (lacking.length === 0) continue;
      const on = comparable.filter((n) => e.nodes.includes(n));
      differences.push({ kind: 'endpoints', message: `endpoint ${e.endpoint} on ${on.length} of ${comparable.length} nodes (missing on ${lacking.join(', ')})`, nodes: lacking });
      for (const n of lacking) differing.add(n);
    }
    // Proxy mode.
    const modeMaj = majority(views.map((v) => ({ node: v.node, value: v.mode })), (v) => v);
    if (modeMaj.others.length) {
      differences.push({ kind: 'mode', message: `proxy mode ${modeMaj.others.map((o) => `${o.value} on ${o.node}`).join(', ')}; ${modeMaj.value} elsewhere`, nodes: modeMaj.others.map((o) => o.node) });
      for (const o of modeMaj.others) differing.add(o.node);
    }
    // Chains (same mode only: other modes have other objects).
    const sameMode = views.filter((v) => v.mode === modeMaj.value);
    const chainMaj = majority(sameMode.map((v) => ({ node: v.node, value: v.chains })), (v) => v.join(','));
    for (const o of chainMaj.others) {
      const lacking = chainMaj.value.filter((r) => !o.value.includes(r));
      const extra = o.value.filter((r) => !chainMaj.value.includes(r));
      const parts = [lacking.length ? `missing ${lacking.map((r) => `${r} (${perNode.get(present.find((n) => !chainMaj.others.some((x) => x.node === n))!)?.chains[r] ?? r})`).join(', ')}` : '', extra.length ? `extra ${extra.join(', ')}` : ''].filter(Boolean);
      differences.push({ kind: 'chains', message: `${o.node}: ${parts.join('; ')}`, nodes: [o.node] });
      differing.add(o.node);
    }
    // Policies and addresses.
    const polMaj = majority(present.map((n) => ({ node: n, value: policyText(perNode.get(n)!) })), (v) => v);
    for (const o of polMaj.others) {
      differences.push({ kind: 'policy', message: `${o.node}: ${o.value} (others: ${polMaj.value})`, nodes: [o.node] });
      differing.add(o.node);
    }
    const addrMaj = majority(present.map((n) => ({ node: n, value: addressText(perNode.get(n)!) })), (v) => v);
    for (const o of addrMaj.others) {
      differences.push({ kind: 'address', message: `${o.node}: ${o.value} (others: ${addrMaj.value})`, nodes: [o.node] });
      differing.add(o.node);
    }
    // State: differences explained by Local policies and locality are expected; others are not.
    const stateMaj = majority(views.map((v) => ({ node: v.node, value: v.state })), (v) => v);
    for (const o of stateMaj.others) {
      const expected = (o.value === 'no-local-endpoints' || stateMaj.value === 'no-local-endpoints') && (sample.externalTrafficPolicy === 'Local' || sample.internalTrafficPolicy === 'Local');
      if (expected) continue;
      const why = views.find((v) => v.node === o.node)!.problems[0];
      differences.push({ kind: 'state', message: `${o.node}: ${o.value} (others: ${stateMaj.value})${why ? ` — ${why}` : ''}`, nodes: [o.node] });
      differing.add(o.node);
    }
    // Locality: an endpoint should be local on the node that owns its address, and on no other.
    for (const e of endpoints) {
      const wrong = e.localOn.filter((n) => e.owner !== null && n !== e.owner);
      if (wrong.length) differences.push({ kind: 'locality', message: `endpoint ${e.endpoint} marked local on ${wrong.join(', ')}, but ${e.owner} owns it`, nodes: wrong });
      else if (e.localOn.length > 1) differences.push({ kind: 'locality', message: `endpoint ${e.endpoint} marked local on ${plural(e.localOn.length, 'node')} (${e.localOn.join(', ')})`, nodes: e.localOn });
      for (const n of wrong) differing.add(n);
    }
    services.push({
      key: k.replace(/\|v\d$/, ''),
      label: serviceLabel(sample),
      protocol: sample.protocol ?? '?',
      port: sample.port,
      clusterIP: sample.clusterIP,
      presentOn: present,
      missingOn: missing,
      agreeing: names.filter((n) => !differing.has(n)),
      views,
      endpoints,
      differences,
    });
  }
  services.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : a.port - b.port || (a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0)));

  const differences: NodeDifference[] = [];
  const modeMaj = majority(names.map((n) => ({ node: n, value: modes[n] })), (v) => [...v].sort().join('+'));
  for (const o of modeMaj.others) differences.push({ kind: 'mode', message: `${o.node} shows ${o.value.join('+') || 'no kube-proxy'} (others: ${modeMaj.value.join('+') || 'none'})`, nodes: [o.node] });
  const differingCount = services.filter((s) => s.differences.length > 0).length;
  return { nodes: names, modes, services, differences, summary: { servicePorts: services.length, agreeing: services.length - differingCount, differing: differingCount } };
}
