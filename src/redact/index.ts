/**
 * `kpx redact`: rewrite dumps so they can be shared, consistently (same key → same output; the
 * same value gets the same token in every file of the bundle), and so that kpx still reads them
 * the same way: same Services, states, endpoint counts and shares, lint findings and trace
 * shapes. What it replaces:
 *  - IP addresses (v4 and v6, with prefixes) through a keyed prefix-preserving permutation
 *    (./ip.ts): subnets, containment and address classes are kept, and a network's own address
 *    stays its network's address (`10.244.0.0/24 via 10.244.0.0` stays a route via the network);
 *  - names through keyed pseudonyms, one kind each (`ns-…`, `svc-…`, `pod-…`, `host-…` for host
 *    and node names, `zone-…`, `netns-…`, `label-…`, `name-…`), except a few well-known ones
 *    (default, kube-system, kubernetes, kube-dns…);
 *  - kube-proxy chain names recomputed from the redacted names (KUBE-SVC/SVL/EXT/FW/XLB-<hash>
 *    from `ns/name:port` + protocol, KUBE-SEP-<hash> with the redacted endpoint, nftables
 *    `service-<hash>-ns/name/proto/port` and `endpoint-…__ip/port`), so hashes still verify —
 *    and a hash that did not verify before still does not;
 *  - MAC addresses (locally administered, multicast bit kept), and comments and other free text
 *    that are not kube-proxy's or a known agent's.
 *
 * This module rewrites text (a single scan per line with one combined expression, so lines kpx
 * cannot parse are still redacted); ./formats.ts knows each format's other fields that carry
 * names (sysctl host names, netns names, log pairs, API objects, …), and ./bundle.ts learns the
 * bundle's names and networks before anything is rewritten. Names learned anywhere that are
 * distinctive (see distinctive()) are replaced wherever they appear as a word, in every file.
 */
import { createHmac } from 'node:crypto';
import { parseServiceComment } from '../kube/comments.js';
import { base32, endpointHash, portProtoHash, servicePortName } from '../kube/hash.js';
import { nftNameHash, parseNftObjectName } from '../kube/resolve-nft.js';
import type { Resolution } from '../kube/types.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { IpMapper } from './ip.js';

export { IpMapper } from './ip.js';

/** Names that say nothing about whose cluster this is: kept as they are. */
export const KEPT_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease']);
export const KEPT_NAMES: ReadonlySet<string> = new Set(['kubernetes', 'kube-dns']);

/** What a name names: each kind has its own pseudonyms (`ns-…`, `svc-…`, `host-…`). */
export type NameKind = 'ns' | 'svc' | 'pod' | 'host' | 'zone' | 'netns' | 'label' | 'name';

const KEPT_BY_KIND: Readonly<Record<NameKind, ReadonlySet<string>>> = {
  ns: KEPT_NAMESPACES,
  svc: KEPT_NAMES,
  pod: new Set(),
  // `(none)`: what the kernel says when no domain name is set.
  host: new Set(['localhost', 'node', 'kpx', '(none)']),
  zone: new Set(),
  netns: new Set(),
  label: new Set(),
  name: new Set(['kube-proxy', 'kube-proxy-config', 'kube-dns', 'coredns', 'kubernetes']),
};

/**
 * Words every dump format uses as vocabulary: never replaced as words, whatever a bundle names
 * with them (a namespace called `iptables` is still replaced where it is a name: comments, API
 * objects, log pairs).
 */
const RESERVED = new Set([
  ...KEPT_NAMESPACES, ...KEPT_NAMES, 'kube-proxy', 'kube-ipvs0', 'localhost', 'iptables', 'ip6tables', 'nftables', 'kubernetes', 'masquerade',
  'loopback', 'multicast', 'broadcast', 'promiscuity', 'cluster.local', 'svc.cluster.local', 'endpoints', 'endpointslice', 'nodeport',
  'clusterip', 'loadbalancer', 'external', 'internal', 'forwarding', 'kubelet', 'containerd', 'flannel.1', 'vxlan.calico', 'cni-podman0',
  'protocol', 'interface', 'unreachable', 'blackhole', 'prohibit', 'throw', 'default', 'permanent', 'dynamic', 'noprefixroute',
]);

/**
 * Is this name distinctive enough to replace wherever it appears as a word (in every file, not only
 * where a format puts names)? Long enough, with a letter, and either long or holding a digit, dot,
 * dash or underscore (`acme-node-7`, `payments`, not `web` or `api`), and no format's vocabulary.
 */
export function distinctive(name: string): boolean {
  return name.length >= 4 && name.length <= 253 && /[a-z]/i.test(name) && (/[-._0-9]/.test(name) || name.length >= 8) && !RESERVED.has(name.toLowerCase()) && !/^[0-9a-f:.]+$/i.test(name);
}

/** Comments kept (after their names and addresses are redacted): kube-proxy's, kubelet's, CNIs'. */
const SAFE_COMMENT =
  /^(kubernetes|Kubernetes|kube-proxy|kubelet|kube-|KUBE-|masquerade|route LOCAL|pod traffic|mark |cali:|flanneld|flannel|CNI|cni|KIND|kind|ip-masq|cilium|Cilium|DOCKER|docker|Docker|counter|packet|SNAT|DNAT|dnat|snat|Balance|generated|endpoints|service|cluster|nodeport|external|loadbalancer|firewall|hostport|portmap|istio|linkerd)/;

interface SvcIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly portName: string | null;
  readonly protocol: string;
}

interface SepIdentity extends SvcIdentity {
  readonly ip: string;
  readonly port: number;
}

export interface RedactorOptions {
  /** The secret: the same key gives the same output. */
  readonly key: string;
  /** More host names to replace wherever they appear (whole words). */
  readonly hostnames?: readonly string[];
}

const joinHostPort = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]` : ip) + `:${port}`;

/**
 * One combined scanner. Alternatives, tried in this order at each position:
 *  1. `--comment "…"` / `--comment word`, `--log-prefix "…"` (iptables), `comment "…"`, `log prefix "…"` (nft, ipset)
 *  2. kube-proxy iptables chains  3. kube-proxy nftables object names  4. MAC  5. IPv6  6. IPv4
 */
const COMMENT_ALTS = String.raw`(--comment\s+|--(?:nf)?log-prefix\s+)("(?:[^"\\]|\\.)*"|[^\s"]+)|(\b(?:comment|prefix)\s+)("(?:[^"\\]|\\.)*")`;
const CHAIN = String.raw`\bKUBE-(SVC|SVL|EXT|FW|XLB|SEP)-([A-Z2-7]{16})\b`;
const NFT_NAME = String.raw`(?<![\w-])((?:service|local|external|firewall|endpoint|affinity)-[A-Z2-7]{8}-[^\s,{}"';]+)`;
const MAC = String.raw`(?<![0-9a-fA-F:])([0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5})(?![0-9a-fA-F:])`;
const V6 = String.raw`(?<![\w:.])([0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7})(?:\/(\d{1,3}))?(?![\w:.])`;
const V4 = String.raw`(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?:\/(\d{1,2}))?(?![\w]|\.\d)`;
// Namespaces and Service names are DNS labels (no dots): `kubernetes.io/service-name` is not one.
const SVC_REF = String.raw`(?<=^|[\s"(])([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\/([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)(?::([-a-zA-Z0-9]*))?(?=$|[\s"),:])`;

const MAIN = new RegExp(`${COMMENT_ALTS}|${CHAIN}|${NFT_NAME}|${MAC}|${V6}|${V4}`, 'g');
const IN_COMMENT = new RegExp(`${CHAIN}|${NFT_NAME}|${MAC}|${V6}|${V4}|${SVC_REF}`, 'g');
const FREE = new RegExp(`${COMMENT_ALTS}|${CHAIN}|${NFT_NAME}|${MAC}|${V6}|${V4}|${SVC_REF}`, 'g');

export class Redactor {
  readonly ips: IpMapper;
  private readonly svcHashes = new Map<string, SvcIdentity>();
  private readonly sepHashes = new Map<string, SepIdentity>();
  private readonly names = new Map<string, string>();
  private readonly taken = new Set<string>();
  /**
   * Distinctive names learned anywhere → their pseudonyms: replaced as words in every file. (A
   * short plain word — `web`, `api` — is replaced only where a format puts a name: as a word it
   * could be the format's own vocabulary, or a log message kpx reads.)
   */
  private readonly words = new Map<string, string>();

  constructor(private readonly opts: RedactorOptions) {
    this.ips = new IpMapper(`${opts.key}|ip`);
    for (const h of opts.hostnames ?? []) this.addHostname(h);
  }

  private hmac(what: string): Buffer {
    return createHmac('sha256', this.opts.key).update(what).digest();
  }

  /** Learn chain-hash identities from a parsed snapshot and its resolution (before rewriting). */
  learn(snapshot: NodeSnapshot, res: Resolution): void {
    const protos = ['tcp', 'udp', 'sctp'];
    const addSvc = (ns: string, name: string, portName: string | null) => {
      this.name('ns', ns);
      this.name('svc', name);
      const spn = servicePortName(ns, name, portName);
      for (const p of protos) this.svcHashes.set(portProtoHash(spn, p), { namespace: ns, name, portName, protocol: p });
    };
    for (const rs of snapshot.rulesets)
      for (const t of rs.tables)
        for (const c of t.chains)
          for (const r of c.rules)
            for (const text of r.comments) {
              const id = parseServiceComment(text);
              if (id) addSvc(id.namespace, id.name, id.portName);
            }
    for (const s of res.services) {
      if (s.namespace === null || s.name === null) continue;
      addSvc(s.namespace, s.name, s.portName);
      const spn = servicePortName(s.namespace, s.name, s.portName);
      for (const e of s.endpoints) {
        if (!e.via?.startsWith('KUBE-SEP-') || e.port === null || s.protocol === null) continue;
        const h = e.via.slice('KUBE-SEP-'.length);
        if (endpointHash(spn, s.protocol, joinHostPort(e.ip, e.port)) === h) {
          this.sepHashes.set(h, { namespace: s.namespace, name: s.name, portName: s.portName, protocol: s.protocol, ip: e.ip, port: e.port });
        }
      }
    }
    for (const a of snapshot.api ? [snapshot.api] : []) {
      for (const s of a.services) {
        this.name('ns', s.namespace);
        this.name('svc', s.name);
      }
      for (const s of a.slices) {
        this.name('ns', s.namespace);
        if (s.serviceName) this.name('svc', s.serviceName);
        for (const e of s.endpoints) {
          if (e.nodeName) this.addHostname(e.nodeName);
          if (e.zone) this.name('zone', e.zone);
        }
      }
      for (const n of a.nodes) {
        this.addHostname(n.name);
        if (n.zone) this.name('zone', n.zone);
      }
      for (const p of a.pods) {
        this.name('ns', p.namespace);
        this.name('pod', p.name);
        if (p.nodeName) this.addHostname(p.nodeName);
      }
    }
    for (const i of snapshot.interfaces) if (i.linkNetns) this.name('netns', i.linkNetns);
    for (const key of ['kernel.hostname', 'kernel.domainname']) {
      const v = snapshot.sysctls.get(key)?.value;
      if (v) this.addHostname(v);
    }
    if (snapshot.name && snapshot.name !== 'node') this.addHostname(snapshot.name);
  }

  /** A host or node name (and, for a dotted name, its first label): `host-…` wherever it appears. */
  addHostname(h: string): void {
    if (!h || h.length < 2) return;
    this.name('host', h);
    const first = h.split('.')[0];
    if (first !== h && first.length >= 2) this.name('host', first);
  }

  private pseudonym(what: string, chars: number): string {
    return base32(this.hmac(what)).slice(0, chars).toLowerCase();
  }

  /**
   * A name → its pseudonym (injective: a collision takes more characters). Kept names (default,
   * kube-system, kubernetes…) stay. A distinctive() name is also replaced as a word everywhere.
   */
  name(kind: NameKind, original: string): string {
    // A pseudonym met again (text rewritten twice) stays what it is.
    if (KEPT_BY_KIND[kind].has(original) || this.taken.has(original)) return original;
    const k = `${kind}|${original}`;
    let out = this.names.get(k);
    if (out) return out;
    for (let n = 8; ; n++) {
      out = `${kind}-${this.pseudonym(k, n)}`;
      if (!this.taken.has(out)) break;
    }
    this.taken.add(out);
    this.names.set(k, out);
    if (distinctive(original) && !this.words.has(original)) this.words.set(original, out);
    return out;
  }

  /** Free text (a log message, a note, an alias, a value kpx does not read): `redacted-…`, same text same token. */
  opaque(text: string): string {
    return `redacted-${this.pseudonym(`text|${text}`, 8)}`;
  }

  /** Replace the distinctive names learned where they appear as words. */
  private replaceWords(text: string): string {
    const dict = this.words;
    if (dict.size === 0) return text;
    return text.replace(WORD, (w) => {
      const hit = dict.get(w);
      if (hit !== undefined) return hit;
      if (!/[./]/.test(w)) return w;
      // `web-7.corp.example`, `checkout.shop.svc`: each part on its own.
      return w.replace(/[^./]+/g, (part) => dict.get(part) ?? part);
    });
  }

  /**
   * Free text (a log message, an error): comments, chains, addresses, MACs and `ns/name`
   * references redacted, and the distinctive names learned; its prose is kept.
   */
  freeText(text: string): string {
    const out = text.replace(FREE, (m, ...rest: unknown[]) => {
      const g = rest.slice(0, 15) as (string | undefined)[];
      if (g[0] !== undefined) return g[0] + this.quotedComment(g[1]!);
      if (g[2] !== undefined) return g[2] + this.quotedComment(g[3]!);
      const c = this.common(g, 4);
      if (c !== undefined) return c;
      if (g[12] !== undefined) return `${this.name('ns', g[12])}/${this.name('svc', g[13]!)}${g[14] !== undefined ? `:${g[14]}` : ''}`;
      return m;
    });
    return this.replaceWords(out);
  }

  mac(text: string): string {
    const lower = text.toLowerCase();
    if (lower === '00:00:00:00:00:00' || lower === 'ff:ff:ff:ff:ff:ff') return text;
    const h = this.hmac(`mac|${lower}`);
    const first = parseInt(lower.slice(0, 2), 16);
    const b = [((h[0] & 0xfc) | 0x02 | (first & 1)) & 0xff, h[1], h[2], h[3], h[4], h[5]];
    return b.map((x) => x.toString(16).padStart(2, '0')).join(':');
  }

  ip(text: string): string {
    return this.ips.mapText(text) ?? text;
  }

  private kubeChain(role: string, hash: string): string {
    if (role === 'SEP') {
      const id = this.sepHashes.get(hash);
      if (id) {
        const spn = servicePortName(this.name('ns', id.namespace), this.name('svc', id.name), id.portName);
        return `KUBE-SEP-${endpointHash(spn, id.protocol, joinHostPort(this.ip(id.ip), id.port))}`;
      }
    } else {
      const id = this.svcHashes.get(hash);
      if (id) return `KUBE-${role}-${portProtoHash(servicePortName(this.name('ns', id.namespace), this.name('svc', id.name), id.portName), id.protocol)}`;
    }
    return `KUBE-${role}-${base32(this.hmac(`chain|${hash}`)).slice(0, 16)}`;
  }

  private nftName(text: string): string {
    const n = parseNftObjectName(text);
    if (!n) return text;
    const verified = !n.truncated && nftNameHash(n.hashed) === n.hash;
    let hashed: string;
    if (n.namespace !== undefined && n.name !== undefined && n.protocol !== undefined && !n.truncated) {
      hashed = `${this.name('ns', n.namespace)}/${this.name('svc', n.name)}/${n.protocol}/${n.portName ?? ''}`;
      const sep = n.hashed.lastIndexOf('__');
      if (sep >= 0 && (n.role === 'endpoint' || n.role === 'affinity')) {
        const ep = n.hashed.slice(sep + 2);
        if (n.endpointIp !== undefined && n.endpointPort !== undefined) {
          const ip = this.ip(n.endpointIp);
          hashed += `__${ip.includes(':') ? ip.replaceAll(':', '.') : ip}/${n.endpointPort}`;
        } else hashed += `__${this.pseudonym(`ep|${ep}`, 8)}`;
      }
    } else hashed = this.pseudonym(`nft|${n.hashed}`, 16) + (n.truncated ? '...' : '');
    const hash = verified ? nftNameHash(hashed) : base32(this.hmac(`nfthash|${n.hash}`)).slice(0, n.hash.length);
    return `${n.role}-${hash}-${hashed}`;
  }

  private cidr(addr: string, len: string | undefined): string | undefined {
    if (len === undefined) return this.ips.mapText(addr);
    return this.ips.mapCidrText(addr, Number(len));
  }

  /** The common alternatives (chain, nft name, MAC, v6, v4); undefined when `m` is not one of them. */
  private common(g: (string | undefined)[], o: number): string | undefined {
    // g[o..o+9]: CHAIN(role, hash) NFT(name) MAC(mac) V6(addr, len) V4(addr, len)
    if (g[o] !== undefined) return this.kubeChain(g[o]!, g[o + 1]!);
    if (g[o + 2] !== undefined) return this.nftName(g[o + 2]!);
    if (g[o + 3] !== undefined) return this.mac(g[o + 3]!);
    if (g[o + 4] !== undefined) {
      if ((g[o + 4]!.match(/:/g) ?? []).length < 2) return undefined;
      return this.cidr(g[o + 4]!, g[o + 5]);
    }
    if (g[o + 6] !== undefined) {
      if (g[o + 6]!.split('.').some((x) => Number(x) > 255)) return undefined;
      return this.cidr(g[o + 6]!, g[o + 7]);
    }
    return undefined;
  }

  /** A comment's text (unquoted): names, addresses and chains redacted; prose that is not kube-proxy's or a known agent's replaced. */
  comment(text: string): string {
    let sawService = false;
    const out = text.replace(IN_COMMENT, (m, ...rest: unknown[]) => {
      const g = rest.slice(0, 11) as (string | undefined)[];
      const c = this.common(g, 0);
      if (c !== undefined) return c;
      if (g[8] !== undefined) {
        sawService = true;
        return `${this.name('ns', g[8])}/${this.name('svc', g[9]!)}${g[10] !== undefined ? `:${g[10]}` : ''}`;
      }
      return m;
    });
    if (sawService || SAFE_COMMENT.test(text.trim()) || text.trim() === '' || /^redacted-[a-z2-7]{8,}$/.test(text)) return this.replaceWords(out);
    return `redacted-${this.pseudonym(`comment|${text}`, 8)}`;
  }

  private quotedComment(q: string): string {
    if (!q.startsWith('"')) return this.comment(q);
    const inner = q.slice(1, -1).replace(/\\(.)/g, '$1');
    const red = this.comment(inner);
    return `"${red.replace(/["\\]/g, '\\$&')}"`;
  }

  /** Redact one file's text. */
  text(input: string): string {
    const out = input.replace(MAIN, (m, ...rest: unknown[]) => {
      const g = rest.slice(0, 12) as (string | undefined)[];
      if (g[0] !== undefined) return g[0] + this.quotedComment(g[1]!);
      if (g[2] !== undefined) return g[2] + this.quotedComment(g[3]!);
      return this.common(g, 4) ?? m;
    });
    return this.replaceWords(out);
  }

  /** manifest.json of a kpx bundle: the host name (learned first) and the text of every string redacted. */
  json(input: string): string {
    try {
      const v = JSON.parse(input) as unknown;
      if (v && typeof v === 'object' && typeof (v as { host?: unknown }).host === 'string') this.addHostname((v as { host: string }).host);
      const walk = (x: unknown): unknown =>
        typeof x === 'string' ? this.text(x) : Array.isArray(x) ? x.map(walk) : x && typeof x === 'object' ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y)])) : x;
      return JSON.stringify(walk(v), null, 2) + '\n';
    } catch {
      return this.text(input);
    }
  }
}

/** A word as names are written (DNS names, labels, host names with dots). */
const WORD = /[A-Za-z0-9][A-Za-z0-9_.-]*/g;
