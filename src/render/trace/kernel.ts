/** The kernel switches, their evidence and the MTU, said as a trace step. */
import type { KernelFate, TraceStep } from '../../trace/types.js';
import type { MtuShortfall, SwitchEvidence, SwitchName } from '../../model/switches.js';

const SWITCH_NAMES: Record<SwitchName | 'mtu', string> = {
  forwarding: 'forwarding',
  rp_filter: 'rp_filter',
  route_localnet: 'route_localnet',
  'bridge-nf-call-iptables': 'bridge-nf-call-iptables',
  hairpin: 'hairpin on the bridge ports',
  mtu: 'MTU along the path',
};
export const switchName = (s: SwitchName | 'mtu') => SWITCH_NAMES[s];

/** `sysctl.txt:12 net.ipv4.ip_forward = 0`, or `net.bridge.… not in the dump`. */
export function evidenceText(e: SwitchEvidence): string {
  if (e.value === null) return `${e.key} not in the dump`;
  const at = e.file ? `${e.file.split(/[\\/]/).pop()}${e.line !== null ? `:${e.line}` : ''} ` : '';
  return e.key.endsWith(' hairpin') ? `${at}${e.key} ${e.value}` : `${at}${e.key} = ${e.value}`;
}

const evidenceList = (ev: readonly SwitchEvidence[]) => (ev.length ? ` (${ev.map(evidenceText).join(', ')})` : '');

function bridgeOff(iface: string | undefined, moduleLoaded: boolean | undefined): string {
  const why = moduleLoaded === false ? 'br_netfilter not loaded (no net.bridge.* key in sysctl -a)' : 'bridge-nf-call-iptables off';
  return `${why}: the endpoint's reply crosses ${iface ?? 'the bridge'} without conntrack's reverse NAT; the client sees the pod's address, not the Service's, and discards it`;
}

/** How a kernel switch ended (or broke) an outcome, for its first line: `dropped by forwarding off on eth0 (…)`. */
export function kernelFateText(f: KernelFate): string {
  const on = f.iface ? ` on ${f.iface}` : '';
  const ev = evidenceList(f.evidence);
  switch (f.code) {
    case 'dropped-forwarding-off':
      return `dropped by forwarding off${on} at the routing decision${ev}`;
    case 'dropped-rp-filter':
      return `dropped by rp_filter ${f.value ?? ''} (${f.value === 1 ? 'strict' : 'loose'})${on}: ${f.value === 1 ? `the route back to the source does not leave by ${f.iface ?? 'the input interface'}` : 'no route back to the source'}${ev}`;
    case 'dropped-route-localnet':
      return `dropped by route_localnet off${on}: 127.0.0.0/8 may not cross it${ev}`;
    case 'dropped-hairpin-off':
      return `dropped by hairpin off on ${f.iface ?? 'the bridge'}'s ports${ev}`;
    case 'reply-bypasses-nat':
      return `reply broken: ${f.moduleLoaded === false ? 'br_netfilter not loaded' : 'bridge-nf-call-iptables off'}${on}: the pod's reply is bridged to the client without reverse NAT${ev}`;
  }
}

export function shortfallText(m: MtuShortfall): string {
  return `${m.tunnel} (${m.kind}) has MTU ${m.tunnelMtu}: with ${m.overhead} bytes of encapsulation that is ${m.tunnelMtu + m.overhead}, more than ${m.underlay}'s ${m.underlayMtu}; packets over ${m.underlayMtu - m.overhead} bytes are fragmented or dropped`;
}

export function switchStepText(s: Extract<TraceStep, { code: 'kernel-switch' }>): string {
  const on = s.iface ? ` on ${s.iface}` : '';
  const ev = evidenceList(s.evidence);
  switch (s.switch) {
    case 'forwarding':
      return s.effect === 'drop' ? `forwarding off${on}: dropped at the routing decision${ev}` : `forwarding on${on}${ev}`;
    case 'rp_filter':
      return s.effect === 'drop'
        ? `rp_filter ${s.value ?? ''}${on}: the route back to the source fails the check: dropped${ev}`
        : `rp_filter ${s.value ?? ''} (${s.value === 1 ? 'strict' : s.value === 2 ? 'loose' : 'off'})${on}: the route back to the source passes${ev}`;
    case 'route_localnet':
      return s.effect === 'drop' ? `route_localnet off${on}: a 127.0.0.0/8 address may not cross it: dropped${ev}` : `route_localnet on${on}: 127.0.0.0/8 may cross it${ev}`;
    case 'bridge-nf-call-iptables':
      return s.effect === 'reply-bypasses-nat' ? `${bridgeOff(s.iface, s.moduleLoaded)}${ev}` : `bridged frames${on} traverse iptables${ev}`;
    case 'hairpin':
      return s.effect === 'drop'
        ? `hairpin off on every port of ${s.iface ?? 'the bridge'}: the frame would go back out of the port it came in on: dropped${ev}`
        : s.effect === 'unknown'
          ? `hairpin differs between the ports of ${s.iface ?? 'the bridge'} and the dumps do not say which port the pod is behind${ev}`
          : `hairpin on${on}: the frame may go back out of the port it came in on${ev}`;
  }
}

export function mtuStepText(s: Extract<TraceStep, { code: 'mtu' }>): string {
  const hops = s.hops.map((h) => `${h.role} ${h.iface} ${h.mtu}`).join(', ');
  const largest =
    s.largest !== undefined
      ? `; the largest packet that passes unfragmented is ${s.largest} bytes`
      : s.underlayUnknown
        ? `; ${s.underlayUnknown}'s underlay is not in the dumps (ip addr holds its local address): the room for encapsulation is unknown`
        : '';
  return `MTU: ${hops}${largest}${s.shortfall ? `; ${shortfallText(s.shortfall)}` : ''}`;
}

