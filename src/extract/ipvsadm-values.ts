/**
 * The values of ipvsadm lines: endpoints (`ADDR:PORT`, `[V6]:PORT`, `host:name`) and the counter
 * columns (`123`, `4K`), shared by the listing, `--save` and `-Lnc` readers of ./ipvsadm.ts.
 */
import { parseIp, type Ip } from '../model/addr.js';
import type { IpvsEndpoint, IpvsProtocol, IpvsStats } from '../model/ipvs.js';
import type { Tok } from '../../grammars/ipvsadm/index.js';

export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Port names ipvsadm prints without `-n` (getservbyport over /etc/services). Only names whose
 * number is the same in every common /etc/services and for tcp, udp and sctp are mapped; other
 * names are kept in `portName` with `port` undefined.
 */
const WELL_KNOWN_PORTS: Readonly<Record<string, number>> = {
  ftp: 21,
  ssh: 22,
  telnet: 23,
  smtp: 25,
  domain: 53,
  http: 80,
  kerberos: 88,
  pop3: 110,
  sunrpc: 111,
  ntp: 123,
  imap2: 143,
  imap: 143,
  snmp: 161,
  ldap: 389,
  https: 443,
  'microsoft-ds': 445,
  submission: 587,
  ldaps: 636,
  imaps: 993,
  pop3s: 995,
  mysql: 3306,
  postgresql: 5432,
  'http-alt': 8080,
  webcache: 8080,
  'bacula-fd': 9102,
  'bacula-sd': 9103,
};

export const STATS_KEYS = ['conns', 'inPkts', 'outPkts', 'inBytes', 'outBytes'] as const;
export const RATE_KEYS = ['cps', 'inPPS', 'outPPS', 'inBPS', 'outBPS'] as const;
const SCALE: Readonly<Record<string, number>> = { K: 1e3, M: 1e6, G: 1e9, T: 1e12 };

export interface ParsedEndpoint extends IpvsEndpoint {
  readonly family: 4 | 6;
  readonly problem?: string;
}

/** `ADDR:PORT`, `[V6]:PORT`, `host:name`, or a bare address (names cut by ipvsadm). */
export function parseIpvsEndpoint(text: string): ParsedEndpoint {
  let host = text;
  let portText: string | undefined;
  let bracketed = false;
  let problem: string | undefined;
  if (text.startsWith('[')) {
    bracketed = true;
    const close = text.indexOf(']');
    if (close < 0) {
      host = text.slice(1);
      problem = 'missing closing bracket';
    } else {
      host = text.slice(1, close);
      const rest = text.slice(close + 1);
      if (rest.startsWith(':')) portText = rest.slice(1);
      else if (rest !== '') problem = `unexpected ${JSON.stringify(rest)} after the address`;
    }
  } else {
    const colons = text.split(':').length - 1;
    if (colons === 1) {
      const i = text.indexOf(':');
      host = text.slice(0, i);
      portText = text.slice(i + 1);
    } else if (colons > 1 && !parseIp(text)) {
      const i = text.lastIndexOf(':');
      host = text.slice(0, i);
      portText = text.slice(i + 1);
    }
  }
  const ip: Ip | undefined = parseIp(host);
  let port: number | undefined;
  let portName: string | undefined;
  if (portText !== undefined) {
    if (/^\d+$/.test(portText)) {
      port = Number(portText);
      if (port > 65535) {
        problem ??= `port ${portText} out of range`;
        port = undefined;
      }
    } else if (/^[A-Za-z][\w.+-]*$/.test(portText)) {
      portName = portText;
      port = WELL_KNOWN_PORTS[portText];
    } else problem ??= portText === '' ? 'empty port' : `bad port ${JSON.stringify(portText)}`;
  }
  if (!ip && /^[\d.]+$/.test(host)) problem ??= `bad IPv4 address ${JSON.stringify(host)}`;
  if (host === '') problem ??= 'empty address';
  const family: 4 | 6 = ip ? ip.family : bracketed || host.includes(':') ? 6 : 4;
  const out: Mutable<ParsedEndpoint> = { address: host, family };
  if (ip) out.ip = ip;
  if (port !== undefined) out.port = port;
  if (portName !== undefined) out.portName = portName;
  if (problem) out.problem = problem;
  return out;
}

export function numberOf(t: Tok): number {
  const m = /^(\d+)([KMGT])?$/.exec(t.text);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] ? SCALE[m[2]] : 1);
}

export function counters(keys: readonly string[], nums: readonly Tok[]): IpvsStats {
  const out: Record<string, number> = {};
  keys.forEach((k, i) => {
    if (nums[i] !== undefined) out[k] = numberOf(nums[i]);
  });
  return out;
}

/** The service option of a `--save` rule → the protocol of the service it names. */
export const SERVICE_OPTION: Readonly<Record<string, IpvsProtocol>> = {
  '-t': 'TCP',
  '--tcp-service': 'TCP',
  '-u': 'UDP',
  '--udp-service': 'UDP',
  '--sctp-service': 'SCTP',
  '-f': 'FWM',
  '--fwmark-service': 'FWM',
};
