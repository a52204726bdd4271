import { formatIp } from '../../model/addr.js';
import type { IpSet } from '../../model/ipset.js';
import { createRule } from '../rule.js';
import { cutListings, serviceOfVs, virtualServers, vsText } from '../ipvs-util.js';

/** kube-proxy's sets of Service VIP,proto:port entries (IPv6 sets are named KUBE-6-…). */
const VIP_SETS = ['KUBE-CLUSTER-IP', 'KUBE-EXTERNAL-IP', 'KUBE-EXTERNAL-IP-LOCAL', 'KUBE-LOAD-BALANCER'];
const baseName = (name: string) => name.replace(/^KUBE-6-/, 'KUBE-');

export default createRule({
  id: 'ipvs-ipset-mismatch',
  meta: {
    description: 'kube-proxy\'s ipsets (KUBE-CLUSTER-IP, KUBE-EXTERNAL-IP, KUBE-LOAD-BALANCER) and the IPVS virtual servers disagree.',
    severity: 'warning',
    docs: [
      'In IPVS mode, the iptables rules do not list Services: they match kube-proxy\'s ipsets. KUBE-CLUSTER-IP,',
      'KUBE-EXTERNAL-IP and KUBE-LOAD-BALANCER hold one `VIP,proto:port` entry per virtual server, and decide',
      'masquerading (off-cluster sources), acceptance in the filter table and the load-balancer source ranges.',
      'A virtual server without its entry is balanced but not masqueraded (replies from other nodes\' pods take',
      'the wrong path) or dropped by KUBE-IPVS-FILTER; an entry without a virtual server is accepted by iptables',
      'and then answered by nothing. Both mean kube-proxy\'s sync stopped half-way or another tool edited the state.',
      '',
      '**Fix:** restart kube-proxy (a full sync rewrites sets and virtual servers). Check its logs for ipset or',
      'netlink errors. Needs the `ipset list` and `ipvsadm -Ln` dumps of the same moment.',
    ].join('\n'),
    requires: ['ipvs', 'ipsets'],
    relevant: (ctx) => ctx.modes.includes('ipvs'),
    messages: {
      noEntry: 'virtual server {{vs}} (a kube-ipvs0 VIP) has no entry in {{sets}}',
      noVs: '{{set}} entry {{entry}} has no IPVS virtual server: traffic to it is accepted by iptables but not load-balanced',
    },
  },
  check(ctx) {
    const snap = ctx.snapshot;
    const vss = virtualServers(ctx);
    if (vss.length === 0) return;
    const sets: IpSet[] = [];
    const seen = new Set<string>();
    for (const s of snap.ipsets) {
      if (!VIP_SETS.includes(baseName(s.name)) || s.terse || seen.has(s.name)) continue;
      seen.add(s.name);
      sets.push(s);
    }
    if (!sets.some((s) => baseName(s.name) === 'KUBE-CLUSTER-IP')) return;
    const entries = new Set<string>();
    const k = (family: number, ip: string, proto: string, port: number) => `${family}|${ip}|${proto.toLowerCase()}|${port}`;
    // A cut listing lacks the virtual servers past the cut: an entry without one proves nothing.
    if (cutListings(ctx).any) return;
    for (const s of sets) {
      for (const m of s.members) {
        const [ip, port] = m.parts;
        if (ip?.kind !== 'ip' || port?.kind !== 'port') continue;
        entries.add(k(ip.cidr.family, formatIp({ family: ip.cidr.family, value: ip.cidr.network }), port.proto, port.port));
      }
    }
    const vsKeys = new Set<string>();
    const ipvs0 = new Set<string>();
    for (const i of snap.interfaces) if (i.name === 'kube-ipvs0') for (const a of i.addresses) ipvs0.add(formatIp(a.ip));
    for (const { key, vs } of vss) {
      if (!vs.ip || vs.port === undefined || vs.protocol === 'FWM') continue;
      const ip = formatIp(vs.ip);
      const kk = k(vs.family, ip, vs.protocol, vs.port);
      vsKeys.add(kk);
      if (!ipvs0.has(ip) || entries.has(kk)) continue;
      ctx.report({
        messageId: 'noEntry',
        data: { vs: key, sets: sets.map((s) => s.name).join(', ') },
        file: vs.file,
        line: vs.line,
        column: vs.column,
        text: vsText(vs),
        ...serviceOfVs(ctx, key),
      });
    }
    for (const s of sets) {
      for (const m of s.members) {
        const [ip, port] = m.parts;
        if (ip?.kind !== 'ip' || port?.kind !== 'port') continue;
        const kk = k(ip.cidr.family, formatIp({ family: ip.cidr.family, value: ip.cidr.network }), port.proto, port.port);
        if (vsKeys.has(kk)) continue;
        ctx.report({ messageId: 'noVs', data: { set: s.name, entry: m.text }, file: s.file, line: m.line, column: m.column, text: m.text });
      }
    }
  },
});
