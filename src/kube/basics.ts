/**
 * The words every Service type is made of: the evidence line, protocols, traffic policies, states
 * and proxy modes. Below both the readers' facts (./facts.ts) and the built Service ports
 * (./types.ts, which re-exports them), so neither has to import the other's module for them.
 */

export type Protocol = 'tcp' | 'udp' | 'sctp';
export type TrafficPolicy = 'Cluster' | 'Local';
/** `unknown`: the dumps hold too little to tell (endpoint chains cut out, a truncated table). */
export type ServiceState = 'healthy' | 'no-endpoints' | 'no-local-endpoints' | 'partial' | 'unknown';
export type ProxyModeName = 'iptables' | 'ipvs' | 'nftables';

/** A line of a dump that is evidence for something kpx says. */
export interface Evidence {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  /** iptables table/chain, ipset name, ipvs virtual server… when it helps the reader. */
  readonly where?: string;
}
