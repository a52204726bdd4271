/**
 * What no virtual server accounts for: set entries and kube-ipvs0 addresses without a virtual
 * server (unknowable when a listing was cut: their virtual servers may be past the cut), and the
 * other objects (every ipset, the non-Service iptables chains) listed with their owner.
 */
import type { NodeSnapshot } from '../../model/snapshot.js';
import { chainOwner } from '../owner.js';
import { problem } from '../problems.js';
import type { ForeignObject } from '../types.js';
import type { NodeAddresses } from './dispatch.js';
import { ipvs0Evidence, memberEvidence } from './evidence.js';
import { ipKey, ipPortKey, type FamilySets, type SetsByFamily } from './sets.js';
import type { Problem, SetView, Vs } from './types.js';

/** iptables-mode per-Service chains: resolved by the iptables resolver, not listed here. */
const IPTABLES_SERVICE_CHAIN = /^KUBE-(SVC|SVL|EXT|FW|SEP|XLB)-/;

/** The hash:ip,port sets whose every member should have a virtual server. */
const IP_PORT_SETS = ['KUBE-CLUSTER-IP', 'KUBE-EXTERNAL-IP', 'KUBE-EXTERNAL-IP-LOCAL', 'KUBE-LOAD-BALANCER', 'KUBE-NODE-PORT-SCTP-HASH'];
const PORT_SETS = [
  ['KUBE-NODE-PORT-TCP', 'tcp'],
  ['KUBE-NODE-PORT-UDP', 'udp'],
] as const;

/** What the virtual servers listen on, to look set entries up in. */
class Listening {
  readonly ips: Set<string>;
  readonly ipPorts: Set<string>;
  readonly protoPorts: Set<string>;
  constructor(vss: readonly Vs[]) {
    this.ips = new Set(vss.map((v) => ipKey(v.ip.family, v.ip.value)));
    this.ipPorts = new Set(vss.map((v) => ipPortKey(v.ip.family, v.ip.value, v.protocol, v.port)));
    this.protoPorts = new Set(vss.map((v) => `${v.family}|${v.protocol}|${v.port}`));
  }
}

export function unusedEntries(vss: readonly Vs[], sets: SetsByFamily, addrs: NodeAddresses, problems: Problem[]): void {
  const on = new Listening(vss);
  for (const family of [4, 6] as const) unusedSetEntries(family, sets[family], on, problems);
  for (const [k, { iface, address }] of addrs.ipvs0) {
    if (on.ips.has(k)) continue;
    problems.push({ problem: problem('ipvs-dummy-address-unused', { address: address.address }), evidence: [ipvs0Evidence(iface, address)] });
  }
}

const whole = (view: SetView | undefined): view is SetView => view !== undefined && !view.terse;

function unusedSetEntries(family: 4 | 6, sets: FamilySets, on: Listening, problems: Problem[]): void {
  for (const view of IP_PORT_SETS.map(sets.views).filter(whole)) {
    for (const r of view.members) {
      const [ipP, portP] = r.member.parts;
      if (ipP?.kind !== 'ip' || portP?.kind !== 'port') continue;
      if (on.ipPorts.has(ipPortKey(ipP.cidr.family, ipP.cidr.network, portP.proto, portP.port))) continue;
      problems.push({ problem: problem('ipvs-set-entry-without-vs', { set: view.name, entry: r.member.text, accepted: true }), evidence: [memberEvidence(r)] });
    }
  }
  for (const [base, proto] of PORT_SETS) {
    const view = sets.views(base);
    if (!whole(view)) continue;
    for (const r of view.members) {
      const p = r.member.parts[0];
      if (p?.kind !== 'port' || on.protoPorts.has(`${family}|${proto}|${p.port}`)) continue;
      problems.push({ problem: problem('ipvs-nodeport-without-vs', { set: view.name, port: p.port, protocol: proto }), evidence: [memberEvidence(r)] });
    }
  }
  const ipvsIps = sets.views('KUBE-IPVS-IPS');
  if (!whole(ipvsIps)) return;
  for (const r of ipvsIps.members) {
    const p = r.member.parts[0];
    if (p?.kind === 'ip' && !on.ips.has(ipKey(p.cidr.family, p.cidr.network))) {
      problems.push({ problem: problem('ipvs-set-entry-without-vs', { set: ipvsIps.name, entry: r.member.text, accepted: false }), evidence: [memberEvidence(r)] });
    }
  }
}

/** Every ipset, and the iptables chains that are not iptables-mode Service chains. */
export function otherObjects(snapshot: NodeSnapshot, setNames: Iterable<SetView>, others: ForeignObject[]): void {
  for (const s of setNames) others.push({ kind: 'ipset', name: s.name, owner: chainOwner(s.name), file: s.file, line: s.line });
  for (const rs of snapshot.rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        if (c.builtin || IPTABLES_SERVICE_CHAIN.test(c.name)) continue;
        others.push({ kind: 'chain', table: t.name, name: c.name, owner: chainOwner(c.name), file: t.file, ...(c.line !== undefined ? { line: c.line } : {}) });
      }
    }
  }
}
