/**
 * Cheap content sniffer for kubectl's text output: `kubectl get` tables of the kinds kpx reads
 * (a header line of kubectl's column names, plain or as a Markdown row) and `kubectl describe`
 * blocks (`Name:` then the fields a Service, Endpoints or EndpointSlice describer prints).
 * Prompts and fences are already removed from the lines it sees. Loads no parser.
 */
import type { Sniffer } from '../k8s-api/sniff.js';

const HEADER = /^\s*\|?\s*(NAMESPACE\s*\|?\s+)?NAME\s*\|?\s+(?:TYPE\s*\|?\s+CLUSTER[-_]IP|CLUSTER[-_]IP\s*\|?\s+EXTERNAL[-_]IP|ENDPOINTS|ADDRESSTYPE|READY\s*\|?\s+STATUS\s*\|?\s+RESTARTS|STATUS\s*\|?\s+(?:ROLES\s*\|?\s+)?AGE\s*\|?\s+VERSION|LABELS\s*\|?\s+SELECTOR\s*\|?\s+IP\(S\))(?=\s|\||$)/;
/** Any other kubectl table (deployments, ingresses…): kubectl, but of kinds kpx does not read. */
const OTHER_HEADER = /^\s*\|?\s*(NAMESPACE\s+)?NAME\s*\|?\s+(READY|STATUS|DESIRED|TYPE|DATA|CLASS|HOSTS|CAPACITY|AGE)\b[A-Z0-9_ ()|/-]*$/;
const DESCRIBE_NAME = /^Name:\s+\S/;
const DESCRIBE_FIELD = /^(Namespace|Selector|Type|IP|IPs|Port|TargetPort|NodePort|Endpoints|Session Affinity|Subsets|AddressType|External Traffic Policy|Internal Traffic Policy|IP Family Policy):(\s|$)/;
const NO_RESOURCES = /^\s*No resources found\b/;

export const kubectlSniffer: Sniffer<'kubectl'> = {
  id: 'kubectl',
  sniff(lines) {
    let header = 0;
    let other = 0;
    let name = 0;
    let fields = 0;
    let empty = 0;
    for (const l of lines.slice(0, 200)) {
      if (HEADER.test(l)) header++;
      else if (OTHER_HEADER.test(l)) other++;
      else if (DESCRIBE_NAME.test(l)) name++;
      else if (DESCRIBE_FIELD.test(l)) fields++;
      else if (NO_RESOURCES.test(l)) empty++;
    }
    if (header > 0) return 0.9;
    if (name > 0 && fields >= 2) return 0.85;
    if (empty > 0 || (other > 0 && name + fields === 0)) return 0.5;
    return 0;
  },
};
