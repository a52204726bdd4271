/** `ipvsadm -Lnc` connection entries: `TCP 14:59 ESTABLISHED CLIENT:PORT VIP:PORT POD:PORT [pe name data]`. */
import { printable } from '../source/index.js';
import type { IpvsConnection, IpvsEndpoint } from '../model/ipvs.js';
import type { ConnectionSyntax, Tok } from '../../grammars/ipvsadm/index.js';
import { parseIpvsEndpoint, type Mutable } from './ipvsadm-values.js';
import type { IpvsReading } from './ipvsadm-reading.js';

export function buildConnection(r: IpvsReading, s: ConnectionSyntax, line: number, textLine: string): IpvsConnection | undefined {
  const f = s.fields;
  if (f.length > 8) {
    r.report('error', 'ipvsadm/extra-field', `connection entry has ${f.length} fields where at most 8 were expected`, line, f[8].column, {
      expected: 'end of line',
      found: printable(f[8].text, 40),
    });
  }
  if (f.length < 6) {
    r.reject(line, textLine, 'incomplete connection entry');
    r.report(r.isCut(line) ? 'warning' : 'error', 'ipvsadm/truncated-line', `connection entry has ${f.length} of 6 fields`, line, textLine.trimEnd().length + 1, {
      expected: 'pro expire state source virtual destination',
      found: 'end of line',
    });
    return undefined;
  }
  const m = /^(\d+):(\d\d)$/.exec(f[1].text);
  if (!m) {
    r.reject(line, textLine, 'bad expire time');
    r.report('error', 'extract/bad-expire', `connection expire time must be MM:SS, found ${printable(f[1].text, 20)}`, line, f[1].column, {
      expected: 'MM:SS',
      found: printable(f[1].text, 20),
    });
    return undefined;
  }
  const ep = (t: Tok): IpvsEndpoint => {
    const p = parseIpvsEndpoint(t.text);
    if (p.problem) r.report('warning', 'extract/bad-address', `connection address ${printable(t.text, 60)}: ${p.problem}`, line, t.column);
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
