/**
 * What each dump format carries besides addresses, MACs and kube-proxy's names (which the
 * Redactor's text scan finds everywhere): the fields where a format puts host names, namespaces
 * and pod names, network-namespace names, aliases and other free text. Every format kpx reads
 * (src/load/registry.ts) has its entry here; one without special fields is rewritten by the text
 * scan alone. Deny by default where a format lets people write anything (log pairs, config
 * values, API objects: ./api.ts): a value is kept only when it is an address, a number, a
 * duration or a word of the format's vocabulary, and otherwise replaced.
 */
import type { FormatId } from '../load/format.js';
import { redactApiObjects, RedactRefusal } from './api.js';
import type { NameKind, Redactor } from './index.js';

export type RedactFormat = FormatId | 'manifest' | 'empty';

/** Rewrite one file's text, as its format says. */
export function redactFormat(r: Redactor, format: RedactFormat, text: string): string {
  switch (format) {
    case 'manifest':
      return r.json(text);
    case 'empty':
      return '';
    case 'k8s-api':
      return redactApiObjects(r, text);
    case 'kube-proxy-config':
      return perLine(text, (l) => configLine(r, l));
    case 'kube-proxy-log':
      return perLine(text, (l) => logLine(r, l));
    case 'sysctl':
      return perLine(text, (l) => sysctlLine(r, l));
    case 'uname':
      return perLine(text, (l) => unameLine(r, l));
    case 'ip-addr':
      return perLine(text, (l) => ipLinkLine(r, l));
    case 'ip-addr-json':
    case 'ip-route-json':
    case 'ip-rule-json':
    case 'nft-json':
      return jsonDump(r, text);
    case 'iptables-save':
    case 'iptables-list':
    case 'ipset-list':
    case 'ipset-save':
    case 'ipvsadm':
    case 'ip-route':
    case 'ip-rule':
    case 'bridge-link':
    case 'sysfs-net':
    case 'nft':
    case 'conntrack':
    case 'conntrack-stats':
      return r.text(text);
    // Deny by default: text whose columns hold names kpx cannot yet tell from the rest is not copied.
    case 'kubectl':
      throw new RedactRefusal("kubectl's text tables (NAME, NAMESPACE, SELECTOR columns…) are not rewritten field by field yet: not copied (give the objects as kubectl get … -o json, which redact rewrites)");
    case 'paste':
      throw new RedactRefusal('a paste of several outputs (prompts, commands, prose) is not rewritten yet: not copied (give each output as its own file)');
    case 'foreign':
      throw new RedactRefusal("not kube-proxy's dataplane (kpx does not read it): not copied");
  }
}

function perLine(text: string, f: (line: string) => string): string {
  return text
    .split('\n')
    .map((l) => {
      const cr = l.endsWith('\r');
      return cr ? f(l.slice(0, -1)) + '\r' : f(l);
    })
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// sysctl, uname, ip link

/** sysctl keys whose value is this machine's name. */
const HOST_KEYS = /(^|[./])(hostname|domainname|nodename)$/;

function sysctlLine(r: Redactor, line: string): string {
  const m = /^(\s*-?)([A-Za-z0-9_/][A-Za-z0-9_.:@/+-]*)(\s*[=:]\s*)(.*?)(\s*)$/.exec(line);
  if (m && HOST_KEYS.test(m[2]) && m[4] !== '') {
    r.addHostname(m[4]);
    return `${m[1]}${m[2]}${m[3]}${r.name('host', m[4])}${m[5]}`;
  }
  return r.text(line);
}

/** `uname -a`: `Linux NODENAME RELEASE …` (grammars/uname reads the release; the node name is this machine's). */
const UNAME_A = /^\s*Linux\s+(?!version\s)(\S+)\s+\d+\.\d+/;

function unameLine(r: Redactor, line: string): string {
  const m = UNAME_A.exec(line);
  if (m) {
    const at = line.indexOf(m[1], line.indexOf('Linux') + 5);
    r.addHostname(m[1]);
    return line.slice(0, at) + r.name('host', m[1]) + line.slice(at + m[1].length);
  }
  return r.text(line);
}

/** `ip addr` / `ip -d link`: `link-netns NAME` and `alias TEXT` (the rest of the line), then the text scan. */
function ipLinkLine(r: Redactor, line: string): string {
  const alias = /^(\s+alias )(.*)$/.exec(line);
  if (alias) return alias[1] + r.opaque(alias[2]);
  return r.text(line.replace(/(\blink-netns\s+|\bnetns\s+)(\S+)/g, (_m, k: string, v: string) => (/^\d+$/.test(v) ? k + v : k + r.name('netns', v))));
}

// ---------------------------------------------------------------------------------------------
// JSON dumps (ip -j, nft -j)

/** Keys whose string value names something, and what. */
const JSON_NAME_KEYS: Readonly<Record<string, NameKind>> = { link_netns: 'netns', netns: 'netns' };

function jsonDump(r: Redactor, text: string): string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    // Not whole JSON (a paste cut off): every line through the text scan; strings kpx cannot place are prose at worst.
    return r.text(text);
  }
  const walk = (x: unknown, key: string): unknown => {
    if (typeof x === 'string') {
      if (key === 'comment') return r.comment(x);
      if (key === 'ifalias' || key === 'alias') return r.opaque(x);
      const kind = JSON_NAME_KEYS[key];
      return kind ? r.name(kind, x) : r.text(x);
    }
    if (Array.isArray(x)) return x.map((e) => walk(e, key));
    if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y, k)]));
    return x;
  };
  return JSON.stringify(walk(v, ''), null, 2) + '\n';
}

// ---------------------------------------------------------------------------------------------
// Values: kept when they carry no name

/** Words of kube-proxy's and the kernel's vocabulary that a config or log value may be. */
const VOCABULARY = new Set([
  'iptables', 'ipvs', 'nftables', 'userspace', 'kernelspace', 'rr', 'lc', 'dh', 'sh', 'sed', 'nq', 'wrr', 'wlc', 'lblc', 'lblcr', 'mh', 'fo', 'ovf',
  'tcp', 'udp', 'sctp', 'true', 'false', 'null', 'nil', '<nil>', 'none', 'ipv4', 'ipv6', 'v1', 'linux', 'amd64', 'arm64', 'stderr', 'stdout',
  'ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix', 'json', 'text', 'application/vnd.kubernetes.protobuf', 'application/json',
  'cluster', 'local', 'nat', 'filter', 'mangle', 'raw', 'security', 'ip', 'ip6', 'inet', 'kube-proxy', 'kube-system',
]);

/** A value with no name in it: numbers, durations, versions, booleans, enums, ports and ranges. */
function harmless(v: string): boolean {
  if (v === '' || VOCABULARY.has(v) || VOCABULARY.has(v.toLowerCase())) return true;
  if (/^-?\d+(\.\d+)?$/.test(v) || /^0x[0-9a-f]+$/i.test(v)) return true;
  if (/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(v)) return true;
  if (/^\d+[-:]\d+$/.test(v) || /^v?\d+\.\d+(\.\d+)?([-+][\w.]+)?$/.test(v)) return true;
  // CamelCase enums (LocalModeClusterCIDR, IPv4, SingleStack) and feature gates (Gate=true,Other=false).
  if (/^[A-Z][A-Za-z0-9]*$/.test(v)) return true;
  if (/^([A-Z][A-Za-z0-9]*=(true|false),?)+$/.test(v)) return true;
  return false;
}

/** An address, a network, `addr:port` or a list of them: mapped; undefined when it is something else. */
function addresses(r: Redactor, v: string): string | undefined {
  if (!/^[\d.:/[\]a-fA-F,\s]+$/.test(v) || !/[.:]/.test(v)) return undefined;
  const out = r.text(v);
  return out;
}

/**
 * A value in a config or a log pair, by its key: a host name, a namespace/name, an address,
 * something harmless, or else an opaque token (deny by default).
 */
function value(r: Redactor, key: string, raw: string): string {
  const q = /^(["'])(.*)\1$/s.exec(raw);
  const v = q ? q[2] : raw;
  const wrap = (x: string) => (q ? `${q[1]}${x}${q[1]}` : x);
  const k = key.toLowerCase();
  if (v === '') return raw;
  // A list (`IPs=["10.0.0.1" "10.0.0.2"]`, `[a, b]`): each element by the same key.
  const listed = /^\[(.*)\]$/s.exec(raw);
  if (listed) return `[${listed[1].replace(/"(?:[^"\\]|\\.)*"|[^\s,"]+/g, (x) => value(r, key, x))}]`;
  if (/^(hostname|hostnameoverride|hostname-override|node|nodename|host)$/.test(k)) return wrap(hostOrAddress(r, v));
  const ref = /^([a-z0-9][-a-z0-9.]*)\/([a-z0-9][-a-z0-9.]*)(?::([-a-zA-Z0-9]*))?$/.exec(v);
  if (/^(pod|podname|object|objectref|endpoints|endpointslice|slice|service|svc|serviceportname|servicename|svcname|servicekey|name)$/.test(k)) {
    const kind: NameKind = /^pod/.test(k) ? 'pod' : /^(object|objectref|name|endpointslice|slice)$/.test(k) ? 'name' : 'svc';
    if (ref) return wrap(`${r.name('ns', ref[1])}/${r.name(kind, ref[2])}${ref[3] !== undefined ? `:${ref[3]}` : ''}`);
    if (/^[a-z0-9][-a-z0-9.]*$/.test(v)) return wrap(r.name(kind, v));
  }
  if (/^(namespace|podnamespace|ns)$/.test(k) && /^[a-z0-9][-a-z0-9]*$/.test(v)) return wrap(r.name('ns', v));
  if (/^(zone|topologyzone)$/.test(k)) return wrap(r.name('zone', v));
  if (/^(err|error|reason|msg|message|output|stdout|stderr|rules|ruleset|payload|lines|data)$/.test(k)) return wrap(r.freeText(v));
  const a = addresses(r, v);
  if (a !== undefined) return wrap(a);
  if (harmless(v)) return raw;
  // An interface name where the key says so (detectLocal.interfaceNamePrefix: veth).
  if (/interface|bridge|iface|device|dev$/.test(k) && /^[a-z][a-z0-9.+_-]{0,14}$/.test(v)) return raw;
  // kube-proxy's own paths (its socket, its config) name nothing of the cluster.
  if (/^\/(var\/lib\/kube-proxy|proc\/sys|run\/xtables\.lock|lib\/modules)(\/[\w.-]*)*$/.test(v)) return raw;
  return wrap(r.opaque(v));
}

function hostOrAddress(r: Redactor, v: string): string {
  const a = addresses(r, v);
  if (a !== undefined) return a;
  r.addHostname(v);
  return r.name('host', v);
}

// ---------------------------------------------------------------------------------------------
// kube-proxy configuration (ConfigMap YAML, the bare file, the flags form)

/** Mapping keys kept as they are: KubeProxyConfiguration's and Kubernetes' own field names. */
const CONFIG_KEY = /^([a-z][A-Za-z0-9]*|config\.conf|kubeconfig\.conf|[A-Z][A-Za-z0-9]*)$/;

function configLine(r: Redactor, line: string): string {
  if (/^\s*$/.test(line) || /^\s*(---|\.\.\.)\s*$/.test(line)) return line;
  const comment = /^(\s*)#/.exec(line);
  if (comment) return `${comment[1]}#`;
  if (/(^|\s)--?[a-z][a-z0-9-]*=/.test(line) || /^\s*--[a-z]/.test(line)) return flagsLine(r, line);
  const kv = /^(\s*(?:-\s+)?)("[^"]*"|'[^']*'|[^\s#'"][^:#]*?):(?:(\s+)(.*?))?(\s*(?:#.*)?)$/.exec(line);
  if (kv) {
    const keyText = kv[2].replace(/^["']|["']$/g, '');
    const key = CONFIG_KEY.test(keyText) || keyText === 'apiVersion' ? kv[2] : r.name('label', keyText);
    const rest = kv[4] ?? '';
    let v = rest;
    if (rest === '' || /^[|>][-+]?\d*$/.test(rest)) v = rest;
    else if (keyText === 'apiVersion' && /^[a-z0-9.]*\/?v\d\w*$/.test(rest)) v = rest;
    else if (/^\[.*\]$/.test(rest)) v = `[${rest.slice(1, -1).split(',').map((x) => value(r, keyText, x.trim())).join(', ')}]`;
    else v = value(r, keyText, rest);
    return `${kv[1]}${key}:${kv[3] ?? ''}${v}${kv[5].trimStart().startsWith('#') ? '' : kv[5]}`;
  }
  const item = /^(\s*-\s+)(.*?)\s*$/.exec(line);
  if (item) return `${item[1]}${value(r, '', item[2])}`;
  // Anything else (a JSON blob under an annotation, a kubeconfig line, prose): not read by kpx; replaced.
  const indent = /^\s*/.exec(line)![0];
  return indent + r.opaque(line.trim());
}

/** `--name=value` flags (a ps line, a unit file, an args list): each value by its flag; other words as free text. */
function flagsLine(r: Redactor, line: string): string {
  return line.replace(/(--?)([a-z][a-z0-9-]*)=("[^"]*"|'[^']*'|[^\s"',\]]*)|(\S+)/g, (m, dash: string | undefined, name: string | undefined, v: string | undefined, word: string | undefined) => {
    if (word !== undefined) return /^[-\w./:=[\]"',]*$/.test(word) && (harmless(word) || /^(-|\[|\]|args:|command:|ExecStart=\S*kube-proxy|\/usr\/local\/bin\/kube-proxy|\/usr\/bin\/kube-proxy|kube-proxy)$/.test(word)) ? word : r.freeText(word);
    return `${dash}${name}=${value(r, name!, v!)}`;
  });
}

// ---------------------------------------------------------------------------------------------
// kube-proxy logs (klog, journald, docker JSON, kubectl --prefix, logrus)

const SYSLOG = /^(\s*(?:[A-Z][a-z]{2}\s+\d{1,2} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+)\s)(\S+)(\s[\w./-]+(?:\[\d+\])?:)/;
const PREFIX = /^\[pod\/([^/\]\s]+)\/([^\]\s]+)\]/;
const PAIR = /(^|\s)([A-Za-z_][\w.-]*)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|[^\s"]+)/g;

function logLine(r: Redactor, line: string): string {
  if (/^\s*\{/.test(line)) {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (o && typeof o === 'object' && !Array.isArray(o)) return JSON.stringify(logJson(r, o));
    } catch {
      // not one JSON object: a line like any other
    }
  }
  let head = '';
  let rest = line;
  const sys = SYSLOG.exec(rest);
  if (sys) {
    r.addHostname(sys[2]);
    head += sys[1] + r.name('host', sys[2]) + sys[3];
    rest = rest.slice(sys[0].length);
  }
  const pre = PREFIX.exec(rest);
  if (pre) {
    head += `[pod/${r.name('pod', pre[1])}/${pre[2] === 'kube-proxy' ? pre[2] : r.name('name', pre[2])}]`;
    rest = rest.slice(pre[0].length);
  }
  // Pairs by key, the message and everything else as free text.
  const parts: string[] = [];
  let at = 0;
  for (const m of rest.matchAll(PAIR)) {
    parts.push(r.freeText(rest.slice(at, m.index)), m[1], `${m[2]}=${value(r, m[2], m[3])}`);
    at = m.index + m[0].length;
  }
  parts.push(r.freeText(rest.slice(at)));
  return head + parts.join('');
}

/** A JSON log record (docker's `{"log": …}`, a structured logger's fields): the log line as a line, fields by key. */
function logJson(r: Redactor, o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    const key = CONFIG_KEY.test(k) ? k : r.name('label', k);
    if (typeof v === 'string') out[key] = k === 'log' ? perLine(v, (l) => logLine(r, l)) : k === 'msg' || k === 'message' ? r.freeText(v) : /^(time|ts|stream|level|severity|caller|logger)$/.test(k) ? r.text(v) : value(r, k, v);
    else if (v && typeof v === 'object') out[key] = Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? value(r, k, x) : x)) : logJson(r, v as Record<string, unknown>);
    else out[key] = v;
  }
  return out;
}
