/**
 * Why a Service port is not healthy, as one short code (the REASON column of `kpx services`):
 * the state says what, the reason says which evidence made it so. Derived from the Service
 * port's typed fields only, so every mode and every consumer gets the same answer.
 */
import { degrades, type ProblemCode } from './problems.js';
import type { ServicePort } from './types.js';

export type StateReasonCode =
  /** no-endpoints, IPVS: the virtual server has no real servers. */
  | 'no-real-servers'
  /** no-endpoints, iptables/nftables: the rules hold no endpoint (kube-proxy's REJECT, or no endpoint rules). */
  | 'no-endpoint-rules'
  /** no-local-endpoints because of externalTrafficPolicy: Local (NodePort, LB, external IPs dropped here). */
  | 'ext-policy-local'
  /** no-local-endpoints because of internalTrafficPolicy: Local (in-cluster traffic from this node dropped). */
  | 'int-policy-local'
  /** unknown, with no problem to name: the evidence that would say is not in the dumps. */
  | 'evidence-missing'
  /** partial or unknown: the first problem's code (src/kube/problems.ts). */
  | ProblemCode;

export interface StateReason {
  readonly code: StateReasonCode;
  /** How many other problems the Service port has (shown as `+N`; `--service` lists them). */
  readonly more: number;
}

/** null for a healthy Service port. */
export function stateReason(s: ServicePort): StateReason | null {
  const faults = s.problems.filter(degrades);
  const rest = (shown: number) => Math.max(0, faults.length - shown);
  switch (s.state) {
    case 'healthy':
      return null;
    case 'no-endpoints':
      return { code: s.mode === 'ipvs' ? 'no-real-servers' : 'no-endpoint-rules', more: rest(0) };
    case 'no-local-endpoints':
      return { code: s.internalTrafficPolicy === 'Local' && s.externalTrafficPolicy !== 'Local' ? 'int-policy-local' : 'ext-policy-local', more: rest(0) };
    case 'partial':
    case 'unknown':
      return faults.length ? { code: faults[0].code, more: rest(1) } : { code: 'evidence-missing', more: 0 };
  }
}
