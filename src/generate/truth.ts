/**
 * Ground truth for a generated cluster, in exactly the `kpx services -o json` schema: one entry per
 * Service port, sorted by namespace, name, portName, protocol.
 */
import { type Cluster, planPort } from './cluster.js';

export interface TruthEndpoint {
  ip: string;
  port: number;
  /** 1/n: the chance Cluster-policy traffic lands here. */
  probability: number;
  local: boolean;
}

export interface TruthService {
  namespace: string;
  name: string;
  portName: string | null;
  protocol: 'tcp' | 'udp' | 'sctp';
  port: number;
  clusterIP: string;
  nodePort: number | null;
  externalIPs: string[];
  loadBalancerIPs: string[];
  loadBalancerSourceRanges: string[];
  externalTrafficPolicy: 'Cluster' | 'Local';
  internalTrafficPolicy: 'Cluster' | 'Local';
  sessionAffinity: null | { timeoutSeconds: number };
  state: 'healthy' | 'no-endpoints' | 'no-local-endpoints';
  endpoints: TruthEndpoint[];
}

export interface Truth {
  services: TruthService[];
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function groundTruth(cluster: Cluster): Truth {
  const out: TruthService[] = [];
  for (const svc of cluster.services) {
    for (const port of svc.ports) {
      const plan = planPort(cluster, svc, port);
      const n = port.endpoints.length;
      const state: TruthService['state'] = !plan.hasEndpoints
        ? 'no-endpoints'
        : !plan.hasInternalEndpoints || !plan.hasExternalEndpoints
          ? 'no-local-endpoints'
          : 'healthy';
      out.push({
        namespace: svc.namespace,
        name: svc.name,
        portName: port.name,
        protocol: port.protocol,
        port: port.port,
        clusterIP: svc.clusterIP,
        nodePort: port.nodePort,
        externalIPs: [...svc.externalIPs],
        loadBalancerIPs: [...svc.loadBalancerIPs],
        loadBalancerSourceRanges: [...svc.loadBalancerSourceRanges],
        externalTrafficPolicy: svc.externalTrafficPolicy,
        internalTrafficPolicy: svc.internalTrafficPolicy,
        sessionAffinity: svc.sessionAffinity ? { timeoutSeconds: svc.sessionAffinity.timeoutSeconds } : null,
        state,
        endpoints: port.endpoints.map((e) => ({ ip: e.ip, port: e.port, probability: 1 / n, local: e.local })),
      });
    }
  }
  out.sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.name, b.name) || cmp(a.portName ?? '', b.portName ?? '') || cmp(a.protocol, b.protocol));
  return { services: out };
}

/** Serialise truth as JSON, one Service port per line (diff-friendly, streams for 30k Services). */
export function truthJson(truth: Truth): string {
  if (truth.services.length === 0) return '{"services":[]}\n';
  return `{"services":[\n${truth.services.map((s) => JSON.stringify(s)).join(',\n')}\n]}\n`;
}
