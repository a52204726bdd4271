/**
 * Cheap sniffer for Kubernetes API objects as `kubectl get … -o json|yaml` prints them: a `kind`
 * kube-proxy reads (Service, EndpointSlice, Endpoints, Node, Pod, or their lists) beside an
 * `apiVersion` of the core or discovery group. No parser is loaded.
 */
/** Structurally a `FormatSniffer` (src/load/format.ts); grammars do not import from src/. */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

const KINDS = '(?:Service|EndpointSlice|Endpoints|Node|Pod|List|ServiceList|EndpointSliceList|EndpointsList|NodeList|PodList)';
const KIND_YAML = new RegExp(`^\\s*(?:- )?kind:\\s*["']?${KINDS}["']?\\s*$`);
const KIND_JSON = new RegExp(`"kind"\\s*:\\s*"${KINDS}"`);
const API_YAML = /^\s*(?:- )?apiVersion:\s*["']?(?:v1|discovery\.k8s\.io\/v1(?:beta1)?)["']?\s*$/;
const API_JSON = /"apiVersion"\s*:\s*"(?:v1|discovery\.k8s\.io\/v1(?:beta1)?)"/;
const KIND_OF = /(?:^\s*(?:- )?kind:\s*["']?|"kind"\s*:\s*")(\w+)/;
/** Flags only kube-proxy has (as the kube-proxy-config sniffer knows them). */
const KUBE_PROXY_FLAG = /--(?:proxy-mode|masquerade-bit|ipvs-strict-arp|ipvs-scheduler|nodeport-addresses|detect-local-mode|conntrack-max-per-core)=?/;
const POD_ONLY = new Set(['Pod', 'PodList', 'List']);

export const k8sApiSniffer: Sniffer<'k8s-api'> = {
  id: 'k8s-api',
  sniff(lines) {
    let kind = false;
    let api = false;
    let flags = false;
    const kinds = new Set<string>();
    for (const l of lines.slice(0, 200)) {
      if (KIND_YAML.test(l) || KIND_JSON.test(l)) kind = true;
      if (API_YAML.test(l) || API_JSON.test(l)) api = true;
      const k = KIND_OF.exec(l)?.[1];
      if (k) kinds.add(k);
      if (KUBE_PROXY_FLAG.test(l)) flags = true;
    }
    if (!kind || !api) return 0;
    // `kubectl get pod kube-proxy-… -o yaml`: its command line is kube-proxy's configuration (flags),
    // which the kube-proxy-config reader takes (0.9); a dump with Services or slices stays the API's.
    return flags && [...kinds].every((k) => POD_ONLY.has(k)) ? 0.85 : 0.95;
  },
};
