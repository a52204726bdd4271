/**
 * `kpx diff`: what changed between two snapshots (one node at two times, or two nodes).
 *
 * First at the Service level (Service ports added/removed/changed, endpoints added/removed),
 * then at the rule level: rules added/removed per table/chain (iptables, nft), members per
 * ipset, virtual/real servers (IPVS), compared on their text without counters and in order.
 * Rule changes that belong to a changed Service (its chains, its VIPs, its endpoints, its name
 * in a comment) are counted as explained and not listed one by one.
 *
 * Pure: takes snapshots and their resolutions, returns data (see `SnapshotDiff`).
 */
import type { Endpoint, Resolution, ServicePort } from '../kube/types.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatHostPort } from '../model/addr.js';
import { elementText } from '../model/nft.js';
import { realServerKey, virtualServerKey } from '../model/ipvs.js';
import { servicePortName } from '../kube/hash.js';
import { diffSequences } from './sequence.js';
import { appendAll } from '../source/index.js';
import { crossModeValue, isCrossMode, modesOf, notComparedBetween, pairAcrossModes, type ModeChange } from './modes.js';
import { evidenceOf, identityOneSided, unattachedFrontEnd, notComparedWithout, oneSidedEvidence, valueWithout, type EvidenceKind, type OneSidedEvidence } from './evidence.js';
import type { NotCompared } from './modes.js';

export type { ModeChange, NotCompared } from './modes.js';
export type { EvidenceKind, OneSidedEvidence } from './evidence.js';

/** The fields of a Service port compared one by one (endpoints are compared separately). */
export const SERVICE_FIELDS = [
  'port',
  'clusterIP',
  'nodePort',
  'externalIPs',
  'loadBalancerIPs',
  'loadBalancerSourceRanges',
  'externalTrafficPolicy',
  'internalTrafficPolicy',
  'sessionAffinity',
  'state',
  'mode',
] as const;
export type ServiceField = (typeof SERVICE_FIELDS)[number];
/** Across proxy modes externalIPs and loadBalancerIPs are compared as one list (modes.ts). */
export type ComparedField = ServiceField | 'externalAddresses';
const CROSS_MODE_FIELDS: readonly ComparedField[] = [...SERVICE_FIELDS.filter((f) => f !== 'mode' && f !== 'externalIPs' && f !== 'loadBalancerIPs'), 'externalAddresses'];

export interface ServiceSummary {
  /** Stable key: `ns/name:port/proto` (or the resolver's id, `VIP:port/proto`, when unnamed), plus ` (IPv6)` for IPv6. */
  readonly key: string;
  readonly namespace: string | null;
  readonly name: string | null;
  readonly portName: string | null;
  readonly protocol: string;
  readonly port: number;
  readonly family: 4 | 6;
  readonly clusterIP: string | null;
  readonly nodePort: number | null;
  readonly state: string;
  readonly mode: string;
  readonly endpoints: number;
}

export interface FieldChange {
  readonly field: ComparedField;
  readonly old: unknown;
  readonly new: unknown;
}

export interface EndpointRef {
  /** `ip:port` (`[v6]:port`). */
  readonly address: string;
  readonly local: boolean | null;
  /** null when the dump hides the share (see Endpoint.probability). */
  readonly probability: number | null;
}

export interface EndpointChange {
  readonly address: string;
  /** share: the endpoint's share of new connections (it moves too when endpoints come or go). */
  readonly field: 'local' | 'weight' | 'share';
  readonly old: unknown;
  readonly new: unknown;
}

export interface ServiceChange {
  readonly key: string;
  readonly old: ServiceSummary;
  readonly new: ServiceSummary;
  readonly fields: readonly FieldChange[];
  readonly endpointsAdded: readonly EndpointRef[];
  readonly endpointsRemoved: readonly EndpointRef[];
  readonly endpointsChanged: readonly EndpointChange[];
}

export type UnitKind = 'iptables-chain' | 'nft-chain' | 'nft-set' | 'ipset' | 'ipvs';

export interface RuleRef {
  readonly text: string;
  readonly file: string;
  readonly line: number;
}

/** Changes in one chain (or set, or the IPVS table) not explained by Service changes. */
export interface UnitChange {
  readonly kind: UnitKind;
  /** `iptables v4 nat/KUBE-SERVICES`, `nft ip kube-proxy/services`, `ipset KUBE-CLUSTER-IP`, `ipvs`. */
  readonly unit: string;
  /** The whole chain/set appeared or disappeared (its items are listed too). */
  readonly status: 'added' | 'removed' | 'changed';
  readonly added: readonly RuleRef[];
  readonly removed: readonly RuleRef[];
  /** Rules present on both sides whose position changed relative to the others. */
  readonly moved: readonly RuleRef[];
  /** Built-in chain policy / set header changes. */
  readonly policy?: { readonly old: string | null; readonly new: string | null };
}

export interface SnapshotDiff {
  readonly old: { readonly name: string; readonly files: readonly string[]; readonly servicePorts: number };
  readonly new: { readonly name: string; readonly files: readonly string[]; readonly servicePorts: number };
  /** Present when different proxy modes wrote the two sides: said once, Services still compared. */
  readonly modes?: ModeChange;
  /**
   * Present when one side holds evidence the other lacks (an `ip route`, API objects, an ipset
   * listing): said once, and what rests on it is compared only where both sides tell it.
   */
  readonly evidence?: {
    readonly oneSided: readonly OneSidedEvidence[];
    /** Service fields that rest on that evidence, left out of the comparison (with why). */
    readonly notCompared: readonly NotCompared[];
    /** Endpoints on both sides whose locality only one side can tell: not compared. */
    readonly localityNotCompared: number;
    /** Front ends (external, LoadBalancer) one side cannot attach to their Service: not compared. */
    readonly frontEndsNotCompared: number;
  };
  readonly services: {
    readonly added: readonly ServiceSummary[];
    readonly removed: readonly ServiceSummary[];
    readonly changed: readonly ServiceChange[];
    readonly unchanged: number;
  };
  readonly rules: {
    /** Rule/member changes attributed to the Service changes above (not listed). */
    readonly explained: { readonly added: number; readonly removed: number; readonly moved: number };
    /** Across proxy modes: each side's kube-proxy rules/members/virtual servers, not compared rule by rule. */
    readonly proxyRules?: { readonly old: number; readonly new: number };
    /**
     * Rules of a kind only one side's dumps hold (an nftables-mode node dumped without
     * iptables-save, a bundle without its ipset listing): absent from a dump is not removed, so
     * they are counted, not compared.
     */
    readonly oneSided?: readonly { readonly kind: UnitKind; readonly side: 'old' | 'new'; readonly units: number; readonly items: number }[];
    readonly unexplained: readonly UnitChange[];
  };
}

// ---------------------------------------------------------------------------------------------
// Service level

export function serviceKey(s: ServicePort): string {
  // Unnamed Service ports keep the resolver's id: `VIP:port/proto`, `*:nodePort/proto` for a NodePort alone.
  const base = s.namespace !== null && s.name !== null ? `${servicePortName(s.namespace, s.name, s.portName)}/${s.protocol}` : s.id;
  return s.family === 6 ? `${base} (IPv6)` : base;
}

function summary(s: ServicePort): ServiceSummary {
  return {
    key: serviceKey(s),
    namespace: s.namespace,
    name: s.name,
    portName: s.portName,
    protocol: s.protocol ?? '?',
    port: s.port,
    family: s.family,
    clusterIP: s.clusterIP,
    nodePort: s.nodePort,
    state: s.state,
    mode: s.mode,
    endpoints: s.endpoints.length,
  };
}

const endpointAddress = (e: Endpoint) => formatHostPort(e.ip, e.port ?? undefined);

function normalizeField(v: unknown): string {
  if (Array.isArray(v)) return JSON.stringify([...v].map(String).sort());
  return JSON.stringify(v ?? null);
}

type ValueOf = (s: ServicePort, other: ServicePort, field: ComparedField) => unknown;
const sameModeValue: ValueOf = (s, _other, field) => (s as unknown as Record<string, unknown>)[field];
const SHARE_EPSILON = 1e-9;

/** Counts what a comparison left out for want of evidence on one side (said once in the diff). */
interface Uncompared {
  locality: number;
}

function compareService(a: ServicePort, b: ServicePort, uncompared: Uncompared, fieldsCompared: readonly ComparedField[], valueOf: ValueOf): ServiceChange | undefined {
  const fields: FieldChange[] = [];
  for (const f of fieldsCompared) {
    const x = valueOf(a, b, f);
    const y = valueOf(b, a, f);
    if (x === undefined || y === undefined) continue;
    if (normalizeField(x) !== normalizeField(y)) fields.push({ field: f, old: x, new: y });
  }
  const oldEps = new Map(a.endpoints.map((e) => [endpointAddress(e), e]));
  const newEps = new Map(b.endpoints.map((e) => [endpointAddress(e), e]));
  const ref = (e: Endpoint): EndpointRef => ({ address: endpointAddress(e), local: e.local, probability: e.probability });
  const endpointsAdded = [...newEps.entries()].filter(([k]) => !oldEps.has(k)).map(([, e]) => ref(e));
  const endpointsRemoved = [...oldEps.entries()].filter(([k]) => !newEps.has(k)).map(([, e]) => ref(e));
  const endpointsChanged: EndpointChange[] = [];
  for (const [k, o] of oldEps) {
    const n = newEps.get(k);
    if (!n) continue;
    // Only what both sides know: an unknown locality (no `ip route` on one side), a weight one mode does not have, is no change.
    if (o.local !== null && n.local !== null && o.local !== n.local) endpointsChanged.push({ address: k, field: 'local', old: o.local, new: n.local });
    else if ((o.local === null) !== (n.local === null)) uncompared.locality++;
    if (o.weight !== undefined && n.weight !== undefined && o.weight !== n.weight) endpointsChanged.push({ address: k, field: 'weight', old: o.weight, new: n.weight });
    // The endpoints that stay take a new share when others come or go (33% → 50% when one of three leaves): said.
    if (o.probability !== null && n.probability !== null && Math.abs(o.probability - n.probability) > SHARE_EPSILON) endpointsChanged.push({ address: k, field: 'share', old: o.probability, new: n.probability });
  }
  if (fields.length === 0 && endpointsAdded.length === 0 && endpointsRemoved.length === 0 && endpointsChanged.length === 0) return undefined;
  return { key: serviceKey(a), old: summary(a), new: summary(b), fields, endpointsAdded, endpointsRemoved, endpointsChanged };
}

/** Index Service ports by key; a key seen twice (two modes at once) keeps both, suffixed. */
function byKey(services: readonly ServicePort[]): Map<string, ServicePort> {
  const m = new Map<string, ServicePort>();
  for (const s of services) {
    const base = serviceKey(s);
    let k = m.has(base) ? `${base} [${s.mode}]` : base;
    for (let i = 2; m.has(k); i++) k = `${base} [${s.mode} #${i}]`;
    m.set(k, s);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Rule level

interface Item {
  readonly text: string;
  readonly file: string;
  readonly line: number;
}

interface Unit {
  readonly kind: UnitKind;
  /** The dump it comes from: compared only when the other side holds that kind of dump too. */
  readonly evidence: EvidenceKind;
  readonly unit: string;
  readonly items: Item[];
  readonly policy?: string;
  /** Name of the chain/set (explains every item when it belongs to a changed Service). */
  readonly owner: string;
  /**
   * Written by kube-proxy (KUBE-* chains and ipsets, its nft table, IPVS). Only there can a Service
   * change account for a rule that mentions the Service's addresses: a new `-A FORWARD -d POD -j DROP`
   * is somebody else's rule, whatever Service that pod serves.
   */
  readonly kubeProxy: boolean;
}

/** A rule's text without packet/byte counters and with single spaces. */
export function ruleText(raw: string): string {
  return raw
    .replace(/^\[\d+:\d+\]\s+/, '')
    .replace(/\s+-c\s+\d+\s+\d+(?=\s|$)/, '')
    .replace(/\bcounter packets \d+ bytes \d+/g, 'counter')
    .replace(/\s+#\s*handle\s+\d+\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function collectUnits(s: NodeSnapshot): Map<string, Unit> {
  const units = new Map<string, Unit>();
  const add = (u: Unit) => {
    const prev = units.get(u.unit);
    if (prev) appendAll(prev.items, u.items);
    else units.set(u.unit, u);
  };
  for (const rs of s.rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        add({
          kind: 'iptables-chain',
          evidence: rs.family === 6 ? 'iptables v6' : 'iptables v4',
          unit: `iptables v${rs.family} ${t.name}/${c.name}`,
          owner: c.name,
          kubeProxy: c.name.startsWith('KUBE-'),
          items: c.rules.map((r) => ({ text: ruleText(r.raw), file: r.file, line: r.line })),
          ...(c.builtin && c.policy ? { policy: c.policy } : {}),
        });
      }
    }
  }
  for (const n of s.nft) {
    for (const t of n.tables) {
      const tname = `${t.family ? t.family + ' ' : ''}${t.name}`;
      for (const c of t.chains) {
        add({
          kind: 'nft-chain',
          evidence: 'nft',
          unit: `nft ${tname}/${c.name}`,
          owner: c.name,
          kubeProxy: t.name === 'kube-proxy',
          items: c.rules.map((r) => ({ text: ruleText(r.raw), file: t.file, line: r.line })),
          ...(c.policy ? { policy: c.policy } : {}),
        });
      }
      for (const set of t.sets) {
        add({
          kind: 'nft-set',
          evidence: 'nft',
          unit: `nft ${tname} ${set.kind} ${set.name}`,
          owner: set.name,
          kubeProxy: t.name === 'kube-proxy',
          items: set.elements.map((e) => ({ text: elementText(e) + (e.comment ? ` comment "${e.comment}"` : ''), file: t.file, line: e.line })),
        });
      }
    }
  }
  for (const set of s.ipsets) {
    add({
      kind: 'ipset',
      evidence: 'ipset',
      unit: `ipset ${set.name}`,
      owner: set.name,
      kubeProxy: set.name.startsWith('KUBE-'),
      items: set.members.map((m) => ({ text: m.text + (m.nomatch ? ' nomatch' : '') + (m.comment ? ` comment "${m.comment}"` : ''), file: set.file, line: m.line })),
      policy: set.type,
    });
  }
  const ipvsItems: Item[] = [];
  for (const d of s.ipvs) {
    for (const vs of d.virtualServers) {
      const key = virtualServerKey(vs);
      ipvsItems.push({ text: `${key} ${vs.scheduler ?? ''}${vs.persistent !== undefined ? ` persistent ${vs.persistent}` : ''}`.trim(), file: vs.file, line: vs.line });
      for (const r of vs.realServers) ipvsItems.push({ text: `${key} -> ${realServerKey(r)} ${r.forward ?? ''} weight ${r.weight ?? '?'}`.trim(), file: vs.file, line: r.line });
    }
  }
  if (ipvsItems.length) add({ kind: 'ipvs', evidence: 'ipvs', unit: 'ipvs', owner: 'ipvs', kubeProxy: true, items: ipvsItems.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0)) });
  return units;
}

/** Tokens of a rule text: words split at blanks, quotes, commas, braces; host prefixes dropped. */
function tokens(text: string): string[] {
  const out: string[] = [];
  for (const t of text.split(/[\s"'{},;()=]+/)) {
    if (!t) continue;
    out.push(t);
    const host = /^(.+)\/(32|128)$/.exec(t);
    if (host) out.push(host[1]);
    const colon = t.lastIndexOf(':');
    if (colon > 0 && /^\d+$/.test(t.slice(colon + 1)) && !t.startsWith('[')) out.push(t.slice(0, colon));
  }
  return out;
}

/** What in the rules a changed Service accounts for. */
function explainTokens(changes: { removed: ServicePort[]; added: ServicePort[]; changed: [ServicePort, ServicePort, ServiceChange][] }): Set<string> {
  const tok = new Set<string>();
  const whole = (s: ServicePort) => {
    for (const c of Object.values(s.chains)) tok.add(c);
    if (s.namespace !== null && s.name !== null) {
      tok.add(servicePortName(s.namespace, s.name, s.portName));
      if (s.portName === null) tok.add(`${s.namespace}/${s.name}:`);
    }
    if (s.nodePort !== null) {
      // NodePorts are distinctive numbers (30000-32767 by default): bitmap:port members, --dport.
      tok.add(String(s.nodePort));
      tok.add(`${s.protocol}:${s.nodePort}`);
    }
    for (const ip of [s.clusterIP, ...s.externalIPs, ...s.loadBalancerIPs]) {
      if (!ip) continue;
      tok.add(ip);
      tok.add(formatHostPort(ip, s.port));
    }
    for (const e of s.endpoints) {
      tok.add(endpointAddress(e));
      tok.add(e.ip);
      if (e.via) tok.add(e.via);
    }
  };
  for (const s of changes.removed) whole(s);
  for (const s of changes.added) whole(s);
  for (const [a, b] of changes.changed) {
    whole(a);
    whole(b);
  }
  return tok;
}

function diffUnits(oldUnits: Map<string, Unit>, newUnits: Map<string, Unit>, explain: Set<string>): SnapshotDiff['rules'] {
  const explained = { added: 0, removed: 0, moved: 0 };
  const unexplained: UnitChange[] = [];
  const keys = [...new Set([...oldUnits.keys(), ...newUnits.keys()])].sort();
  const isExplained = (u: Unit, it: Item) => explain.has(u.owner) || (u.kubeProxy && tokens(it.text).some((t) => explain.has(t)));
  for (const k of keys) {
    const a = oldUnits.get(k);
    const b = newUnits.get(k);
    const u = (a ?? b)!;
    const ai = a?.items ?? [];
    const bi = b?.items ?? [];
    const ops = diffSequences(
      ai.map((x) => x.text),
      bi.map((x) => x.text),
    );
    const removedRaw = ops.filter((o) => o.op === '-').map((o) => ai[o.a]);
    const addedRaw = ops.filter((o) => o.op === '+').map((o) => bi[o.b]);
    // A text both removed and added in one chain moved.
    const addedCount = new Map<string, number>();
    for (const x of addedRaw) addedCount.set(x.text, (addedCount.get(x.text) ?? 0) + 1);
    const movedTexts = new Map<string, number>();
    for (const x of removedRaw) {
      const n = addedCount.get(x.text) ?? 0;
      if (n > 0) {
        addedCount.set(x.text, n - 1);
        movedTexts.set(x.text, (movedTexts.get(x.text) ?? 0) + 1);
      }
    }
    const takeMoved = new Map(movedTexts);
    const removed: Item[] = [];
    const moved: Item[] = [];
    for (const x of removedRaw) {
      const n = takeMoved.get(x.text) ?? 0;
      if (n > 0) takeMoved.set(x.text, n - 1);
      else removed.push(x);
    }
    const takeMovedB = new Map(movedTexts);
    const added: Item[] = [];
    for (const x of addedRaw) {
      const n = takeMovedB.get(x.text) ?? 0;
      if (n > 0) {
        takeMovedB.set(x.text, n - 1);
        moved.push(x);
      } else added.push(x);
    }
    const policyChanged = (a?.policy ?? null) !== (b?.policy ?? null) && a !== undefined && b !== undefined;
    const keep = <T extends Item>(xs: T[], count: 'added' | 'removed' | 'moved') =>
      xs.filter((x) => {
        if (isExplained(u, x)) {
          explained[count]++;
          return false;
        }
        return true;
      });
    const ua = keep(added, 'added');
    const ur = keep(removed, 'removed');
    const um = keep(moved, 'moved');
    const wholeExplained = explain.has(u.owner);
    const status: UnitChange['status'] = !a ? 'added' : !b ? 'removed' : 'changed';
    const emptyAppear = status !== 'changed' && ai.length === 0 && bi.length === 0 && !wholeExplained;
    if (ua.length || ur.length || um.length || policyChanged || emptyAppear) {
      unexplained.push({
        kind: u.kind,
        unit: k,
        status,
        added: ua.map(ref),
        removed: ur.map(ref),
        moved: um.map(ref),
        ...(policyChanged ? { policy: { old: a?.policy ?? null, new: b?.policy ?? null } } : {}),
      });
    }
  }
  return { explained, unexplained };
}

const ref = (x: Item): RuleRef => ({ text: x.text, file: x.file, line: x.line });

/** The Service pairs of two resolutions: by key within one mode, by what both modes show across modes. */
function pairServices(oldRes: Resolution, newRes: Resolution, cross: boolean) {
  if (cross) {
    const p = pairAcrossModes(oldRes.services, newRes.services);
    return { pairs: p.pairs, removedE: [...p.removed], addedE: [...p.added] };
  }
  const a = byKey(oldRes.services);
  const b = byKey(newRes.services);
  const pairs: [ServicePort, ServicePort, string][] = [];
  for (const [k, s] of a) {
    const t = b.get(k);
    if (t) pairs.push([s, t, k]);
  }
  return { pairs, removedE: [...a.entries()].filter(([k]) => !b.has(k)), addedE: [...b.entries()].filter(([k]) => !a.has(k)) };
}

export function diffSnapshots(oldSnap: NodeSnapshot, oldRes: Resolution, newSnap: NodeSnapshot, newRes: Resolution): SnapshotDiff {
  const oldModes = modesOf(oldRes.services);
  const newModes = modesOf(newRes.services);
  const cross = isCrossMode(oldModes, newModes);
  const oldEvidence = evidenceOf(oldSnap);
  const newEvidence = evidenceOf(newSnap);
  const evidence = oneSidedEvidence(oldEvidence, newEvidence);
  // What rests on evidence only one side has is not compared (said once, with why).
  const leftOut = notComparedWithout(evidence, { old: oldModes, new: newModes });
  const paired = pairServices(oldRes, newRes, cross || identityOneSided(evidence));
  const { pairs } = paired;
  let { removedE, addedE } = paired;
  let frontEnds = 0;
  if (leftOut.some((n) => n.what.startsWith('nodePort and external'))) {
    const unattached = unattachedFrontEnd([...oldRes.services, ...newRes.services]);
    const before = removedE.length + addedE.length;
    removedE = removedE.filter(([, s]) => !unattached(s));
    addedE = addedE.filter(([, s]) => !unattached(s));
    frontEnds = before - removedE.length - addedE.length;
  }
  const removed = removedE.map(([, s]) => s);
  const added = addedE.map(([, s]) => s);
  const changed: [ServicePort, ServicePort, ServiceChange][] = [];
  let unchanged = 0;
  const uncompared: Uncompared = { locality: 0 };
  const base: ValueOf = cross ? crossModeValue : sameModeValue;
  const valueOf: ValueOf = leftOut.length ? (s, other, f) => valueWithout(leftOut, f, base(s, other, f)) : base;
  const fields = cross ? CROSS_MODE_FIELDS : SERVICE_FIELDS;
  for (const [s, t, k] of pairs) {
    const c = compareService(s, t, uncompared, fields, valueOf);
    if (c) changed.push([s, t, { ...c, key: k, old: { ...c.old, key: k }, new: { ...c.new, key: k } }]);
    else unchanged++;
  }
  const explain = explainTokens({ removed, added, changed });
  const oldUnits = collectUnits(oldSnap);
  const newUnits = collectUnits(newSnap);
  const proxyRules = cross ? { old: dropProxyRules(oldUnits), new: dropProxyRules(newUnits) } : undefined;
  // Rules of a dump only one side holds are not removed or added: counted, not compared.
  const oneSided = [...dropOneSided(oldUnits, newEvidence, 'old'), ...dropOneSided(newUnits, oldEvidence, 'new')];
  const rules = diffUnits(oldUnits, newUnits, explain);
  const byKeyOrder = <T extends { key: string }>(xs: T[]) => xs.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  return {
    old: { name: oldSnap.name, files: oldSnap.files.map((f) => f.path), servicePorts: oldRes.services.length },
    new: { name: newSnap.name, files: newSnap.files.map((f) => f.path), servicePorts: newRes.services.length },
    ...(cross ? { modes: { old: oldModes, new: newModes, notCompared: notComparedBetween(oldModes, newModes) } } : {}),
    ...(evidence.length > 0 || uncompared.locality > 0 ? { evidence: { oneSided: evidence, notCompared: leftOut, localityNotCompared: uncompared.locality, frontEndsNotCompared: frontEnds } } : {}),
    services: {
      added: byKeyOrder(addedE.map(([k, s]) => ({ ...summary(s), key: k }))),
      removed: byKeyOrder(removedE.map(([k, s]) => ({ ...summary(s), key: k }))),
      changed: byKeyOrder(changed.map(([, , c]) => c)),
      unchanged,
    },
    rules: { ...rules, ...(proxyRules ? { proxyRules } : {}), ...(oneSided.length > 0 || proxyRules ? { oneSided } : {}) },
  };
}

/** Remove (and count) the units of kinds the other side's dumps do not hold at all. */
function dropOneSided(units: Map<string, Unit>, other: ReadonlyMap<EvidenceKind, unknown>, side: 'old' | 'new'): { kind: UnitKind; side: 'old' | 'new'; units: number; items: number }[] {
  const counts = new Map<UnitKind, { units: number; items: number }>();
  for (const [k, u] of units) {
    if (other.has(u.evidence)) continue;
    const c = counts.get(u.kind) ?? { units: 0, items: 0 };
    c.units++;
    c.items += u.items.length;
    counts.set(u.kind, c);
    units.delete(k);
  }
  return [...counts].map(([kind, c]) => ({ kind, side, ...c }));
}

/** A rule in somebody else's chain that jumps into kube-proxy's (`-A PREROUTING … -j KUBE-SERVICES`). */
const INTO_KUBE = /(?:^|\s)-[jg]\s+KUBE-|\b(?:jump|goto)\s+KUBE-/;

/**
 * Across proxy modes, each mode's own rules differ wholesale: kube-proxy's units (its chains, sets,
 * table, virtual servers) and the rules that jump into them are set aside and counted; what other
 * software wrote is still compared rule by rule.
 */
function dropProxyRules(units: Map<string, Unit>): number {
  let n = 0;
  for (const [k, u] of units) {
    if (u.kubeProxy) {
      n += u.items.length;
      units.delete(k);
      continue;
    }
    const keep = u.items.filter((it) => !INTO_KUBE.test(it.text));
    n += u.items.length - keep.length;
    // An empty built-in chain says nothing across modes (the other side may have no iptables-save at all).
    if (keep.length === 0) units.delete(k);
    else {
      u.items.length = 0;
      appendAll(u.items, keep);
    }
  }
  return n;
}
