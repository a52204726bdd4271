/**
 * Values as kubectl prints them (k8s.io/kubernetes pkg/printers/internalversion/printers.go,
 * k8s.io/kubectl pkg/describe/describe.go), read back: `80:30080/TCP`, `<none>`, `<pending>`,
 * `app=web,tier=fe`, `10.0.0.1:53,10.0.0.2:53 + 3 more...`. Each reader returns undefined for a
 * value it cannot read (a redacted `xx.xx.xx.xx`, a clipped `a.b.c...`): the caller keeps the
 * field unknown and says so.
 */
import { formatIp, parseIp } from '../model/addr.js';
import type { ApiProtocol, ApiWhere } from '../model/k8s-api.js';

export const where = (file: string, line: number, column: number, text: string): ApiWhere => ({ file, line, column, text });

/** `<none>`, `none`, `<unset>`, `<nil>`, `-`, empty: nothing printed there. */
export function isNone(v: string | undefined): boolean {
  // `<nodes>`: kubectl ≤ 1.4 printed it in EXTERNAL-IP for a NodePort Service (no external address).
  return v === undefined || /^(<none>|none|<unset>|<nil>|<nodes>|-|)$/i.test(v.trim());
}

/** A canonical IP address, or undefined (redacted, a host name, clipped). */
export function ipOf(text: string): string | undefined {
  const ip = parseIp(text.trim());
  return ip ? formatIp(ip) : undefined;
}

export function protocolOf(text: string): ApiProtocol | undefined {
  const p = text.toUpperCase();
  return p === 'TCP' ? 'tcp' : p === 'UDP' ? 'udp' : p === 'SCTP' ? 'sctp' : undefined;
}

export interface PrintedPort {
  readonly port: number;
  readonly nodePort: number | null;
  readonly protocol: ApiProtocol;
}

/** printers.go makePortString: `80/TCP`, `80:30080/TCP`, joined by commas. Undefined when any part is unreadable. */
export function portsOf(text: string): PrintedPort[] | undefined {
  if (isNone(text)) return [];
  const out: PrintedPort[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d+)(?::(\d+))?\/([A-Za-z]+)$/.exec(part.trim());
    const protocol = m ? protocolOf(m[3]) : undefined;
    if (!m || !protocol) return undefined;
    const port = Number(m[1]);
    const nodePort = m[2] !== undefined ? Number(m[2]) : null;
    if (port < 1 || port > 65535 || (nodePort !== null && (nodePort < 1 || nodePort > 65535))) return undefined;
    out.push({ port, nodePort, protocol });
  }
  return out;
}

/** labels.FormatLabels: `a=b,c=d`, `<none>` for none. Undefined when a part is not `key=value`. */
export function labelsOf(text: string): Record<string, string> | undefined {
  if (isNone(text)) return {};
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) return undefined;
    out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

/**
 * printers.go formatEndpoints / formatDiscoveryEndpoints (and describe's Endpoints line): up to three
 * `IP:port` (or bare IPs), then ` + N more...`. `hidden` is N; `unreadable` counts entries kpx could
 * not read (redacted).
 */
export function endpointListOf(raw: string): { entries: { ip: string; port: number | null }[]; hidden: number; unreadable: number } {
  // An author's note after the value (`10.0.0.1:80  # the pod`): not kubectl's.
  const text = raw.replace(/\s+#.*$/, '');
  const more = /\s*\+\s*(\d+)\s+more\.*\s*$/.exec(text);
  const list = more ? text.slice(0, more.index) : text;
  const entries: { ip: string; port: number | null }[] = [];
  let unreadable = 0;
  if (!isNone(list)) {
    for (const part of list.split(',')) {
      const t = part.trim();
      if (t === '') continue;
      const m = /^\[([^\]]+)\]:(\d+)$/.exec(t) ?? /^([^:]+):(\d+)$/.exec(t);
      const ip = ipOf(m ? m[1] : t);
      if (ip === undefined) unreadable++;
      else entries.push({ ip, port: m ? Number(m[2]) : null });
    }
  }
  return { entries, hidden: more ? Number(more[1]) : 0, unreadable };
}

/** A Service type as printed (tolerating a pasted `NodePOrt`), or undefined. */
export function serviceTypeOf(text: string): 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName' | undefined {
  const t = text.trim().toLowerCase();
  return t === 'clusterip' ? 'ClusterIP' : t === 'nodeport' ? 'NodePort' : t === 'loadbalancer' ? 'LoadBalancer' : t === 'externalname' ? 'ExternalName' : undefined;
}

/** `kind/name` as `kubectl get all` prints it: the name, and the kind when one is given. */
export function kindAndName(text: string): { kind?: string; name: string } {
  const i = text.indexOf('/');
  return i > 0 ? { kind: text.slice(0, i).toLowerCase(), name: text.slice(i + 1) } : { name: text };
}
