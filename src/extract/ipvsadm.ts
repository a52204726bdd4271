/**
 * ipvsadm line syntax (grammars/ipvsadm) → IpvsDump (src/model/ipvs.ts).
 *
 * Interprets what the grammar leaves open: addresses and named ports, the meaning of the
 * counter columns in each view (`-Ln`, `--stats`, `--rate`, `--thresholds`, `--persistent-conn`,
 * `--tun-info`), `--save` rule options, and `-Lnc` connection entries. Value problems become
 * diagnostics; the line is kept (model or `unsupported`), never dropped.
 */
import { diagnostic, printable, type Diagnostic, type Severity } from '../source/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { parseIp, type Ip } from '../model/addr.js';
import {
  realServerKey,
  virtualServerKey,
  type IpvsConnection,
  type IpvsDump,
  type IpvsEndpoint,
  type IpvsProtocol,
  type IpvsStats,
  type IpvsUnsupported,
  type IpvsView,
  type RealServer,
  type VirtualServer,
} from '../model/ipvs.js';
import {
  parseIpvsadmSyntax,
  type ConnectionSyntax,
  type IpvsadmView,
  type RealServerSyntax,
  type SaveSyntax,
  type ServiceSyntax,
  type Tok,
} from '../../grammars/ipvsadm/index.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type VsBuilder = Mutable<Omit<VirtualServer, 'realServers'>> & { realServers: Mutable<RealServer>[] };

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

const STATS_KEYS = ['conns', 'inPkts', 'outPkts', 'inBytes', 'outBytes'] as const;
const RATE_KEYS = ['cps', 'inPPS', 'outPPS', 'inBPS', 'outBPS'] as const;
const SCALE: Readonly<Record<string, number>> = { K: 1e3, M: 1e6, G: 1e9, T: 1e12 };

interface ParsedEndpoint extends IpvsEndpoint {
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

function numberOf(t: Tok): number {
  const m = /^(\d+)([KMGT])?$/.exec(t.text);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] ? SCALE[m[2]] : 1);
}

function counters(keys: readonly string[], nums: readonly Tok[]): IpvsStats {
  const out: Record<string, number> = {};
  keys.forEach((k, i) => {
    if (nums[i] !== undefined) out[k] = numberOf(nums[i]);
  });
  return out;
}

const SERVICE_OPTION: Readonly<Record<string, IpvsProtocol>> = {
  '-t': 'TCP',
  '--tcp-service': 'TCP',
  '-u': 'UDP',
  '--udp-service': 'UDP',
  '--sctp-service': 'SCTP',
  '-f': 'FWM',
  '--fwmark-service': 'FWM',
};

/** Normalise the grammar's view to the model's; `tun-info` is a `list`. */
function modelView(v: IpvsadmView): IpvsView {
  return v === 'tun-info' ? 'list' : v;
}

export function extractIpvsDump(text: string, file: string): { dump: IpvsDump; diagnostics: Diagnostic[] } {
  const syntax = parseIpvsadmSyntax(text, file);
  const diagnostics: Diagnostic[] = [...syntax.diagnostics];
  const unsupported: IpvsUnsupported[] = [];
  const noise: IpvsUnsupported[] = [];
  const virtualServers: VsBuilder[] = [];
  const connections: IpvsConnection[] = [];
  let version: string | undefined;
  let tableSize: number | undefined;
  let dumpView: IpvsView | undefined;

  /** Services by key with the view of the section they came from, for merging `-Ln` + `--stats` pastes. */
  const byKey = new Map<string, { vs: VsBuilder; view: IpvsadmView | undefined; section: number }>();
  let section = 0;
  let current: { vs: VsBuilder; merging: boolean } | undefined;

  const report = (severity: Severity, code: string, message: string, line: number, column: number, extra?: { expected?: string; found?: string }) =>
    diagnostics.push(diagnostic(severity, code, message, file, line, column, extra));
  const reject = (line: number, textLine: string, reason: string) => unsupported.push({ line, text: textLine, reason });
  const isCut = (line: number) => line === syntax.lastLine;

  for (const e of syntax.entries) {
    switch (e.kind) {
      case 'version':
        version ??= e.version;
        if (e.size !== undefined) tableSize ??= e.size;
        section++;
        current = undefined;
        continue;
      case 'title':
        dumpView ??= modelView(e.view);
        section++;
        current = undefined;
        continue;
      case 'title2':
        continue;
      case 'skipped':
        (e.noise ? noise : unsupported).push({ line: e.line, text: e.text, reason: e.reason });
        continue;
      case 'syntax':
        break;
    }
    const s = e.syntax;
    const view = e.view;
    if (s.kind === 'service') {
      const built = buildService(s, view, e.line, e.text);
      if (!built) continue;
      dumpView ??= built.stats || built.rate ? 'stats' : 'list';
      const key = virtualServerKey(built);
      const prev = byKey.get(key);
      if (prev && prev.section !== section && prev.view !== view) {
        mergeService(prev.vs, built);
        current = { vs: prev.vs, merging: true };
        report('info', 'ipvsadm/merged-listing', `${key} was already listed at line ${prev.vs.line}; merged the values of this ${view === 'list' || view === undefined ? '-L' : `--${view}`} listing into it`, e.line, s.protocol.column);
      } else {
        if (prev) {
          report(
            'warning',
            'ipvsadm/duplicate-virtual-server',
            `virtual service ${key} is listed again (first at line ${prev.vs.line}); kept both`,
            e.line,
            s.protocol.column,
          );
        }
        virtualServers.push(built);
        if (!prev) byKey.set(key, { vs: built, view, section });
        current = { vs: built, merging: false };
      }
    } else if (s.kind === 'real-server') {
      if (!current) {
        reject(e.line, e.text, 'real server without a virtual service');
        report('error', 'ipvsadm/orphan-real-server', 'real server line before any virtual service line', e.line, s.arrow.column, {
          expected: 'a virtual service line (TCP|UDP|SCTP|FWM …) first',
          found: "'->'",
        });
        continue;
      }
      const rs = buildRealServer(s, view, e.line, e.text);
      if (!rs) continue;
      if (current.merging) {
        const k = realServerKey(rs);
        const same = current.vs.realServers.find((r) => realServerKey(r) === k);
        if (same) {
          for (const [key, value] of Object.entries(rs)) {
            if (key === 'line' || key === 'column') continue;
            if ((same as Record<string, unknown>)[key] === undefined) (same as Record<string, unknown>)[key] = value;
          }
          continue;
        }
      }
      current.vs.realServers.push(rs);
    } else if (s.kind === 'save') {
      dumpView ??= 'save';
      handleSave(s, e.line, e.text);
    } else {
      dumpView ??= 'connections';
      const c = buildConnection(s, e.line, e.text);
      if (c) connections.push(c);
    }
  }

  // ---- builders -------------------------------------------------------------------------------

  function endpointOrReport(t: Tok, line: number, what: string): ParsedEndpoint {
    const ep = parseIpvsEndpoint(t.text);
    if (ep.problem) {
      const cut = isCut(line);
      report(cut ? 'warning' : 'error', cut ? 'ipvsadm/truncated-line' : 'extract/bad-address', `${what} ${printable(t.text, 60)}: ${ep.problem}`, line, t.column, {
        expected: 'ADDRESS:PORT or [IPV6]:PORT',
        found: printable(t.text, 60),
      });
    } else if (!ep.ip) {
      report('info', 'extract/unresolved-address', `${what} ${printable(t.text, 60)} is a name, not an IP address (ipvsadm -L without -n?); kept as printed`, line, t.column);
    }
    if (ep.port === undefined && ep.portName === undefined && !ep.problem) {
      report('warning', 'ipvsadm/missing-port', `${what} ${printable(t.text, 60)} has no port (name cut by ipvsadm?)`, line, t.column);
    } else if (ep.portName !== undefined && ep.port === undefined) {
      report('info', 'extract/unknown-port-name', `port name ${printable(ep.portName, 40)} is not a well-known port; port number unknown`, line, t.column);
    }
    return ep;
  }

  function tooMany(nums: readonly Tok[], expected: number, line: number, what: string): boolean {
    if (nums.length <= expected) return false;
    const extra = nums[expected];
    report('error', 'ipvsadm/extra-field', `${what} has ${nums.length} numbers where ${expected} were expected`, line, extra.column, {
      expected: 'end of line',
      found: printable(extra.text, 40),
    });
    return true;
  }

  function tooFew(nums: readonly Tok[], expected: number, line: number, textLine: string, what: string): void {
    if (nums.length >= expected) return;
    report(
      'warning',
      'ipvsadm/truncated-line',
      `${what} has ${nums.length} of ${expected} columns: line cut or columns lost; missing values left unset`,
      line,
      textLine.trimEnd().length + 1,
      { expected: `${expected - nums.length} more number(s)`, found: 'end of line' },
    );
  }

  function buildService(s: ServiceSyntax, view: IpvsadmView | undefined, line: number, textLine: string): VsBuilder | undefined {
    const protocol = s.protocol.text as IpvsProtocol;
    const vs: VsBuilder = { protocol, family: 4, schedFlags: [], ops: false, realServers: [], line, column: s.protocol.column, file };
    if (protocol === 'FWM') {
      if (s.target.type !== 'Integer') {
        reject(line, textLine, 'bad firewall mark');
        report('error', 'extract/bad-fwmark', `firewall mark must be a number, found ${printable(s.target.text, 40)}`, line, s.target.column, {
          expected: 'number',
          found: printable(s.target.text, 40),
        });
        return undefined;
      }
      vs.fwmark = Number(s.target.text);
      if (s.ipv6) vs.family = 6;
    } else {
      const ep = endpointOrReport(s.target, line, 'virtual service address');
      if (ep.problem && !isCut(line)) {
        reject(line, textLine, `bad virtual service address: ${ep.problem}`);
        return undefined;
      }
      vs.address = ep.address;
      vs.family = ep.family;
      if (ep.ip) vs.ip = ep.ip;
      if (ep.port !== undefined) vs.port = ep.port;
      if (ep.portName !== undefined) vs.portName = ep.portName;
      if (s.ipv6) report('warning', 'ipvsadm/unexpected-ipv6', "'IPv6' is only printed after a firewall mark", line, s.ipv6.column);
    }
    if (s.scheduler) vs.scheduler = s.scheduler.text;
    if (s.schedFlags) vs.schedFlags = s.schedFlags.text.slice(1, -1).split(',').filter((f) => f !== '');
    if (s.persistent && s.timeout) vs.persistent = numberOf(s.timeout);
    if (s.mask) vs.netmask = s.mask.text;
    if (s.pe) vs.pe = s.pe.text;
    if (s.ops) vs.ops = true;
    if (s.numbers.length > 0) {
      const v = view ?? 'stats';
      if (v !== 'stats' && v !== 'rate') {
        report('warning', 'ipvsadm/view-mismatch', `counters on a virtual service line of a ${v} listing; read as --stats`, line, s.numbers[0].column);
      }
      if (!tooMany(s.numbers, 5, line, 'virtual service line')) {
        tooFew(s.numbers, 5, line, textLine, 'virtual service line');
        if (v === 'rate') vs.rate = counters(RATE_KEYS, s.numbers);
        else vs.stats = counters(STATS_KEYS, s.numbers);
      }
    } else if (!s.scheduler && (view === undefined || view === 'list' || view === 'tun-info' || view === 'thresholds' || view === 'persistent-conn')) {
      report('warning', 'ipvsadm/truncated-line', 'virtual service line without a scheduler (line cut?)', line, textLine.trimEnd().length + 1, {
        expected: 'scheduler',
        found: 'end of line',
      });
    } else if (!s.scheduler && (view === 'stats' || view === 'rate')) {
      tooFew(s.numbers, 5, line, textLine, 'virtual service line');
    }
    return vs;
  }

  function mergeService(into: VsBuilder, from: VsBuilder): void {
    for (const k of ['scheduler', 'persistent', 'netmask', 'pe', 'stats', 'rate', 'port', 'portName'] as const) {
      if (into[k] === undefined && from[k] !== undefined) (into as Record<string, unknown>)[k] = from[k];
    }
    if (into.schedFlags.length === 0) into.schedFlags = from.schedFlags;
    into.ops ||= from.ops;
  }

  function buildRealServer(s: RealServerSyntax, view: IpvsadmView | undefined, line: number, textLine: string): Mutable<RealServer> | undefined {
    const ep = endpointOrReport(s.address, line, 'real server address');
    if (ep.problem && !isCut(line)) {
      reject(line, textLine, `bad real server address: ${ep.problem}`);
      return undefined;
    }
    const rs: Mutable<RealServer> = { address: ep.address, line, column: s.address.column };
    if (ep.ip) rs.ip = ep.ip;
    if (ep.port !== undefined) rs.port = ep.port;
    if (ep.portName !== undefined) rs.portName = ep.portName;
    if (s.forward) rs.forward = s.forward.text;
    if (s.tunnelInfo) rs.tunnelInfo = s.tunnelInfo.text;
    const n = s.numbers;
    const v: IpvsadmView = view ?? (s.forward || n.length === 3 ? 'list' : 'stats');
    const what = 'real server line';
    if (n.length === 0 && !s.forward) {
      report('warning', 'ipvsadm/truncated-line', 'real server line has only an address (line cut?)', line, textLine.trimEnd().length + 1, {
        expected: v === 'list' || v === 'tun-info' ? 'forward method, weight, ActiveConn, InActConn' : 'counters',
        found: 'end of line',
      });
      return rs;
    }
    switch (v) {
      case 'list':
      case 'tun-info':
      case 'save':
      case 'connections':
        if (!s.forward) report('warning', 'ipvsadm/view-mismatch', 'real server line without a forward method in a -L listing', line, s.address.endColumn);
        if (!tooMany(n, 3, line, what)) {
          tooFew(n, 3, line, textLine, what);
          if (n[0]) rs.weight = numberOf(n[0]);
          if (n[1]) rs.activeConn = numberOf(n[1]);
          if (n[2]) rs.inactiveConn = numberOf(n[2]);
        }
        break;
      case 'stats':
      case 'rate':
        if (s.forward) report('warning', 'ipvsadm/view-mismatch', `forward method on a real server line of a --${v} listing`, line, s.forward.column);
        if (!tooMany(n, 5, line, what)) {
          tooFew(n, 5, line, textLine, what);
          if (v === 'rate') rs.rate = counters(RATE_KEYS, n);
          else rs.stats = counters(STATS_KEYS, n);
        }
        break;
      case 'thresholds':
      case 'persistent-conn':
        if (!tooMany(n, 4, line, what)) {
          tooFew(n, 4, line, textLine, what);
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
    return rs;
  }

  function handleSave(s: SaveSyntax, line: number, textLine: string): void {
    const protocol = SERVICE_OPTION[s.serviceOption.text];
    const target = s.target;
    if (!target) return;
    const isService = s.command.text === '-A' || s.command.text === '--add-service';
    let family: 4 | 6 = 4;
    let address: ParsedEndpoint | undefined;
    let fwmark: number | undefined;
    if (protocol === 'FWM') {
      if (target.type !== 'Integer') {
        reject(line, textLine, 'bad firewall mark');
        report('error', 'extract/bad-fwmark', `firewall mark must be a number, found ${printable(target.text, 40)}`, line, target.column, {
          expected: 'number',
          found: printable(target.text, 40),
        });
        return;
      }
      fwmark = Number(target.text);
    } else {
      address = endpointOrReport(target, line, 'virtual service address');
      if (address.problem && !isCut(line)) {
        reject(line, textLine, `bad virtual service address: ${address.problem}`);
        return;
      }
      family = address.family;
    }
    const vs: VsBuilder = { protocol, family, schedFlags: [], ops: false, realServers: [], line, column: s.command.column, file };
    if (fwmark !== undefined) vs.fwmark = fwmark;
    if (address) {
      vs.address = address.address;
      if (address.ip) vs.ip = address.ip;
      if (address.port !== undefined) vs.port = address.port;
      if (address.portName !== undefined) vs.portName = address.portName;
    }
    const rs: Mutable<RealServer> = { address: '', line, column: s.command.column };
    let realServerSeen = false;
    const tun: string[] = [];
    for (const o of s.options) {
      const name = o.name.text;
      const value = o.value;
      const needValue = (): Tok | undefined => {
        if (!value) {
          report(isCut(line) ? 'warning' : 'error', isCut(line) ? 'ipvsadm/truncated-line' : 'ipvsadm/missing-value', `option ${name} needs a value`, line, o.name.endColumn, {
            expected: 'a value',
            found: 'end of line',
          });
        }
        return value;
      };
      const noValue = (): void => {
        if (value) report('error', 'ipvsadm/unexpected-value', `option ${name} takes no value`, line, value.column, { expected: 'an option', found: printable(value.text, 40) });
      };
      switch (name) {
        case '-6':
        case '--ipv6':
          noValue();
          vs.family = 6;
          break;
        case '-s':
        case '--scheduler':
          if (isService && needValue()) vs.scheduler = value!.text;
          break;
        case '-p':
        case '--persistent':
          // ipvsadm's default persistence timeout when -p has no value.
          vs.persistent = value ? numberOf(value) : 300;
          break;
        case '-M':
        case '--netmask':
          if (needValue()) vs.netmask = value!.text;
          break;
        case '--pe':
        case 'pe':
          if (needValue()) vs.pe = value!.text;
          break;
        case '-o':
        case '--ops':
        case 'ops':
          noValue();
          vs.ops = true;
          break;
        case '-b':
        case '--sched-flags':
          if (needValue()) vs.schedFlags = value!.text.split(',').filter((f) => f !== '');
          break;
        case '-r':
        case '--real-server':
          if (needValue()) {
            const ep = endpointOrReport(value!, line, 'real server address');
            rs.address = ep.address;
            rs.column = value!.column;
            if (ep.ip) rs.ip = ep.ip;
            if (ep.port !== undefined) rs.port = ep.port;
            if (ep.portName !== undefined) rs.portName = ep.portName;
            realServerSeen = true;
          }
          break;
        case '-m':
        case '--masquerading':
          noValue();
          rs.forward = 'Masq';
          break;
        case '-g':
        case '--gatewaying':
          noValue();
          rs.forward = 'Route';
          break;
        case '-i':
        case '--ipip':
          noValue();
          rs.forward = 'Tunnel';
          break;
        case '-w':
        case '--weight':
          if (needValue()) rs.weight = numberOf(value!);
          break;
        case '-x':
        case '--u-threshold':
          if (needValue()) rs.uThreshold = numberOf(value!);
          break;
        case '-y':
        case '--l-threshold':
          if (needValue()) rs.lThreshold = numberOf(value!);
          break;
        case '--tun-type':
        case '--tun-port':
          if (needValue()) tun.push(value!.text);
          break;
        case '--tun-nocsum':
          tun.push('-c');
          break;
        case '--tun-csum':
          tun.push('+c');
          break;
        case '--tun-remcsum':
          tun.push('r+c');
          break;
        default:
          report('warning', 'ipvsadm/unknown-option', `unknown ipvsadm rule option ${printable(name, 40)}: ignored`, line, o.name.column, {
            found: printable(name, 40),
          });
      }
    }
    if (isService) {
      if (!vs.scheduler) report('warning', 'ipvsadm/missing-scheduler', 'rule adds a service without -s SCHEDULER (ipvsadm default: wlc)', line, textLine.trimEnd().length + 1);
      const key = virtualServerKey(vs);
      if (byKey.has(key)) report('warning', 'ipvsadm/duplicate-virtual-server', `virtual service ${key} is added twice`, line, s.command.column);
      else byKey.set(key, { vs, view: 'save', section });
      virtualServers.push(vs);
      return;
    }
    if (!realServerSeen) {
      reject(line, textLine, 'real server rule without -r');
      report('error', 'ipvsadm/missing-real-server', 'rule -a without -r SERVER-ADDRESS', line, textLine.trimEnd().length + 1, {
        expected: '-r ADDRESS:PORT',
        found: 'end of line',
      });
      return;
    }
    if (tun.length > 0) rs.tunnelInfo = tun.join(':');
    rs.forward ??= 'Route'; // ipvsadm's default forwarding method is gatewaying (-g)
    rs.weight ??= 1;
    const owner = byKey.get(virtualServerKey(vs))?.vs;
    if (!owner) {
      reject(line, textLine, 'real server for a service that was not added');
      report('error', 'ipvsadm/orphan-real-server', `real server for ${virtualServerKey(vs)}, which no -A rule adds`, line, s.serviceOption.column, {
        expected: `-A ${s.serviceOption.text} ${target.text} before this line`,
        found: printable(textLine.trim(), 60),
      });
      return;
    }
    owner.realServers.push(rs);
  }

  function buildConnection(s: ConnectionSyntax, line: number, textLine: string): IpvsConnection | undefined {
    const f = s.fields;
    if (f.length > 8) {
      report('error', 'ipvsadm/extra-field', `connection entry has ${f.length} fields where at most 8 were expected`, line, f[8].column, {
        expected: 'end of line',
        found: printable(f[8].text, 40),
      });
    }
    if (f.length < 6) {
      reject(line, textLine, 'incomplete connection entry');
      report(isCut(line) ? 'warning' : 'error', 'ipvsadm/truncated-line', `connection entry has ${f.length} of 6 fields`, line, textLine.trimEnd().length + 1, {
        expected: 'pro expire state source virtual destination',
        found: 'end of line',
      });
      return undefined;
    }
    const m = /^(\d+):(\d\d)$/.exec(f[1].text);
    if (!m) {
      reject(line, textLine, 'bad expire time');
      report('error', 'extract/bad-expire', `connection expire time must be MM:SS, found ${printable(f[1].text, 20)}`, line, f[1].column, {
        expected: 'MM:SS',
        found: printable(f[1].text, 20),
      });
      return undefined;
    }
    const ep = (t: Tok): IpvsEndpoint => {
      const p = parseIpvsEndpoint(t.text);
      if (p.problem) report('warning', 'extract/bad-address', `connection address ${printable(t.text, 60)}: ${p.problem}`, line, t.column);
      const { family: _f, problem: _p, ...rest } = p;
      return rest;
    };
    const c: Mutable<IpvsConnection> = {
      protocol: f[0].text,
      expire: Number(m[1]) * 60 + Number(m[2]),
      state: f[2].text,
      source: ep(f[3]),
      virtual: ep(f[4]),
      destination: ep(f[5]),
      line,
      column: f[0].column,
    };
    if (f[6]) c.peName = f[6].text;
    if (f[7]) c.peData = f[7].text;
    return c;
  }

  const dump: IpvsDump = {
    ...(version !== undefined ? { version } : {}),
    ...(tableSize !== undefined ? { tableSize } : {}),
    virtualServers,
    ...(connections.length > 0 || dumpView === 'connections' ? { connections } : {}),
    view: dumpView ?? 'list',
    unsupported: unsupported.sort((a, b) => a.line - b.line),
    noise,
  };
  // The text ends inside a listing line (no final newline after a virtual or real server line): the
  // dump was cut there, and the last virtual server's real servers may go on past the cut.
  const last = syntax.entries[syntax.entries.length - 1];
  const cutInListing = syntax.missingFinalNewline && virtualServers.length > 0 && dumpView !== 'connections' && (last?.kind === 'syntax' || (last?.kind === 'skipped' && !last.noise)) && last.line === syntax.lastLine;
  if (cutInListing) (dump as { truncated?: { line: number } }).truncated = { line: syntax.lastLine };
  return { dump, diagnostics: diagnostics.sort((a, b) => a.line - b.line || a.column - b.column) };
}

export const ipvsadmParser: FormatParser<IpvsDump> = {
  id: 'ipvsadm',
  parse(text: string, file: string): ParsedInput<IpvsDump> {
    let result: { dump: IpvsDump; diagnostics: Diagnostic[] };
    try {
      result = extractIpvsDump(text, file);
    } catch (err) {
      // Parsing must never throw on user input; a bug here still yields a diagnostic.
      result = {
        dump: { virtualServers: [], view: 'list', unsupported: [], noise: [] },
        diagnostics: [diagnostic('error', 'internal/exception', `ipvsadm parser failed: ${printable(String(err), 200)}`, file, 1, 1)],
      };
    }
    const { dump, diagnostics } = result;
    const counts: Record<string, number> = {
      virtualServers: dump.virtualServers.length,
      realServers: dump.virtualServers.reduce((n, vs) => n + vs.realServers.length, 0),
    };
    if (dump.connections) counts.connections = dump.connections.length;
    return { format: 'ipvsadm', file, data: dump, diagnostics, counts };
  },
};
