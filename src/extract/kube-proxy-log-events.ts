/**
 * One kube-proxy log record → its typed event (src/model/kube-proxy.ts), by the messages kube-proxy
 * really logs, in their printf (≤1.21) and structured (≥1.22) wordings. Where each comes from:
 *
 * - cmd/kube-proxy/app/server_others.go (≤1.26), server_linux.go and server.go (≥1.27): "Using
 *   <mode> Proxier", "Unknown proxy mode %q, assuming iptables proxy", "Can't use ipvs proxier,
 *   trying iptables proxier", "can't determine whether to use ipvs proxy, trying iptables proxier:
 *   %v", "can't use the IPVS proxier: %v" (≥1.26: fatal, no fallback, kubernetes#111806), "can't
 *   determine this node's IP, assuming 127.0.0.1; if this is incorrect, please set the
 *   --bind-address flag" (≥1.28: "assuming loopback"), "Error running ProxyServer".
 * - pkg/util/node (≤1.2x) and cmd/kube-proxy/app/server.go: "Failed to retrieve node info: %v"
 *   (structured: `"Failed to retrieve node info" err=…`), "Can't get Node %q, assuming iptables
 *   proxy, err: %v" (≤1.8), "unable to get node IP for hostname %s" (1.16, fatal).
 * - pkg/proxy/iptables/proxier.go and pkg/proxy/ipvs/proxier.go: "invalid nodeIP, initializing
 *   kube-proxy with 127.0.0.1 as nodeIP" (≤1.1x; "initialize" before 1.7), "Failed to execute
 *   iptables-restore", "Failed to ensure chain exists", "Failed to ensure chain jumps" (≥1.22;
 *   earlier "Failed to ensure that %s chain %s jumps to %s: %v"), "Sync failed; retrying in %s"
 *   (structured "Sync failed" retryingTime=…), "missing br-netfilter module or unset sysctl
 *   br-nf-call-iptables; proxy may not work as intended" (≤1.2x), "Failed to load kernel module %v
 *   with modprobe".
 * - pkg/proxy/nftables/proxier.go (≥1.29): "nftables sync failed" (the nft tool; the family is the
 *   proxier's `ipFamily` pair from 1.31 on, absent in 1.29–1.30), "Failed to list nftables
 *   chains|sets|elements".
 * - pkg/util/conntrack / pkg/proxy/conntrack (≤1.28, which ran the conntrack tool): "conntrack
 *   returned error: error looking for path of conntrack: …" ("conntrack return with error" ≤1.5),
 *   "Failed to delete … connections" err="… error looking for path of conntrack …".
 * - client-go's reflector in kube-proxy: "Failed to list *v1.Service: …", "failed to list …".
 */
import type { BodyLine, LogRecord } from '../../grammars/kube-proxy-log/index.js';
import type { KubeProxyEvent, KubeProxyModeName, LogPlace } from '../model/kube-proxy.js';
import { nftEcho } from './kube-proxy-log-nft.js';

const pair = (r: LogRecord, key: string) => r.pairs.find((p) => p.key === key);

/** Continuation lines as text: a line the terminal wrapped goes on without a line break. */
function joinLines(lines: readonly BodyLine[], first = ''): string {
  let out = first;
  lines.forEach((l, i) => (out += (l.wrapped || (i === 0 && first === '') ? '' : '\n') + l.text));
  return out;
}

/** The message with the remainder the terminal wrapped onto the next lines put back. */
const message = (r: LogRecord) => joinLines(r.continuation.slice(0, leadingWrapped(r)), r.msg);

/** How many continuation lines right after the header are its wrapped remainder. */
function leadingWrapped(r: LogRecord): number {
  let n = 0;
  while (n < r.continuation.length && r.continuation[n].wrapped) n++;
  return n;
}

/** The record's whole text: message, pairs and continuation lines. */
export function fullText(r: LogRecord): string {
  const rest = r.continuation.slice(leadingWrapped(r));
  return [message(r), ...r.pairs.map((p) => `${p.key}=${p.value}`), ...(rest.length ? [joinLines(rest)] : [])].join('\n');
}

/** What went wrong, as the record says it: the err pair, else the free text after the message's first colon. */
export function errorText(r: LogRecord, after?: RegExp): string {
  const err = pair(r, 'err') ?? pair(r, 'error');
  if (err) return err.value.trim();
  let msg = message(r);
  if (after) {
    const m = after.exec(msg);
    if (m) msg = msg.slice(m.index + m[0].length);
  }
  const rest = r.continuation.slice(leadingWrapped(r));
  return (rest.length ? `${msg}\n${joinLines(rest)}` : msg).trim();
}

/** Lines of an output block, or of the message and its continuation. */
export function outputLines(r: LogRecord): BodyLine[] {
  const err = pair(r, 'err') ?? pair(r, 'error');
  if (err?.lines) return [...err.lines];
  if (err) return err.value.split('\n').map((text) => ({ line: r.line, column: 0, text }));
  return [{ line: r.line, column: r.msgColumn, text: r.msg }, ...r.continuation];
}

function toolOf(text: string): { tool: string; family?: 4 | 6 } {
  const m = /\b(ip6?tables-restore|iptables-legacy-restore|ip6tables-legacy-restore|ip6?tables|nft|ipset)\b/.exec(text);
  const tool = m ? m[1] : 'iptables-restore';
  return tool.startsWith('ip6') ? { tool, family: 6 } : tool.startsWith('iptables') ? { tool, family: 4 } : { tool };
}

/** The family a record names: the `ipFamily` pair kube-proxy's proxiers attach to their lines. */
export function familyOf(r: LogRecord): 4 | 6 | undefined {
  const f = pair(r, 'ipFamily')?.value ?? /\bipFamily[=:]"?(IPv[46])/.exec(r.msg)?.[1];
  return f === 'IPv4' ? 4 : f === 'IPv6' ? 6 : undefined;
}

function familiesOf(r: LogRecord, text: string): (4 | 6)[] {
  if (/dualStack|dual-stack|dual stack/i.test(text)) return [4, 6];
  const f = familyOf(r);
  return f ? [f] : [];
}

/** The payload line a restore tool names. */
export function failingLineOf(output: string): number | undefined {
  const m =
    /\bline (\d+) failed/.exec(output) ??
    /Error occurred at line: (\d+)/.exec(output) ??
    /\(nf_tables\)(?: [^:\n]*)?: line (\d+):/.exec(output) ??
    /restore[^:\n]*: line (\d+):/.exec(output) ??
    /^\S*?:(\d+):\d+(?:-\d+)?: Error:/m.exec(output);
  return m ? Number(m[1]) : undefined;
}

function proxierMode(text: string): KubeProxyModeName | undefined {
  const m = /Using (iptables|ipvs|nftables|userspace|kernelspace) [Pp]rox(?:ier|y)\b/.exec(text) ?? /Creating dualStackProxier for (iptables|ipvs|nftables)/i.exec(text);
  return m ? (m[1] as KubeProxyModeName) : undefined;
}

const MODULE_FAIL = /modprobe|kernel module|required kernel modules are not loaded|could not insert|Module \S+ not found/i;
const CONFIG_WARN = /strict decoding|unknown field|lenient decoding|clusterCIDR not specified|no cluster CIDR|cluster CIDR (is )?not (set|specified)|detect-local-mode|detectLocalMode|Flag proxy-mode|configuration may be incomplete|nodePortAddresses|node-port-addresses|deprecated|Kube-proxy configuration|invalid configuration/i;
const SYNC_TOOL_FAIL = /Failed to execute (ip6?tables-restore|iptables-restore|nft)|nftables sync failed|Failed to run nft|Failed to (sync|apply|restore) (iptables|nftables|ipset)|Failed to execute ipset|ipset restore failed/i;
/** The steps before the restore that make kube-proxy give up the sync (then "Sync failed"). */
const ENSURE_FAIL = /^Failed to ensure (?:that (\S+) )?chain (?:(\S+) )?(exists|jumps)|^Failed to ensure that (\S+) chain (\S+) (exists|jumps to (\S+?)):?/;

type Classifier = (r: LogRecord, at: LogPlace, text: string) => KubeProxyEvent | undefined;

const proxier: Classifier = (r, at, text) => {
  const mode = proxierMode(r.msg);
  return mode ? { kind: 'proxier', mode, families: familiesOf(r, text), at } : undefined;
};

const modeFallback: Classifier = (r, at) => {
  const msg = message(r);
  if (/Can't use (the )?ipvs proxier|can't determine whether to use ipvs prox/i.test(msg)) {
    // "Can't use ipvs proxier, trying iptables proxier" (≤1.9) gives no reason; newer versions put it in err or after the colon.
    const reason = errorText(r, /prox(?:ier|y)[,:]?\s*(?:trying \w+ prox(?:ier|y)[.:]?\s*)?/i).replace(/^trying \w+ prox(?:ier|y)\.?$/i, '');
    return { kind: 'mode-fallback', requested: 'ipvs', reason, at };
  }
  const unknown = /Unknown proxy mode "([^"]*)", assuming (\w+) proxy/i.exec(msg) ?? (/^Unknown proxy mode/i.test(msg) ? [msg, pair(r, 'proxyMode')?.value ?? ''] : null);
  // An empty mode is the default (iptables), which 1.1x–1.2x log as "unknown": nothing fell back.
  if (unknown && unknown[1] !== '') return { kind: 'mode-fallback', requested: 'unknown', reason: `unknown proxy mode "${unknown[1]}"`, at };
  return undefined;
};

const flagWarning: Classifier = (r, at) => (/Flag proxy-mode="([^"]*)" unknown, assuming (\w+) proxy|^Unknown proxy mode/i.test(message(r)) ? { kind: 'config-warning', text: message(r), field: 'mode', at } : undefined);

const syncRetry: Classifier = (r, at) => {
  const retry = /Sync failed; retrying in (\S+)/.exec(r.msg) ?? (/^Sync failed/.test(r.msg) ? [r.msg, pair(r, 'retryingTime')?.value ?? ''] : null);
  return retry ? { kind: 'sync-retry', ...(retry[1] ? { retryIn: retry[1] } : {}), at } : undefined;
};

const syncFailed: Classifier = (r, at) => {
  if (!SYNC_TOOL_FAIL.test(r.msg)) return undefined;
  const output = (pair(r, 'err') ?? pair(r, 'error'))?.value ?? errorText(r, /Failed to execute [\w-]+:?\s*/);
  const nftables = /nftables|\bnft\b/.test(r.msg);
  const named = toolOf(`${output}\n${r.msg}`);
  const nft = nftEcho(outputLines(r));
  const tool = nftables || (nft && named.tool === 'iptables-restore' && !/iptables/.test(output + r.msg)) ? 'nft' : named.tool;
  // The nft tool serves both families; its family is the proxier's ipFamily pair, when logged.
  const family = tool === 'nft' ? familyOf(r) : (named.family ?? familyOf(r));
  const status = /exit status (\d+)/.exec(output);
  const failingLine = failingLineOf(output);
  return {
    kind: 'sync-failed',
    tool,
    ...(family !== undefined ? { family } : {}),
    ...(status ? { exitStatus: Number(status[1]) } : {}),
    ...(failingLine !== undefined ? { failingLine } : {}),
    step: 'restore',
    output,
    ...(nft ? { nft } : {}),
    at,
  };
};

const ensureFailed: Classifier = (r, at) => {
  const m = ENSURE_FAIL.exec(message(r));
  if (!m) return undefined;
  const output = errorText(r, /jumps to \S+?:\s*|exists:\s*/);
  const named = toolOf(output);
  const jumps = (m[3] ?? m[6] ?? '').startsWith('jumps');
  const table = pair(r, 'table')?.value ?? m[1] ?? m[4];
  const chains = jumps
    ? { table, from: pair(r, 'srcChain')?.value ?? m[5], to: pair(r, 'dstChain')?.value ?? m[7] }
    : { table, chain: pair(r, 'chain')?.value ?? m[2] ?? m[5] };
  const status = /exit status (\d+)/.exec(output);
  const family = named.family ?? familyOf(r);
  const tool = /ip6?tables/.test(named.tool) ? named.tool.replace(/-restore$/, '') : 'iptables';
  return {
    kind: 'sync-failed',
    tool,
    ...(family !== undefined ? { family } : {}),
    ...(status ? { exitStatus: Number(status[1]) } : {}),
    step: jumps ? 'ensure-jump' : 'ensure-chain',
    chains: Object.fromEntries(Object.entries(chains).filter(([, v]) => v !== undefined)),
    output,
    at,
  };
};

const portClosed: Classifier = (r, at) => {
  if (!/Closing local port/.test(r.msg)) return undefined;
  const desc = pair(r, 'port')?.value ?? r.msg.replace(/^.*?Closing local port:?\s*/, '');
  const m = /nodePort for ([^"\s]+?)(?::([-\w]*))?"? \(([^)]*?):(\d+)\/(\w+?)(?:4|6)?\)/.exec(desc);
  return { kind: 'port-closed', description: desc, ...(m ? { service: `${m[1]}:${m[2] ?? ''}`, port: Number(m[4]), protocol: m[5] } : {}), at };
};

/** A Node name in `nodes "NAME" not found` (kube-apiserver's NotFound error). */
const NODE_NOT_FOUND = /nodes? \\?"([^"\\]+)\\?" not found/;

const nodeLookup: Classifier = (r, at, text) => {
  const msg = message(r);
  const m = /^Failed to retrieve node info/i.exec(msg) ?? /^Can't get Node "([^"]+)", assuming \w+ proxy/i.exec(msg) ?? /^unable to get node IP for hostname (\S+)/i.exec(msg);
  if (!m) return undefined;
  const reason = errorText(r, /^(?:Failed to retrieve node info|Can't get Node "[^"]+", assuming \w+ proxy(?:, err)?|unable to get node IP for hostname)[:,]?\s*/i);
  const notFound = NODE_NOT_FOUND.exec(text);
  const node = notFound?.[1] ?? m[1] ?? /\/nodes\/([^\s/":?]+)/.exec(reason)?.[1];
  return { kind: 'node-lookup-failed', ...(node ? { node } : {}), notFound: notFound !== null, apiError: API_ERROR.test(reason), reason: reason || msg, at };
};

const nodeIpFallback: Classifier = (r, at) => {
  const msg = message(r);
  const m = /invalid nodeIP, initiali[sz](?:e|ing) kube-proxy with ([\d.:a-f]+) as nodeIP/i.exec(msg) ?? /can't determine this node's IP, assuming (127\.0\.0\.1|loopback|::1)/i.exec(msg) ?? /unable to get node IP, assuming ([\d.:]+)/i.exec(msg);
  return m ? { kind: 'node-ip-fallback', ip: m[1] === 'loopback' ? '127.0.0.1' : m[1], at } : undefined;
};

/** An API request that did not get an answer (or was refused): the client-go error texts. */
const API_ERROR = /connection refused|i\/o timeout|no route to host|dial tcp|TLS handshake|\bEOF\b|Unauthorized|forbidden|x509|Get "?https?:/i;

const apiUnreachable: Classifier = (r, at, text) => {
  const m = /[Ff]ailed to (?:list|watch) \*?(?:v1|api|discovery\/v1|v1beta1)?\.?(\w+)/.exec(r.msg) ?? /^"?Failed to watch"?/.exec(r.msg);
  if (!m || !API_ERROR.test(text)) return undefined;
  return { kind: 'api-unreachable', ...(m[1] ? { resource: m[1] } : {}), reason: errorText(r, /[Ff]ailed to (?:list|watch) [^:]*:\s*/), at };
};

const hostMissing: Classifier = (r, at, text) => {
  if (/missing br-netfilter module or unset (?:sysctl )?br-nf-call-iptables/i.test(r.msg)) return { kind: 'host-missing', what: 'br-netfilter', text: r.msg, at };
  if (/error looking for path of conntrack|conntrack: executable file not found|conntrack.*not found in \$PATH/i.test(text)) return { kind: 'host-missing', what: 'conntrack-tool', text: errorText(r) || message(r), at };
  return undefined;
};

const nftListFailed: Classifier = (r, at) => {
  const m = /^Failed to list nftables (chains|sets|elements)/.exec(r.msg);
  if (!m) return undefined;
  const family = familyOf(r);
  return { kind: 'tool-failed', tool: 'nft', what: `list ${m[1]}`, output: errorText(r), ...(family ? { family } : {}), at };
};

const exited: Classifier = (r, at) => {
  if (/^(Error running ProxyServer|command failed)$/.test(r.msg) || (r.level === 'F' && r.format === 'klog')) return { kind: 'exited', reason: (errorText(r) || message(r)).replace(/\s*\n\s*/g, ' '), at };
  return undefined;
};

const moduleFailed: Classifier = (r, at, text) => {
  if (!MODULE_FAIL.test(text) || !(r.level !== 'I' || /fail|error|not loaded|not found/i.test(text))) return undefined;
  const mod = /module(?:Name)?[= ]"?([a-z_0-9]+)"?|\binsert '([a-z_0-9]+)'|not loaded: \[([^\]]+)\]|Module ([a-z_0-9]+) not found/i.exec(text);
  const name = mod ? (mod[1] ?? mod[2] ?? mod[3] ?? mod[4]) : undefined;
  return { kind: 'module-load-failed', ...(name ? { module: name } : {}), reason: errorText(r) || r.msg, at };
};

const conntrackCleared: Classifier = (r, at, text) => (/conntrack/i.test(r.msg) && /delet|clear|flush/i.test(r.msg) && !/fail/i.test(r.msg) ? { kind: 'conntrack-cleared', text: text.split('\n')[0], at } : undefined);

const configWarning: Classifier = (r, at, text) => {
  if (!((r.level === 'W' || r.level === 'E' || r.level === 'F') || /strict decoding|lenient decoding/i.test(text)) || !CONFIG_WARN.test(text)) return undefined;
  const field = (/unknown field \\?"([^"\\]+)\\?"/.exec(text) ?? /found unknown field: (\w+)/.exec(text))?.[1] ?? (/clusterCIDR|cluster CIDR/i.test(text) ? 'clusterCIDR' : /nodePortAddresses|node-port-addresses/i.test(text) ? 'nodePortAddresses' : undefined);
  return { kind: 'config-warning', text: text.replace(/\s*\n\s*/g, ' ').trim(), ...(field ? { field } : {}), at };
};

/** In order: the first that recognises the record types it. */
const CLASSIFIERS: readonly Classifier[] = [
  proxier,
  modeFallback,
  flagWarning,
  syncRetry,
  syncFailed,
  ensureFailed,
  portClosed,
  nodeLookup,
  nodeIpFallback,
  hostMissing,
  nftListFailed,
  apiUnreachable,
  exited,
  moduleFailed,
  conntrackCleared,
  configWarning,
];

/** The record's event; a fatal klog line (kube-proxy exits after it) is also an `exited` event. */
export function classifyRecord(r: LogRecord, at: LogPlace): KubeProxyEvent[] {
  const text = fullText(r);
  for (const c of CLASSIFIERS) {
    const e = c(r, at, text);
    if (!e) continue;
    if (e.kind !== 'exited' && r.level === 'F' && r.format === 'klog') return [e, exited(r, at, text)!];
    return [e];
  }
  return [];
}

/** systemd's own journal line about the unit → its state, when it says one. */
export function unitState(text: string, at: LogPlace): KubeProxyEvent | undefined {
  if (!/kube-proxy|\.service/.test(text)) return undefined;
  const state = /main process exited|Main process exited/i.test(text)
    ? 'exited'
    : /entered failed state|Failed with result|failed\.$/i.test(text)
      ? 'failed'
      : /start request repeated too quickly|refusing to start/i.test(text)
        ? 'start-refused'
        : /^Starting |^Started /.test(text)
          ? 'starting'
          : /^Stopping |^Stopped /.test(text)
            ? 'stopping'
            : undefined;
  return state ? { kind: 'unit-state', state, text, at } : undefined;
}
