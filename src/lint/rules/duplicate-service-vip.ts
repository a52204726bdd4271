import { formatIp, parseIp } from '../../model/addr.js';
import type { Evidence, ServicePort } from '../../kube/types.js';
import { createRule } from '../rule.js';
import { evidenceRelated } from '../context.js';

export default createRule({
  id: 'duplicate-service-vip',
  meta: {
    description: 'Two Service ports claim the same VIP:port/protocol.',
    severity: 'error',
    docs: [
      'Each cluster IP, external IP and load-balancer IP with a port and protocol must belong to one Service',
      'port. When two Services claim the same one (an externalIP reused by two Services, a cluster IP allocated',
      'twice after an etcd restore, hand-written rules), the dataplane sends all of the traffic to whichever',
      'rule comes first in KUBE-SERVICES (or one IPVS virtual server); the other Service silently receives',
      'nothing. In iptables mode the later rule is dead.',
      '',
      '**Fix:** give one of the Services another address (`kubectl get svc -A -o wide | grep VIP`). For',
      'externalIPs, note that any user who can create Services can claim one (CVE-2020-8554): consider an',
      'admission policy that restricts them.',
      '',
      'The finding names the Service that does not get the traffic (its rule comes later) and lists the other.',
    ].join('\n'),
    messages: {
      duplicate: '{{vip}} is claimed by {{service}} and by {{other}}: only {{other}} receives the traffic',
    },
  },
  check(ctx) {
    const byVip = new Map<string, { s: ServicePort; e: Evidence }[]>();
    for (const s of ctx.resolution.services) {
      // Every dispatch claim the reader kept (a second rule for one address is a claim too).
      for (const fe of s.frontEnds) {
        if (fe.ip === null) continue;
        const ip = parseIp(fe.ip);
        if (!ip) continue;
        const host = formatIp(ip);
        const vip = `${ip.family === 6 ? `[${host}]` : host}:${fe.port ?? s.port}/${s.protocol ?? '?'}`;
        const key = `${s.mode}|${vip}`;
        const list = byVip.get(key);
        if (!list) byVip.set(key, [{ s, e: fe.evidence }]);
        else if (!list.some((x) => x.s.id === s.id)) list.push({ s, e: fe.evidence });
      }
    }
    for (const [key, list] of byVip) {
      if (list.length < 2) continue;
      const sorted = [...list].sort((a, b) => (a.e.file === b.e.file ? a.e.line - b.e.line : a.e.file < b.e.file ? -1 : 1));
      const winner = sorted[0];
      for (const loser of sorted.slice(1)) {
        const label = ctx.serviceLabel(loser.s);
        ctx.report({
          messageId: 'duplicate',
          data: { vip: key.slice(key.indexOf('|') + 1), service: label, other: ctx.serviceLabel(winner.s) },
          file: loser.e.file,
          line: loser.e.line,
          column: 1,
          text: loser.e.text,
          service: label,
          related: [evidenceRelated(winner.e)],
        });
      }
    }
  },
});
