/**
 * The lines of an ipvsadm listing (`-Ln`, `--stats`, `--rate`, `--thresholds`, `--persistent-conn`,
 * `--tun-info`): a virtual service line and the real server lines under it. A service listed again
 * in another section with another view (`-Ln` pasted with `--stats`) is merged into the first.
 */
import { realServerKey, virtualServerKey, type IpvsProtocol, type RealServer } from '../model/ipvs.js';
import type { IpvsadmView, RealServerSyntax, ServiceSyntax } from '../../grammars/ipvsadm/index.js';
import { RATE_KEYS, STATS_KEYS, counters, numberOf, type Mutable } from './ipvsadm-values.js';
import { setEndpoint, type IpvsReading, type VsBuilder } from './ipvsadm-reading.js';

/** A virtual service line: a new service, or more values for one listed in an earlier section. */
export function readListedService(r: IpvsReading, s: ServiceSyntax, view: IpvsadmView | undefined, line: number, textLine: string): void {
  const built = buildService(r, s, view, line, textLine);
  if (!built) return;
  r.dumpView ??= built.stats || built.rate ? 'stats' : 'list';
  const key = virtualServerKey(built);
  const prev = r.byKey.get(key);
  if (prev && prev.section !== r.section && prev.view !== view) {
    mergeService(prev.vs, built);
    r.current = { vs: prev.vs, merging: true };
    r.report('info', 'ipvsadm/merged-listing', `${key} was already listed at line ${prev.vs.line}; merged the values of this ${view === 'list' || view === undefined ? '-L' : `--${view}`} listing into it`, line, s.protocol.column);
    return;
  }
  if (prev) {
    r.report('warning', 'ipvsadm/duplicate-virtual-server', `virtual service ${key} is listed again (first at line ${prev.vs.line}); kept both`, line, s.protocol.column);
  }
  r.virtualServers.push(built);
  if (!prev) r.byKey.set(key, { vs: built, view, section: r.section });
  r.current = { vs: built, merging: false };
}

/** A real server line: under the current service, or its values merged into the one listed before. */
export function readListedRealServer(r: IpvsReading, s: RealServerSyntax, view: IpvsadmView | undefined, line: number, textLine: string): void {
  const current = r.current;
  if (!current) {
    r.reject(line, textLine, 'real server without a virtual service');
    r.report('error', 'ipvsadm/orphan-real-server', 'real server line before any virtual service line', line, s.arrow.column, {
      expected: 'a virtual service line (TCP|UDP|SCTP|FWM …) first',
      found: "'->'",
    });
    return;
  }
  const rs = buildRealServer(r, s, view, line, textLine);
  if (!rs) return;
  if (current.merging) {
    const k = realServerKey(rs);
    const same = current.vs.realServers.find((x) => realServerKey(x) === k);
    if (same) {
      for (const [key, value] of Object.entries(rs)) {
        if (key === 'line' || key === 'column') continue;
        if ((same as Record<string, unknown>)[key] === undefined) (same as Record<string, unknown>)[key] = value;
      }
      return;
    }
  }
  current.vs.realServers.push(rs);
}

function buildService(r: IpvsReading, s: ServiceSyntax, view: IpvsadmView | undefined, line: number, textLine: string): VsBuilder | undefined {
  const protocol = s.protocol.text as IpvsProtocol;
  const vs: VsBuilder = { protocol, family: 4, schedFlags: [], ops: false, realServers: [], line, column: s.protocol.column, file: r.file };
  if (protocol === 'FWM') {
    if (s.target.type !== 'Integer') {
      r.badFwmark(s.target, line, textLine);
      return undefined;
    }
    vs.fwmark = Number(s.target.text);
    if (s.ipv6) vs.family = 6;
  } else {
    const ep = r.endpointOrReport(s.target, line, 'virtual service address');
    if (ep.problem && !r.isCut(line)) {
      r.reject(line, textLine, `bad virtual service address: ${ep.problem}`);
      return undefined;
    }
    vs.family = ep.family;
    setEndpoint(vs, ep);
    if (s.ipv6) r.report('warning', 'ipvsadm/unexpected-ipv6', "'IPv6' is only printed after a firewall mark", line, s.ipv6.column);
  }
  if (s.scheduler) vs.scheduler = s.scheduler.text;
  if (s.schedFlags) vs.schedFlags = s.schedFlags.text.slice(1, -1).split(',').filter((f) => f !== '');
  if (s.persistent && s.timeout) vs.persistent = numberOf(s.timeout);
  if (s.mask) vs.netmask = s.mask.text;
  if (s.pe) vs.pe = s.pe.text;
  if (s.ops) vs.ops = true;
  serviceCounters(r, s, vs, view, line, textLine);
  return vs;
}

/** The counter columns of a virtual service line, or the report of what its view says is missing. */
function serviceCounters(r: IpvsReading, s: ServiceSyntax, vs: VsBuilder, view: IpvsadmView | undefined, line: number, textLine: string): void {
  if (s.numbers.length > 0) {
    const v = view ?? 'stats';
    if (v !== 'stats' && v !== 'rate') {
      r.report('warning', 'ipvsadm/view-mismatch', `counters on a virtual service line of a ${v} listing; read as --stats`, line, s.numbers[0].column);
    }
    if (!r.tooMany(s.numbers, 5, line, 'virtual service line')) {
      r.tooFew(s.numbers, 5, line, textLine, 'virtual service line');
      if (v === 'rate') vs.rate = counters(RATE_KEYS, s.numbers);
      else vs.stats = counters(STATS_KEYS, s.numbers);
    }
  } else if (!s.scheduler && (view === undefined || view === 'list' || view === 'tun-info' || view === 'thresholds' || view === 'persistent-conn')) {
    r.report('warning', 'ipvsadm/truncated-line', 'virtual service line without a scheduler (line cut?)', line, textLine.trimEnd().length + 1, {
      expected: 'scheduler',
      found: 'end of line',
    });
  } else if (!s.scheduler && (view === 'stats' || view === 'rate')) {
    r.tooFew(s.numbers, 5, line, textLine, 'virtual service line');
  }
}

function mergeService(into: VsBuilder, from: VsBuilder): void {
  for (const k of ['scheduler', 'persistent', 'netmask', 'pe', 'stats', 'rate', 'port', 'portName'] as const) {
    if (into[k] === undefined && from[k] !== undefined) (into as Record<string, unknown>)[k] = from[k];
  }
  if (into.schedFlags.length === 0) into.schedFlags = from.schedFlags;
  into.ops ||= from.ops;
}

function buildRealServer(r: IpvsReading, s: RealServerSyntax, view: IpvsadmView | undefined, line: number, textLine: string): Mutable<RealServer> | undefined {
  const ep = r.endpointOrReport(s.address, line, 'real server address');
  if (ep.problem && !r.isCut(line)) {
    r.reject(line, textLine, `bad real server address: ${ep.problem}`);
    return undefined;
  }
  const rs: Mutable<RealServer> = { address: ep.address, line, column: s.address.column };
  setEndpoint(rs, ep);
  if (s.forward) rs.forward = s.forward.text;
  if (s.tunnelInfo) rs.tunnelInfo = s.tunnelInfo.text;
  const n = s.numbers;
  const v: IpvsadmView = view ?? (s.forward || n.length === 3 ? 'list' : 'stats');
  if (n.length === 0 && !s.forward) {
    r.report('warning', 'ipvsadm/truncated-line', 'real server line has only an address (line cut?)', line, textLine.trimEnd().length + 1, {
      expected: v === 'list' || v === 'tun-info' ? 'forward method, weight, ActiveConn, InActConn' : 'counters',
      found: 'end of line',
    });
    return rs;
  }
  realServerColumns(r, s, rs, v, line, textLine);
  return rs;
}

/** The number columns of a real server line, read by the view they were listed in. */
function realServerColumns(r: IpvsReading, s: RealServerSyntax, rs: Mutable<RealServer>, v: IpvsadmView, line: number, textLine: string): void {
  const n = s.numbers;
  const what = 'real server line';
  switch (v) {
    case 'list':
    case 'tun-info':
    case 'save':
    case 'connections':
      if (!s.forward) r.report('warning', 'ipvsadm/view-mismatch', 'real server line without a forward method in a -L listing', line, s.address.endColumn);
      if (!r.tooMany(n, 3, line, what)) {
        r.tooFew(n, 3, line, textLine, what);
        if (n[0]) rs.weight = numberOf(n[0]);
        if (n[1]) rs.activeConn = numberOf(n[1]);
        if (n[2]) rs.inactiveConn = numberOf(n[2]);
      }
      break;
    case 'stats':
    case 'rate':
      if (s.forward) r.report('warning', 'ipvsadm/view-mismatch', `forward method on a real server line of a --${v} listing`, line, s.forward.column);
      if (!r.tooMany(n, 5, line, what)) {
        r.tooFew(n, 5, line, textLine, what);
        if (v === 'rate') rs.rate = counters(RATE_KEYS, n);
        else rs.stats = counters(STATS_KEYS, n);
      }
      break;
    case 'thresholds':
    case 'persistent-conn':
      if (!r.tooMany(n, 4, line, what)) {
        r.tooFew(n, 4, line, textLine, what);
        if (v === 'thresholds') {
          if (n[0]) rs.uThreshold = numberOf(n[0]);
          if (n[1]) rs.lThreshold = numberOf(n[1]);
        } else {
          if (n[0]) rs.weight = numberOf(n[0]);
          if (n[1]) rs.persistConn = numberOf(n[1]);
        }
        if (n[2]) rs.activeConn = numberOf(n[2]);
        if (n[3]) rs.inactiveConn = numberOf(n[3]);
      }
      break;
  }
}
