/**
 * The kernel's switches, met where the kernel meets them (the readings themselves are
 * src/model/switches.ts, shared with lint): at the routing decision (route_localnet for 127/8,
 * forwarding, rp_filter), at rerouting after OUTPUT's DNAT (route_localnet for a 127.x source),
 * on the bridge (br_netfilter, hairpin), and along the way out (MTU). Each reading becomes a
 * `kernel-switch` step with its sysctl lines; one that ends the packet also sets the branch's
 * fate. A switch the dumps do not show is assumed the way kube-proxy needs it, and said so.
 */
import type { Ip } from '../model/addr.js';
import { interfaceRole, type NetInterface } from '../model/iface.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import {
  bridgeNfSwitch,
  forwardingSwitch,
  hairpinSwitch,
  hasSysctlDump,
  pathMtu,
  routeLocalnetSwitch,
  rpFilterSwitch,
  tunnelOverhead,
  type SwitchReading,
} from '../model/switches.js';
import type { Branch } from './chain-machine.js';
import { routeFor } from './route.js';
import type { KernelFate, SwitchStepEffect, TraceAssumption, TraceStep } from './types.js';

const isLoopback = (ip: Ip) => (ip.family === 4 ? ip.value >> 24n === 127n : ip.value === 1n);

function step(place: 'routing' | 'rerouting' | 'bridge', r: SwitchReading, effect: SwitchStepEffect): TraceStep {
  // The line that decided: the last evidence read (the interface's key after `all`, a port's line…).
  const at = [...r.evidence].reverse().find((e) => e.file !== null);
  return {
    dialect: 'kernel',
    table: 'kernel',
    chain: place,
    rule: at?.line ?? null,
    file: at?.file ?? null,
    code: 'kernel-switch',
    switch: r.switch,
    effect,
    evidence: r.evidence,
    ...(r.value !== undefined ? { value: r.value } : {}),
    ...(r.iface ? { iface: r.iface } : {}),
    ...('moduleLoaded' in r && r.moduleLoaded === false ? { moduleLoaded: false } : {}),
  };
}

function fateOf(code: KernelFate['code'], r: SwitchReading): KernelFate {
  return {
    code,
    switch: r.switch,
    evidence: r.evidence,
    ...(r.iface ? { iface: r.iface } : {}),
    ...(r.value !== undefined ? { value: r.value } : {}),
    ...('moduleLoaded' in r && r.moduleLoaded === false ? { moduleLoaded: false } : {}),
  };
}

/** Switches for one run of a trace: the snapshot, where to record assumptions, and the packet's original source. */
export class KernelSwitches {
  private readonly withSysctls: boolean;
  constructor(
    private readonly snapshot: NodeSnapshot,
    private readonly assumed: TraceAssumption[],
    private readonly origin: Ip,
  ) {
    this.withSysctls = hasSysctlDump(snapshot.sysctls);
  }

  private assume(r: SwitchReading, assumed: string): void {
    this.assumed.push({ code: 'switch-assumed', switch: r.switch, assumed, ...(r.iface ? { iface: r.iface } : {}) });
  }

  /** Drop the branch here for this switch. */
  private drop(b: Branch, place: 'routing' | 'rerouting' | 'bridge', r: SwitchReading, code: KernelFate['code']): false {
    b.steps.push(step(place, r, 'drop'));
    b.end = { verdict: 'DROP' };
    b.fate = fateOf(code, r);
    return false;
  }

  /**
   * ip_route_input_slow(): a packet that came in, after PREROUTING's DNAT. 127/8 destinations are
   * martians unless route_localnet; a packet to forward meets `forwarding` (dropped, silently, when
   * off — before the FORWARD hook); then rp_filter checks the route back to the source. False when
   * the kernel drops the packet here (the branch's end and fate are set).
   */
  routing(b: Branch, local: boolean): boolean {
    const s = this.snapshot.sysctls;
    const iif = b.st.inInterface;
    if (b.st.family === 4 && isLoopback(b.st.dst) && !isLoopback(b.st.src)) {
      const r = routeLocalnetSwitch(s, iif);
      if (r.known && r.effect === 'drop') return this.drop(b, 'routing', r, 'dropped-route-localnet');
      if (r.known) b.steps.push(step('routing', r, 'pass'));
      else this.assume(r, 'on (kube-proxy sets it for localhost NodePorts)');
    }
    if (!local) {
      const r = forwardingSwitch(s, b.st.family, iif);
      if (r.known && r.effect === 'drop') return this.drop(b, 'routing', r, 'dropped-forwarding-off');
      if (r.known) b.steps.push(step('routing', r, 'pass'));
      else this.assume(r, 'on (kube-proxy needs it)');
    }
    if (b.st.family === 4) {
      const back = routeFor(this.snapshot, { dst: b.st.src, src: b.st.dst, mark: 0 }).route;
      const usable = back && (back.type === 'unicast' || back.type === 'local');
      const devs = usable ? [back.dev, ...(back.nexthops ?? []).map((n) => n.dev)].filter((d): d is string => d !== undefined) : undefined;
      const r = rpFilterSwitch(s, iif, devs);
      // Without a route dump the way back is unknown: a filter that is on cannot be judged.
      const judged = r.known && (r.value === 0 || this.snapshot.routes.length > 0);
      if (judged && r.effect === 'drop') return this.drop(b, 'routing', r, 'dropped-rp-filter');
      if (judged && (r.value ?? 0) > 0) b.steps.push(step('routing', r, 'pass'));
      else if (!judged) this.assume(r, r.known ? `${r.value}, but without routes back to the source: taken as passing` : 'off or loose');
    }
    return true;
  }

  /**
   * __mkroute_output() at rerouting after OUTPUT's DNAT: a locally generated packet from 127.x
   * (a NodePort on localhost) may leave by a non-loopback interface only with route_localnet on it.
   */
  rerouting(b: Branch, outDev: string | undefined): boolean {
    if (b.st.family !== 4 || !isLoopback(b.st.src) || isLoopback(b.st.dst) || !outDev || outDev === 'lo') return true;
    const r = routeLocalnetSwitch(this.snapshot.sysctls, outDev);
    if (r.known && r.effect === 'drop') return this.drop(b, 'rerouting', r, 'dropped-route-localnet');
    if (r.known) b.steps.push(step('rerouting', r, 'pass'));
    else this.assume(r, 'on (kube-proxy sets it for localhost NodePorts)');
    return true;
  }

  private iface(name: string | undefined): NetInterface | undefined {
    return name ? this.snapshot.interfaces.find((i) => i.name === name) : undefined;
  }

  private isBridge(name: string): boolean {
    const i = this.iface(name);
    return i?.linkInfo?.kind === 'bridge' || (i?.linkInfo?.kind === undefined && interfaceRole(name) === 'bridge');
  }

  /**
   * A DNATed packet that came in on a bridge and goes out on the same bridge (a pod calling a
   * Service whose endpoint sits on the same bridge). With br_netfilter on, the DNAT is done on the
   * bridged frame, which the bridge then forwards: back out of the port it came in on when the
   * endpoint is the caller itself — only with hairpin on. With it off, the request is routed
   * (fine) but the endpoint's reply is bridged straight to the client, never un-NATed.
   */
  bridge(b: Branch): boolean {
    const dev = b.st.inInterface;
    if (!b.st.dnatDone || !dev || dev !== b.st.outInterface || !this.isBridge(dev)) return true;
    const br = bridgeNfSwitch(this.snapshot.sysctls, b.st.family, this.iface(dev));
    const self = b.st.dst.family === this.origin.family && b.st.dst.value === this.origin.value;
    if (!br.known) {
      this.assume(br, '1 (br_netfilter loaded, as kube-proxy needs)');
    } else if (br.effect === 'off') {
      // Hairpin traffic is masqueraded by kube-proxy, so its reply is routed back through the node.
      if (self || b.masquerade) {
        b.steps.push(step('bridge', br, 'pass'));
        return true;
      }
      b.steps.push(step('bridge', br, 'reply-bypasses-nat'));
      b.fate = fateOf('reply-bypasses-nat', br);
      return true;
    } else b.steps.push(step('bridge', br, 'pass'));
    if (!self) return true;
    const hp = hairpinSwitch(this.snapshot.bridgePorts, dev);
    if (hp.known && hp.effect === 'drop') return this.drop(b, 'bridge', hp, 'dropped-hairpin-off');
    if (hp.effect === 'unknown' && hp.evidence.length) b.steps.push(step('bridge', hp, 'unknown'));
    else if (hp.known) b.steps.push(step('bridge', hp, 'pass'));
    else this.assume(hp, 'on (kubelet sets it)');
    return true;
  }

  /**
   * The MTUs the packet crosses (in, out, and a tunnel's underlay) and the largest packet that
   * passes unfragmented; shown when the way out is a tunnel or the MTUs differ.
   */
  mtu(b: Branch): void {
    const out = b.st.outInterface;
    const o = this.iface(out);
    if (!o) return;
    const tunnelByName = interfaceRole(o.name) === 'tunnel';
    if (!o.linkInfo && tunnelByName) {
      this.assumed.push({ code: 'switch-assumed', switch: 'mtu', assumed: 'not checked (no ip -d link: tunnel kind and underlay unknown)', iface: o.name });
      return;
    }
    const p = pathMtu(this.snapshot.interfaces, b.st.inInterface, out);
    const tunnel = o.linkInfo?.kind !== undefined && tunnelOverhead(o.linkInfo.kind) !== undefined;
    const differ = new Set(p.hops.map((h) => h.mtu)).size > 1;
    if (!tunnel && !differ) return;
    b.steps.push({
      dialect: 'kernel',
      table: 'kernel',
      chain: 'path',
      rule: o.line,
      file: o.file,
      code: 'mtu',
      hops: p.hops,
      ...(p.largest !== undefined ? { largest: p.largest } : {}),
      ...(p.shortfall ? { shortfall: p.shortfall } : {}),
      ...(p.underlayUnknown ? { underlayUnknown: p.underlayUnknown } : {}),
    });
  }
}
