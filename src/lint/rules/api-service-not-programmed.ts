import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-service-not-programmed',
  meta: {
    description: 'A Service port the API server has, and kube-proxy would program, is not on this node: connections to its cluster IP go nowhere.',
    severity: 'error',
    ...API_RULE,
    docs: [
      'The API objects (`kubectl get svc,endpointslices,nodes,pods -A -o json`, given beside the dumps) hold a',
      'Service port with a cluster IP of a family this node\'s dumps show, and none of the dumps implements it: no',
      'KUBE-SERVICES rule (iptables), no virtual server (IPVS), no service-ips element (nftables). Pods on this node',
      'that connect to it time out or are refused, while other nodes may work. Headless and ExternalName Services, and',
      'Services labelled `service.kubernetes.io/service-proxy-name`, are not expected (kube-proxy skips them).',
      '',
      '**Fix:** kube-proxy on this node has not synced since the Service was created: check its log for sync errors',
      '(`kpx lint` with the log: kube-proxy-sync-failing) and its connection to the API server; restart it. Make sure',
      'the dumps and the API objects were taken at about the same time.',
      '',
      '**Example** (kubernetes/kubernetes#70493): `ipvsadm` on some nodes lists the Service\'s virtual server and',
      'on others not, for the same Service.',
    ].join('\n'),
    messages: { missing: 'Service {{service}} ({{address}}) is in the API but not programmed on this node' },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['service-not-programmed'])) ctx.report(driftReport(d, 'missing', {}, false));
  },
});
