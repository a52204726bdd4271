/**
 * Evidence lines: the parsed entry printed back in its dump's syntax (the ipvsadm, ipset and
 * ip-addr models keep file and line, not the raw line).
 */
import { formatIp } from '../../model/addr.js';
import type { InterfaceAddress, NetInterface } from '../../model/iface.js';
import type { IpSetMember } from '../../model/ipset.js';
import { realServerKey, virtualServerKey, type RealServer, type VirtualServer } from '../../model/ipvs.js';
import type { Evidence } from '../types.js';
import type { MemberRef } from './types.js';

/** `ip:port`, `[ip6]:port`, or the address alone. */
export function hostPort(ip: string, port: number | string | undefined): string {
  const h = ip.includes(':') ? `[${ip}]` : ip;
  return port === undefined ? h : `${h}:${port}`;
}

function vsText(vs: VirtualServer): string {
  const words: string[] = [];
  if (vs.protocol === 'FWM') {
    words.push(String(vs.fwmark));
    if (vs.family === 6) words.push('IPv6');
  } else words.push(hostPort(vs.ip ? formatIp(vs.ip) : (vs.address ?? '?'), vs.port ?? vs.portName));
  if (vs.scheduler) words.push(vs.scheduler);
  if (vs.schedFlags.length) words.push(`(${vs.schedFlags.join(',')})`);
  if (vs.persistent !== undefined) words.push(`persistent ${vs.persistent}`);
  if (vs.netmask !== undefined) words.push(`mask ${vs.netmask}`);
  if (vs.pe !== undefined) words.push(`pe ${vs.pe}`);
  if (vs.ops) words.push('ops');
  return `${vs.protocol.padEnd(4)} ${words.join(' ')}`;
}

function rsText(rs: RealServer): string {
  const cols = [rs.forward, rs.weight, rs.activeConn, rs.inactiveConn].filter((x) => x !== undefined).map(String);
  return `  -> ${realServerKey(rs).padEnd(28)} ${cols.join(' ')}`.trimEnd();
}

function memberText(m: IpSetMember): string {
  let t = m.text;
  if (m.timeout !== undefined) t += ` timeout ${m.timeout}`;
  if (m.packets !== undefined) t += ` packets ${m.packets} bytes ${m.bytes ?? 0}`;
  if (m.comment !== undefined) t += ` comment "${m.comment}"`;
  if (m.nomatch) t += ' nomatch';
  return t;
}

function addrText(a: InterfaceAddress, iface: string): string {
  return `inet${a.family === 6 ? '6' : ''} ${a.address}/${a.prefix}${a.scope ? ` scope ${a.scope}` : ''} ${iface}`;
}

export const vsEvidence = (vs: VirtualServer): Evidence => ({ file: vs.file, line: vs.line, text: vsText(vs), where: virtualServerKey(vs) });
export const rsEvidence = (vs: VirtualServer, rs: RealServer): Evidence => ({ file: vs.file, line: rs.line, text: rsText(rs), where: virtualServerKey(vs) });
export const memberEvidence = (r: MemberRef): Evidence => ({ file: r.file, line: r.member.line, text: memberText(r.member), where: r.set });
export const ipvs0Evidence = (iface: NetInterface, address: InterfaceAddress): Evidence => ({ file: iface.file, line: address.line, text: addrText(address, 'kube-ipvs0'), where: 'kube-ipvs0' });
