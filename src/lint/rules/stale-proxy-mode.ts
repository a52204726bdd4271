import { formatIp } from '../../model/addr.js';
import { createRule } from '../rule.js';
import { ruleRelated } from '../context.js';

const SERVICE_CHAIN = /^KUBE-(SVC|SVL|EXT|FW|XLB|SEP)-/;

export default createRule({
  id: 'stale-proxy-mode',
  meta: {
    description: 'Leftovers of another kube-proxy mode: KUBE-SVC chains beside IPVS virtual servers or beside the nftables kube-proxy table, kube-ipvs0 VIPs without virtual servers.',
    severity: 'warning',
    docs: [
      'When kube-proxy changes mode (iptables → ipvs → nftables), the new mode is supposed to remove the old',
      'mode\'s state; a node that was switched without `kube-proxy --cleanup`, or that ran two kube-proxies,',
      'keeps both. Which mode is live follows from what the hooks reach: old iptables KUBE-SVC/KUBE-SEP chains',
      'that PREROUTING/OUTPUT still reach DNAT packets before IPVS or nftables sees them, with endpoints that',
      'are no longer updated; chains no hook reaches act on no packet — leftovers, said once here, never a',
      'Service\'s state (`kpx services` does not count them). An nftables `kube-proxy` table and iptables rules',
      'both rewrite the same packets; addresses on kube-ipvs0 without a virtual server are accepted by the node',
      'and answered by nothing (or by a host process listening on 0.0.0.0).',
      '',
      '**Fix:** run `kube-proxy --cleanup` for the old mode (or delete the stale chains/table/addresses by hand)',
      'and restart kube-proxy in the intended mode; make sure only one kube-proxy runs on the node.',
    ].join('\n'),
    messages: {
      iptablesAndIpvs: 'iptables-mode chains ({{count}}) beside {{vs}} IPVS virtual servers: the old KUBE-SVC/SEP rules DNAT packets before IPVS sees them',
      leftoverIptables: 'iptables-mode chains ({{count}}) beside {{mode}}: no hook reaches them, so they act on no packet (leftovers of an earlier mode, not counted as Services); kube-proxy --cleanup removes them',
      iptablesAndNft: 'iptables-mode chains ({{count}}) beside the nftables `kube-proxy` table: two kube-proxy dataplanes rewrite the same packets',
      ipvs0Orphan: 'kube-ipvs0 holds {{ip}} but no IPVS virtual server uses it: the node accepts packets for it and nothing answers',
    },
  },
  check(ctx) {
    const snap = ctx.snapshot;
    const chains = [] as { file: string; line: number; name: string; firstRule?: ReturnType<typeof ruleRelated> }[];
    for (const t of ctx.tables) {
      if (t.table.name !== 'nat') continue;
      for (const c of t.table.chains) if (SERVICE_CHAIN.test(c.name)) chains.push({ file: t.table.file, line: c.line ?? c.rules[0]?.line ?? t.table.line, name: c.name, ...(c.rules[0] ? { firstRule: ruleRelated(c.rules[0]) } : {}) });
    }
    const vsCount = snap.ipvs.reduce((n, d) => n + d.virtualServers.length, 0);
    const count = `${chains.length} KUBE-SVC/SEP/… chain${chains.length === 1 ? '' : 's'}`;
    const kp = snap.nft.flatMap((n) => n.tables).find((t) => t.name === 'kube-proxy');
    // Which mode is live follows from what the hooks reach: chains none reaches are leftovers (src/kube/reach.ts), said once.
    const leftover = new Set(ctx.resolution.others.filter((o) => o.leftover).map((o) => o.name));
    if (chains.length && chains.every((c) => leftover.has(c.name)) && (vsCount > 0 || kp)) {
      const c = chains[0];
      ctx.report({ messageId: 'leftoverIptables', data: { count, mode: vsCount > 0 ? `${vsCount} IPVS virtual servers` : 'the nftables `kube-proxy` table' }, file: c.file, line: c.line, column: 1, text: `:${c.name} - [0:0]`, ...(c.firstRule ? { related: [c.firstRule] } : {}) });
    } else if (chains.length && vsCount > 0) {
      const c = chains[0];
      const vs = snap.ipvs.find((d) => d.virtualServers.length > 0)!.virtualServers[0];
      ctx.report({ messageId: 'iptablesAndIpvs', data: { count, vs: vsCount }, file: c.file, line: c.line, column: 1, text: `:${c.name} - [0:0]`, related: [{ file: vs.file, line: vs.line, column: vs.column, text: `IPVS virtual server ${vs.protocol} ${vs.address ?? ''}:${vs.port ?? ''}` }] });
    }
    if (chains.length && kp && !chains.every((c) => leftover.has(c.name))) {
      const c = chains[0];
      ctx.report({ messageId: 'iptablesAndNft', data: { count }, file: c.file, line: c.line, column: 1, text: `:${c.name} - [0:0]`, related: [{ file: kp.file, line: kp.line, text: `table ${kp.family} ${kp.name}` }] });
    }
    // (Not when a listing was cut mid-way: the virtual servers past the cut are not in it.)
    if (snap.ipvs.some((d) => d.view !== 'connections') && !snap.ipvs.some((d) => d.truncated)) {
      const vsIps = new Set<string>();
      for (const d of snap.ipvs) for (const vs of d.virtualServers) if (vs.ip) vsIps.add(formatIp(vs.ip));
      for (const i of snap.interfaces) {
        if (i.name !== 'kube-ipvs0') continue;
        for (const a of i.addresses) {
          const ip = formatIp(a.ip);
          if (vsIps.has(ip)) continue;
          ctx.report({ messageId: 'ipvs0Orphan', data: { ip }, file: i.file, line: a.line, column: 1, text: `inet${a.family === 6 ? '6' : ''} ${a.address}/${a.prefix} dev kube-ipvs0` });
        }
      }
    }
  },
});
