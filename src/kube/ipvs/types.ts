/**
 * What the IPVS reader's parts hand each other: virtual servers with the role the ipsets (or the
 * node's addresses) give them, and the groups of them that make one Service port each.
 */
import type { Ip } from '../../model/addr.js';
import type { InterfaceAddress, NetInterface } from '../../model/iface.js';
import type { IpSetMember } from '../../model/ipset.js';
import type { VirtualServer } from '../../model/ipvs.js';
import type { ServiceProblem } from '../problems.js';
import type { Protocol, Resolution, TrafficPolicy } from '../types.js';

export type Family = 4 | 6;
export type Role = 'cluster' | 'external' | 'lb' | 'nodeport';
export type Problem = Resolution['problems'][number];

/** One member of a kube-proxy ipset, with the set and file it was read from. */
export interface MemberRef {
  readonly set: string;
  readonly member: IpSetMember;
  readonly file: string;
}

/** A set as the dumps show it, merged over the dumps that list it (sets.ts). */
export interface SetView {
  readonly name: string;
  readonly type: string;
  readonly file: string;
  readonly line: number;
  readonly terse: boolean;
  readonly members: MemberRef[];
}


/** A Service port's name as a set member comment gives it (`ns/name:portName`). */
export interface SetCommentName {
  readonly namespace: string;
  readonly name: string;
  readonly portName: string | null;
}

/** One virtual server (merged over the dumps that list it), classified. */
export interface Vs {
  readonly vs: VirtualServer;
  /** The same virtual server in other dumps. */
  readonly copies: VirtualServer[];
  readonly key: string;
  readonly family: Family;
  readonly protocol: Protocol;
  readonly ip: Ip;
  readonly ipText: string;
  readonly port: number;
  /** Sorted real-server keys joined: identical sets have identical signatures. */
  readonly sig: string;
  readonly rsKeys: readonly string[];
  role: Role;
  /** Local/Cluster from a -LOCAL set when that set is in the dumps; null when the dumps do not say. */
  policy: TrafficPolicy | null;
  members: MemberRef[];
  localMembers: MemberRef[];
  fwMembers: MemberRef[];
  sourceCidrMembers: MemberRef[];
  sourceIpMembers: MemberRef[];
  ipvs0?: { iface: NetInterface; address: InterfaceAddress };
  problems: Problem[];
  /** Set comments naming the Service port. */
  spn?: SetCommentName;
}

/** A group of non-ClusterIP virtual servers that belongs to one Service port. */
export interface Item {
  readonly role: Exclude<Role, 'cluster'>;
  readonly vss: Vs[];
  readonly family: Family;
  readonly protocol: Protocol;
  readonly port: number;
  readonly sig: string;
  readonly rsKeys: readonly string[];
  policy: TrafficPolicy | null;
  spn?: SetCommentName;
}

/** One Service port: its ClusterIP virtual server (when there is one) and the items joined to it. */
export interface Group {
  anchor?: Vs;
  items: Item[];
  problems: ServiceProblem[];
  internalLocal: boolean;
  inferredExternalLocal: boolean;
}
