/**
 * Sentences about the API's Services that have no dataplane rules (headless, ExternalName, another
 * proxy's): what `kpx services` and `kpx trace` say instead of "not found". Text from the API is
 * untrusted like dump text: printable() keeps control characters out.
 */
import { printable } from '../source/index.js';
import type { IntendedServicePort, ServiceWithoutRules } from '../kube/intent.js';

export function explainWithoutRules(w: ServiceWithoutRules): string {
  const name = printable(`${w.service.namespace}/${w.service.name}`, 120);
  switch (w.reason) {
    case 'headless': {
      const pods = w.addresses.length ? w.addresses.slice(0, 6).map((a) => printable(a, 46)).join(', ') + (w.addresses.length > 6 ? `, … (${w.addresses.length})` : '') : 'none listed';
      return `${name} is headless (clusterIP: None): no VIP and no dataplane rules on any node; DNS returns the pod addresses (${pods})`;
    }
    case 'external-name':
      return `${name} is an ExternalName Service: a DNS CNAME to ${printable(w.service.externalName ?? '?', 120)}; no dataplane rules on any node`;
    case 'other-proxy':
      return `${name} is labelled service.kubernetes.io/service-proxy-name=${printable(w.service.serviceProxyName ?? '', 60)}: another proxy implements it, kube-proxy programs nothing`;
    case 'no-cluster-ip':
      return `${name} has no cluster IP in the API: kube-proxy has nothing to program`;
  }
}

/** A Service with no selector: its endpoints are whatever EndpointSlices someone else writes. */
export function explainSelectorless(p: IntendedServicePort): string {
  const name = printable(`${p.namespace}/${p.name}`, 120);
  return p.listed.length === 0
    ? `${name} has no selector and no EndpointSlice lists an endpoint for it: its endpoints are written by hand or by another controller, and none exists (kube-proxy rejects its traffic)`
    : `${name} has no selector: its ${p.listed.length} endpoint${p.listed.length === 1 ? '' : 's'} come from EndpointSlices written by hand or by another controller, not from pods`;
}

/** The JSON form (`kpx services -o json`, key `withoutRules`). */
export function withoutRulesJson(w: ServiceWithoutRules): Record<string, unknown> {
  return { namespace: w.service.namespace, name: w.service.name, reason: w.reason, externalName: w.service.externalName, addresses: w.addresses, explanation: explainWithoutRules(w) };
}
