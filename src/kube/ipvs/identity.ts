/**
 * Which Service port a group of virtual servers is: the name in the sets' member comments
 * (`ns/name:portName`) when they carry one, else an id made of the ClusterIP, the NodePort or the
 * external address.
 */
import { servicePortName } from '../hash.js';
import { hostPort } from './evidence.js';
import type { Group, MemberRef, SetCommentName } from './types.js';

/** `ns/name:portName` or `ns/name` from a set member comment; undefined for anything else. */
export function parseServicePortComment(comment: string | undefined): SetCommentName | undefined {
  if (comment === undefined) return undefined;
  const m = /^([a-z0-9][-a-z0-9.]*)\/([a-z0-9][-a-z0-9.]*)(?::([A-Za-z0-9][-A-Za-z0-9_.]*))?$/.exec(comment.trim());
  if (!m) return undefined;
  return { namespace: m[1], name: m[2], portName: m[3] ?? null };
}

/** The first member comment that names a Service port. */
export function nameFromMembers(refs: readonly MemberRef[]): SetCommentName | undefined {
  for (const r of refs) {
    const s = parseServicePortComment(r.member.comment);
    if (s) return s;
  }
  return undefined;
}

/** One key per named Service port of a family and protocol. */
export function spnKey(spn: SetCommentName, family: number, protocol: string): string {
  return `${family}|${protocol}|${servicePortName(spn.namespace, spn.name, spn.portName)}`;
}

/** `ip:port/proto`, how problems name a virtual server. */
export function fmtId(ip: string, port: number | string, proto: string): string {
  return `${hostPort(ip, port)}/${proto}`;
}

export function groupName(g: Group): SetCommentName | undefined {
  return g.anchor?.spn ?? g.items.find((i) => i.spn)?.spn;
}

/** Without a name or a cluster IP the id is the NodePort (`*:PORT`) or the external address. */
export function groupAnchorId(g: Group): string {
  const a = g.anchor;
  if (a) return hostPort(a.ipText, a.port);
  const it = g.items[0];
  return it.role === 'nodeport' ? hostPort('*', it.port) : hostPort(it.vss[0].ipText, it.port);
}
