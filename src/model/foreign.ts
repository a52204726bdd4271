/** A listing that is not kube-proxy's dataplane (Cilium's load balancer, a packet capture): what it is, what it holds. */
export interface ForeignDump {
  readonly file: string;
  readonly kind: 'cilium-service-list' | 'cilium-bpf-lb-list' | 'tcpdump' | 'tshark';
  /** Frontends (Cilium) and their backends; packets (tcpdump, tshark). */
  readonly services: number;
  readonly backends: number;
  readonly packets: number;
}
