/**
 * What the ipvsadm readers (./ipvsadm.ts and the files beside it) share while they go through one
 * dump: the model being built, the services by key (to merge `-Ln` + `--stats` pastes and to find a
 * `--save` rule's service), and the diagnostics with the checks that report them.
 */
import { diagnostic, printable, type Diagnostic, type Severity } from '../source/index.js';
import type { Ip } from '../model/addr.js';
import type { IpvsConnection, IpvsUnsupported, IpvsView, RealServer, VirtualServer } from '../model/ipvs.js';
import type { IpvsadmView, Tok } from '../../grammars/ipvsadm/index.js';
import { parseIpvsEndpoint, type Mutable, type ParsedEndpoint } from './ipvsadm-values.js';

export type VsBuilder = Mutable<Omit<VirtualServer, 'realServers'>> & { realServers: Mutable<RealServer>[] };

export class IpvsReading {
  readonly diagnostics: Diagnostic[];
  readonly unsupported: IpvsUnsupported[] = [];
  readonly noise: IpvsUnsupported[] = [];
  readonly virtualServers: VsBuilder[] = [];
  readonly connections: IpvsConnection[] = [];
  version: string | undefined;
  tableSize: number | undefined;
  dumpView: IpvsView | undefined;
  /** Services by key with the view of the section they came from, for merging `-Ln` + `--stats` pastes. */
  readonly byKey = new Map<string, { vs: VsBuilder; view: IpvsadmView | undefined; section: number }>();
  section = 0;
  /** The service the next real server lines belong to; `merging` when it was listed before. */
  current: { vs: VsBuilder; merging: boolean } | undefined;

  constructor(
    readonly file: string,
    /** Line number of the last non-blank line: a problem there may be the cut of the paste. */
    private readonly lastLine: number,
    syntaxDiagnostics: readonly Diagnostic[],
  ) {
    this.diagnostics = [...syntaxDiagnostics];
  }

  report(severity: Severity, code: string, message: string, line: number, column: number, extra?: { expected?: string; found?: string }): void {
    this.diagnostics.push(diagnostic(severity, code, message, this.file, line, column, extra));
  }

  reject(line: number, textLine: string, reason: string): void {
    this.unsupported.push({ line, text: textLine, reason });
  }

  isCut(line: number): boolean {
    return line === this.lastLine;
  }

  endpointOrReport(t: Tok, line: number, what: string): ParsedEndpoint {
    const ep = parseIpvsEndpoint(t.text);
    if (ep.problem) {
      const cut = this.isCut(line);
      this.report(cut ? 'warning' : 'error', cut ? 'ipvsadm/truncated-line' : 'extract/bad-address', `${what} ${printable(t.text, 60)}: ${ep.problem}`, line, t.column, {
        expected: 'ADDRESS:PORT or [IPV6]:PORT',
        found: printable(t.text, 60),
      });
    } else if (!ep.ip) {
      this.report('info', 'extract/unresolved-address', `${what} ${printable(t.text, 60)} is a name, not an IP address (ipvsadm -L without -n?); kept as printed`, line, t.column);
    }
    if (ep.port === undefined && ep.portName === undefined && !ep.problem) {
      this.report('warning', 'ipvsadm/missing-port', `${what} ${printable(t.text, 60)} has no port (name cut by ipvsadm?)`, line, t.column);
    } else if (ep.portName !== undefined && ep.port === undefined) {
      this.report('info', 'extract/unknown-port-name', `port name ${printable(ep.portName, 40)} is not a well-known port; port number unknown`, line, t.column);
    }
    return ep;
  }

  /** A firewall mark that is not a number: the line is rejected. */
  badFwmark(target: Tok, line: number, textLine: string): void {
    this.reject(line, textLine, 'bad firewall mark');
    this.report('error', 'extract/bad-fwmark', `firewall mark must be a number, found ${printable(target.text, 40)}`, line, target.column, {
      expected: 'number',
      found: printable(target.text, 40),
    });
  }

  tooMany(nums: readonly Tok[], expected: number, line: number, what: string): boolean {
    if (nums.length <= expected) return false;
    const extra = nums[expected];
    this.report('error', 'ipvsadm/extra-field', `${what} has ${nums.length} numbers where ${expected} were expected`, line, extra.column, {
      expected: 'end of line',
      found: printable(extra.text, 40),
    });
    return true;
  }

  tooFew(nums: readonly Tok[], expected: number, line: number, textLine: string, what: string): void {
    if (nums.length >= expected) return;
    this.report(
      'warning',
      'ipvsadm/truncated-line',
      `${what} has ${nums.length} of ${expected} columns: line cut or columns lost; missing values left unset`,
      line,
      textLine.trimEnd().length + 1,
      { expected: `${expected - nums.length} more number(s)`, found: 'end of line' },
    );
  }
}

/** Copy an endpoint's address, IP and port into a virtual or real server. */
export function setEndpoint(into: { address?: string; ip?: Ip; port?: number; portName?: string }, ep: ParsedEndpoint): void {
  into.address = ep.address;
  if (ep.ip) into.ip = ep.ip;
  if (ep.port !== undefined) into.port = ep.port;
  if (ep.portName !== undefined) into.portName = ep.portName;
}
