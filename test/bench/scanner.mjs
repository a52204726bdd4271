/**
 * The single-pass scanner yardstick (issue 20): the least a JavaScript program must do to read a
 * kube-proxy iptables-save dump and name its Services. One pass over the lines with indexOf and
 * slices — no grammar, no diagnostics, no model, no checks of what kube-proxy wrote — then the
 * same Service resolution kpx does for iptables mode: every Service port by its comment
 * (`ns/name[:port]`), protocol, cluster IP, port, node port, external and load-balancer IPs, and
 * its endpoints (the DNAT targets of the SEP chains its SVC/SVL chains jump to, in rule order).
 *
 *   node test/bench/scanner.mjs DUMP [--json]
 *
 * prints the number of Service ports (or, with --json, `{services:[…]}` in a form
 * `comparable()` reads, to check the scanner and kpx agree on the generated dump — otherwise
 * the comparison of their times would not be honest).
 */
import { readFileSync } from 'node:fs';

/** Value of `opt` in a rule line (the word after it), or undefined. */
function word(line, opt) {
  const i = line.indexOf(opt);
  if (i < 0) return undefined;
  const s = i + opt.length;
  const e = line.indexOf(' ', s);
  return e < 0 ? line.slice(s) : line.slice(s, e);
}

/** The `--comment` text (quoted or one word). */
function comment(line) {
  const i = line.indexOf('--comment ');
  if (i < 0) return undefined;
  const s = i + 10;
  if (line.charCodeAt(s) === 34) return line.slice(s + 1, line.indexOf('"', s + 1));
  const e = line.indexOf(' ', s);
  return e < 0 ? line.slice(s) : line.slice(s, e);
}

const stripMask = (a) => (a.endsWith('/32') ? a.slice(0, -3) : a);

export function scan(text) {
  /** key `ns/name:port/proto` → Service port */
  const services = new Map();
  /** SVC/SVL chain → [SEP chain…] in rule order */
  const jumps = new Map();
  /** SEP chain → `ip:port` */
  const dnat = new Map();
  let table = '';
  const svc = (id, proto) => {
    const key = `${id}/${proto}`;
    let s = services.get(key);
    if (!s) {
      const slash = id.indexOf('/');
      const colon = id.indexOf(':', slash);
      s = {
        namespace: id.slice(0, slash),
        name: colon < 0 ? id.slice(slash + 1) : id.slice(slash + 1, colon),
        portName: colon < 0 ? null : id.slice(colon + 1),
        protocol: proto,
        clusterIP: null,
        port: null,
        nodePort: null,
        externalIPs: [],
        loadBalancerIPs: [],
        chains: [],
      };
      services.set(key, s);
    }
    return s;
  };
  let start = 0;
  const n = text.length;
  while (start < n) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = n;
    const c0 = text.charCodeAt(start);
    if (c0 === 42 /* * */) table = text.slice(start + 1, end);
    else if (c0 === 45 /* - */ && text.charCodeAt(start + 1) === 65 /* A */) {
      const line = text.slice(start, end);
      const chainEnd = line.indexOf(' ', 3);
      const chain = line.slice(3, chainEnd);
      if (chain.startsWith('KUBE-SEP-')) {
        const to = word(line, '--to-destination ');
        if (to !== undefined) dnat.set(chain, to);
      } else if (chain.startsWith('KUBE-SVC-') || chain.startsWith('KUBE-SVL-')) {
        const target = word(line, ' -j ');
        if (target?.startsWith('KUBE-SEP-')) {
          let list = jumps.get(chain);
          if (!list) jumps.set(chain, (list = []));
          list.push(target);
        }
      } else if (chain === 'KUBE-SERVICES' || chain === 'KUBE-NODEPORTS' || chain === 'KUBE-EXTERNAL-SERVICES') {
        const c = comment(line);
        const proto = word(line, ' -p ');
        if (c !== undefined && proto !== undefined && c.indexOf('/') > 0) {
          const sp = c.indexOf(' ');
          const id = sp < 0 ? c : c.slice(0, sp);
          const what = sp < 0 ? '' : c.slice(sp + 1);
          const target = word(line, ' -j ');
          const dport = Number(word(line, '--dport '));
          const dest = word(line, ' -d ');
          if (chain === 'KUBE-NODEPORTS' || (what === 'has no endpoints' && dest === undefined) || (what === 'has no local endpoints' && dest === undefined)) {
            if (what === '' || what.startsWith('has no')) svc(id, proto).nodePort = dport;
          } else if (what === 'cluster IP' || (what.startsWith('has no') && table === 'filter' && chain === 'KUBE-SERVICES')) {
            const s = svc(id, proto);
            s.clusterIP = stripMask(dest);
            s.port = dport;
          } else if (what === 'external IP' || (what === 'has no endpoints' && chain === 'KUBE-EXTERNAL-SERVICES')) {
            const s = svc(id, proto);
            const ip = stripMask(dest);
            if (!s.externalIPs.includes(ip)) s.externalIPs.push(ip);
            if (s.port === null) s.port = dport;
          } else if (what === 'loadbalancer IP') {
            const s = svc(id, proto);
            const ip = stripMask(dest);
            if (!s.loadBalancerIPs.includes(ip)) s.loadBalancerIPs.push(ip);
            if (s.port === null) s.port = dport;
          }
          if (target !== undefined && (target.startsWith('KUBE-SVC-') || target.startsWith('KUBE-SVL-') || target.startsWith('KUBE-EXT-') || target.startsWith('KUBE-FW-'))) {
            const s = svc(id, proto);
            const base = target.slice(target.lastIndexOf('-') + 1);
            for (const kind of ['KUBE-SVC-', 'KUBE-SVL-']) if (!s.chains.includes(kind + base)) s.chains.push(kind + base);
          }
        }
      }
    }
    start = end + 1;
  }
  const out = [];
  for (const s of services.values()) {
    const seen = new Set();
    const endpoints = [];
    for (const ch of s.chains)
      for (const sep of jumps.get(ch) ?? []) {
        const to = dnat.get(sep);
        if (to !== undefined && !seen.has(to)) {
          seen.add(to);
          endpoints.push(to);
        }
      }
    out.push({ ...s, chains: undefined, endpoints });
  }
  return out;
}

/** One Service port as a line both kpx's `services -o json` and the scanner can be reduced to. */
export function comparable(s) {
  const eps = (s.endpoints ?? []).map((e) => (typeof e === 'string' ? e : `${e.ip}:${e.port}`)).sort();
  return [
    `${s.namespace}/${s.name}:${s.portName ?? ''}/${s.protocol}`,
    `vip=${s.clusterIP}:${s.port}`,
    `np=${s.nodePort}`,
    `ext=${[...s.externalIPs].sort().join(',')}`,
    `lb=${[...s.loadBalancerIPs].sort().join(',')}`,
    `eps=${eps.join(',')}`,
  ].join(' ');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const services = scan(readFileSync(process.argv[2], 'utf8'));
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ services })}\n`);
  else process.stdout.write(`${services.length}\n`);
}
