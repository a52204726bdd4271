/**
 * The virtual servers of every `ipvsadm` listing, merged by key (the same one in `-Ln` and
 * `--stats` is one virtual server with copies). Firewall-mark and named virtual servers are no
 * Service kube-proxy makes: they are listed as other objects, with a problem.
 */
import { formatIp } from '../../model/addr.js';
import { realServerKey, virtualServerKey, type VirtualServer } from '../../model/ipvs.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { printable } from '../../source/index.js';
import { problem, type ServiceProblem } from '../problems.js';
import type { ForeignObject, Protocol } from '../types.js';
import { vsEvidence } from './evidence.js';
import type { Problem, Vs } from './types.js';

const PROTOS: Readonly<Record<string, Protocol>> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

export interface VirtualServers {
  readonly vss: Vs[];
  /** How many dumps list virtual servers (a connection listing does not). */
  readonly listings: number;
}

export function readVirtualServers(snapshot: NodeSnapshot, others: ForeignObject[], problems: Problem[]): VirtualServers {
  const byKey = new Map<string, Vs>();
  const unusable = (vs: VirtualServer, why: ServiceProblem) => {
    others.push({ kind: 'virtual-server', name: virtualServerKey(vs), owner: 'unknown', file: vs.file, line: vs.line });
    problems.push({ problem: why, evidence: [vsEvidence(vs)] });
  };
  const listings = snapshot.ipvs.filter((d) => d.view !== 'connections');
  for (const dump of listings) {
    for (const vs of dump.virtualServers) {
      if (vs.protocol === 'FWM') unusable(vs, problem('ipvs-fwmark-service', { vs: virtualServerKey(vs) }));
      else if (!vs.ip || vs.port === undefined) unusable(vs, problem('ipvs-named-virtual-server', { vs: printable(virtualServerKey(vs)) }));
      else addVirtualServer(byKey, vs);
    }
  }
  return { vss: [...byKey.values()], listings: listings.length };
}

function addVirtualServer(byKey: Map<string, Vs>, vs: VirtualServer): void {
  const key = virtualServerKey(vs);
  const prev = byKey.get(key);
  if (!prev) byKey.set(key, makeVs(vs));
  // Prefer a listing with weights and a scheduler (`-Ln`) over `--stats`/`--rate`.
  else if (prev.vs.scheduler === undefined && vs.scheduler !== undefined) byKey.set(key, { ...prev, ...makeVs(vs), copies: [prev.vs, ...prev.copies] });
  else prev.copies.push(vs);
}

function makeVs(vs: VirtualServer): Vs {
  const ip = vs.ip!;
  const rsKeys = vs.realServers.map(realServerKey).sort();
  return {
    vs,
    copies: [],
    key: virtualServerKey(vs),
    family: vs.family,
    protocol: PROTOS[vs.protocol],
    ip,
    ipText: formatIp(ip),
    port: vs.port!,
    sig: rsKeys.join(' '),
    rsKeys,
    role: 'cluster',
    policy: null,
    members: [],
    localMembers: [],
    fwMembers: [],
    sourceCidrMembers: [],
    sourceIpMembers: [],
    problems: [],
  };
}
