/**
 * `ipvsadm --save` rules: `-A -t VIP:PORT -s rr …` adds a virtual service, `-a -t VIP:PORT -r
 * RIP:PORT -m -w 1` one of its real servers. Options are read as ipvsadm reads them, with its
 * defaults (persistence 300 s, gatewaying, weight 1).
 */
import { printable } from '../source/index.js';
import { virtualServerKey, type RealServer } from '../model/ipvs.js';
import type { SaveOptionSyntax, SaveSyntax, Tok } from '../../grammars/ipvsadm/index.js';
import { SERVICE_OPTION, numberOf, type Mutable, type ParsedEndpoint } from './ipvsadm-values.js';
import { setEndpoint, type IpvsReading, type VsBuilder } from './ipvsadm-reading.js';

/** One rule being read: the service it names and, for `-a`, the real server it adds. */
interface SaveRule {
  readonly vs: VsBuilder;
  readonly rs: Mutable<RealServer>;
  /** `--tun-*` options, joined as `ipvsadm -L --tun-info` prints them. */
  readonly tun: string[];
  realServerSeen: boolean;
  readonly isService: boolean;
  readonly line: number;
}

/** One option of a rule with the checks of its value. */
interface OptionAt {
  readonly name: string;
  readonly value: Tok | undefined;
  needValue(): Tok | undefined;
  noValue(): void;
}

export function readSaveRule(r: IpvsReading, s: SaveSyntax, line: number, textLine: string): void {
  const target = s.target;
  if (!target) return;
  const vs = savedService(r, s, target, line, textLine);
  if (!vs) return;
  const isService = s.command.text === '-A' || s.command.text === '--add-service';
  const rule: SaveRule = { vs, rs: { address: '', line, column: s.command.column }, tun: [], realServerSeen: false, isService, line };
  for (const o of s.options) readOption(r, rule, o);
  if (isService) addService(r, s, vs, line, textLine);
  else addRealServer(r, s, target, rule, textLine);
}

/** The service a rule names (`-t|-u|--sctp-service ADDR:PORT` or `-f MARK`), undefined when unusable. */
function savedService(r: IpvsReading, s: SaveSyntax, target: Tok, line: number, textLine: string): VsBuilder | undefined {
  const protocol = SERVICE_OPTION[s.serviceOption.text];
  let family: 4 | 6 = 4;
  let address: ParsedEndpoint | undefined;
  let fwmark: number | undefined;
  if (protocol === 'FWM') {
    if (target.type !== 'Integer') {
      r.badFwmark(target, line, textLine);
      return undefined;
    }
    fwmark = Number(target.text);
  } else {
    address = r.endpointOrReport(target, line, 'virtual service address');
    if (address.problem && !r.isCut(line)) {
      r.reject(line, textLine, `bad virtual service address: ${address.problem}`);
      return undefined;
    }
    family = address.family;
  }
  const vs: VsBuilder = { protocol, family, schedFlags: [], ops: false, realServers: [], line, column: s.command.column, file: r.file };
  if (fwmark !== undefined) vs.fwmark = fwmark;
  if (address) setEndpoint(vs, address);
  return vs;
}

function readOption(r: IpvsReading, rule: SaveRule, o: SaveOptionSyntax): void {
  const line = rule.line;
  const name = o.name.text;
  const value = o.value;
  const at: OptionAt = {
    name,
    value,
    needValue: () => {
      if (!value) {
        r.report(r.isCut(line) ? 'warning' : 'error', r.isCut(line) ? 'ipvsadm/truncated-line' : 'ipvsadm/missing-value', `option ${name} needs a value`, line, o.name.endColumn, {
          expected: 'a value',
          found: 'end of line',
        });
      }
      return value;
    },
    noValue: () => {
      if (value) r.report('error', 'ipvsadm/unexpected-value', `option ${name} takes no value`, line, value.column, { expected: 'an option', found: printable(value.text, 40) });
    },
  };
  if (serviceOption(rule, at) || realServerOption(r, rule, at)) return;
  r.report('warning', 'ipvsadm/unknown-option', `unknown ipvsadm rule option ${printable(name, 40)}: ignored`, line, o.name.column, {
    found: printable(name, 40),
  });
}

/** An option of the virtual service; false when `o` is not one. */
function serviceOption(rule: SaveRule, o: OptionAt): boolean {
  const vs = rule.vs;
  const value = o.value;
  switch (o.name) {
    case '-6':
    case '--ipv6':
      o.noValue();
      vs.family = 6;
      return true;
    case '-s':
    case '--scheduler':
      if (rule.isService && o.needValue()) vs.scheduler = value!.text;
      return true;
    case '-p':
    case '--persistent':
      // ipvsadm's default persistence timeout when -p has no value.
      vs.persistent = value ? numberOf(value) : 300;
      return true;
    case '-M':
    case '--netmask':
      if (o.needValue()) vs.netmask = value!.text;
      return true;
    case '--pe':
    case 'pe':
      if (o.needValue()) vs.pe = value!.text;
      return true;
    case '-o':
    case '--ops':
    case 'ops':
      o.noValue();
      vs.ops = true;
      return true;
    case '-b':
    case '--sched-flags':
      if (o.needValue()) vs.schedFlags = value!.text.split(',').filter((f) => f !== '');
      return true;
    default:
      return false;
  }
}

/** An option of the real server (or its tunnel); false when `o` is not one. */
function realServerOption(r: IpvsReading, rule: SaveRule, o: OptionAt): boolean {
  const rs = rule.rs;
  const value = o.value;
  switch (o.name) {
    case '-r':
    case '--real-server':
      if (o.needValue()) {
        const ep = r.endpointOrReport(value!, rule.line, 'real server address');
        rs.address = ep.address;
        rs.column = value!.column;
        setEndpoint(rs, ep);
        rule.realServerSeen = true;
      }
      return true;
    case '-m':
    case '--masquerading':
      o.noValue();
      rs.forward = 'Masq';
      return true;
    case '-g':
    case '--gatewaying':
      o.noValue();
      rs.forward = 'Route';
      return true;
    case '-i':
    case '--ipip':
      o.noValue();
      rs.forward = 'Tunnel';
      return true;
    case '-w':
    case '--weight':
      if (o.needValue()) rs.weight = numberOf(value!);
      return true;
    case '-x':
    case '--u-threshold':
      if (o.needValue()) rs.uThreshold = numberOf(value!);
      return true;
    case '-y':
    case '--l-threshold':
      if (o.needValue()) rs.lThreshold = numberOf(value!);
      return true;
    default:
      return tunnelOption(rule, o);
  }
}

function tunnelOption(rule: SaveRule, o: OptionAt): boolean {
  switch (o.name) {
    case '--tun-type':
    case '--tun-port':
      if (o.needValue()) rule.tun.push(o.value!.text);
      return true;
    case '--tun-nocsum':
      rule.tun.push('-c');
      return true;
    case '--tun-csum':
      rule.tun.push('+c');
      return true;
    case '--tun-remcsum':
      rule.tun.push('r+c');
      return true;
    default:
      return false;
  }
}

/** `-A`: a new virtual service. */
function addService(r: IpvsReading, s: SaveSyntax, vs: VsBuilder, line: number, textLine: string): void {
  if (!vs.scheduler) r.report('warning', 'ipvsadm/missing-scheduler', 'rule adds a service without -s SCHEDULER (ipvsadm default: wlc)', line, textLine.trimEnd().length + 1);
  const key = virtualServerKey(vs);
  if (r.byKey.has(key)) r.report('warning', 'ipvsadm/duplicate-virtual-server', `virtual service ${key} is added twice`, line, s.command.column);
  else r.byKey.set(key, { vs, view: 'save', section: r.section });
  r.virtualServers.push(vs);
}

/** `-a`: a real server of a service an earlier `-A` added. */
function addRealServer(r: IpvsReading, s: SaveSyntax, target: Tok, rule: SaveRule, textLine: string): void {
  const { rs, line } = rule;
  if (!rule.realServerSeen) {
    r.reject(line, textLine, 'real server rule without -r');
    r.report('error', 'ipvsadm/missing-real-server', 'rule -a without -r SERVER-ADDRESS', line, textLine.trimEnd().length + 1, {
      expected: '-r ADDRESS:PORT',
      found: 'end of line',
    });
    return;
  }
  if (rule.tun.length > 0) rs.tunnelInfo = rule.tun.join(':');
  rs.forward ??= 'Route'; // ipvsadm's default forwarding method is gatewaying (-g)
  rs.weight ??= 1;
  const owner = r.byKey.get(virtualServerKey(rule.vs))?.vs;
  if (!owner) {
    r.reject(line, textLine, 'real server for a service that was not added');
    r.report('error', 'ipvsadm/orphan-real-server', `real server for ${virtualServerKey(rule.vs)}, which no -A rule adds`, line, s.serviceOption.column, {
      expected: `-A ${s.serviceOption.text} ${target.text} before this line`,
      found: printable(textLine.trim(), 60),
    });
    return;
  }
  owner.realServers.push(rs);
}
