/**
 * kube-proxy log records → typed events (src/model/kube-proxy.ts). The messages matched here are
 * kube-proxy's own (cmd/kube-proxy/app/server*.go, pkg/proxy/{iptables,ipvs,nftables}/proxier.go,
 * pkg/proxy/healthcheck, pkg/proxy/conntrack), in their printf (≤1.21) and structured (≥1.22)
 * wordings. Embedded iptables-restore payloads are read with the iptables-save extractor, numbered
 * as iptables-restore numbers them (the payload's own lines).
 */
import { parseKubeProxyLog, type BodyLine, type LogRecord } from '../../grammars/kube-proxy-log/index.js';
import { splitInput } from '../../grammars/common/text.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';
import type { KubeProxyEvent, KubeProxyLog, KubeProxyModeName, LogPlace, NftErrorEcho, RestorePayload } from '../model/kube-proxy.js';
import { extractIptablesSave } from './iptables-save.js';
import { readEchoedCommand } from './nft-echo.js';

const PAYLOAD_LINE = /^\s*(\*[a-z]+\s*$|:[^\s]+ \S+ \[\d+:\d+\]|-[AIDNXFPZR] |COMMIT\s*$|#)/;
const PAYLOAD_KEYS = new Set(['rules', 'ruleset', 'data', 'payload', 'lines']);

function placeOf(r: LogRecord, file: string, raw: readonly string[]): LogPlace {
  return {
    file,
    line: r.line,
    endLine: r.endLine,
    text: raw[r.line - 1] ?? '',
    time: r.time,
    ...(r.wallTime !== undefined ? { wallTime: r.wallTime } : {}),
    level: r.level,
    ...(r.envelope.pid !== undefined ? { pid: r.envelope.pid } : r.thread !== undefined ? { pid: r.thread } : {}),
  };
}

const pair = (r: LogRecord, key: string) => r.pairs.find((p) => p.key === key);

/** The record's whole text: message, pairs and continuation lines (what the matchers look at). */
function fullText(r: LogRecord): string {
  const parts = [r.msg, ...r.pairs.map((p) => `${p.key}=${p.value}`), ...r.continuation.map((c) => c.text)];
  return parts.join('\n');
}

/** What went wrong, as the record says it: the err pair, else the free text after the message's first colon. */
function errorText(r: LogRecord, after?: RegExp): string {
  const err = pair(r, 'err') ?? pair(r, 'error');
  if (err) return err.value.trim();
  let msg = r.msg;
  if (after) {
    const m = after.exec(msg);
    if (m) msg = msg.slice(m.index + m[0].length);
  }
  return [msg, ...r.continuation.map((c) => c.text)].join('\n').trim();
}

function toolOf(text: string): { tool: string; family?: 4 | 6 } {
  const m = /\b(ip6?tables-restore|iptables-legacy-restore|ip6tables-legacy-restore|nft|ipset)\b/.exec(text);
  const tool = m ? m[1] : 'iptables-restore';
  return tool.startsWith('ip6') ? { tool, family: 6 } : tool.startsWith('iptables') ? { tool, family: 4 } : { tool };
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

/** `/dev/stdin:120:31-44: Error: …` followed by the command and the caret line (read with the nft grammar: nft-echo.ts). */
export function nftEcho(lines: readonly BodyLine[]): NftErrorEcho | undefined {
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(\S*?):(\d+):(\d+)(?:-(\d+))?: Error: (.*)$/.exec(lines[i].text);
    if (!m) continue;
    const from = Number(m[3]);
    const to = m[4] ? Number(m[4]) : from;
    const command = lines[i + 1]?.text;
    const caret = lines[i + 2]?.text;
    const echo: { -readonly [K in keyof NftErrorEcho]: NftErrorEcho[K] } = { line: Number(m[2]), columns: { from, to }, message: m[5], fileLine: lines[i].line };
    if (command !== undefined && caret !== undefined && /^\s*\^+~*\s*$/.test(caret)) {
      echo.command = command;
      echo.underlined = command.slice(from - 1, to);
      return { ...echo, ...readEchoedCommand(command, from) };
    }
    return echo;
  }
  return undefined;
}

/** Lines of an output block, or of the message and its continuation. */
function outputLines(r: LogRecord): BodyLine[] {
  const err = pair(r, 'err') ?? pair(r, 'error');
  if (err?.lines) return [...err.lines];
  if (err) return err.value.split('\n').map((text) => ({ line: r.line, column: 0, text }));
  return [{ line: r.line, column: r.msgColumn, text: r.msg }, ...r.continuation];
}

interface PayloadSource {
  readonly lines: readonly BodyLine[];
}

/** A logged payload's lines, if this record holds one. */
function payloadSource(r: LogRecord): PayloadSource | undefined {
  for (const p of r.pairs) {
    if (!PAYLOAD_KEYS.has(p.key)) continue;
    if (p.lines && p.lines.some((l) => PAYLOAD_LINE.test(l.text) || /^\s*\d+: /.test(l.text))) return { lines: p.lines };
    // ExtractLines() printed with %v: [{Line:10 Data:-A …} {Line:11 Data:…}]
    if (/\{Line:\d+ Data:/.test(p.value)) {
      const lines: BodyLine[] = [];
      for (const m of p.value.matchAll(/\{Line:(\d+) Data:(.*?)\}(?= \{Line:|\]$|$)/g)) lines.push({ line: r.line, column: 0, text: `${m[1]}: ${m[2]}` });
      return { lines };
    }
  }
  const m = /^Restoring iptables rules:?\s?(.*)$/.exec(r.msg);
  if (m && !r.structured) {
    const first: BodyLine[] = m[1].trim() ? [{ line: r.line, column: r.msgColumn ? r.msgColumn + r.msg.length - m[1].length : 0, text: m[1] }] : [];
    return { lines: [...first, ...r.continuation] };
  }
  return undefined;
}

function readPayload(src: PayloadSource, at: LogPlace, file: string, diagnostics: Diagnostic[]): RestorePayload | undefined {
  let lines = src.lines;
  // Trailing blank lines of the block are not part of what was restored.
  while (lines.length && lines[lines.length - 1].text.trim() === '') lines = lines.slice(0, -1);
  if (!lines.length) return undefined;
  const numbered = lines.every((l) => l.text.trim() === '' || /^\s*\d+: /.test(l.text));
  const texts: string[] = [];
  const fileLines: number[] = [];
  if (numbered) {
    // An excerpt around a failure (`10: -A KUBE-…`): keep each line at its own number, blanks between.
    for (const l of lines) {
      const m = /^\s*(\d+): ?(.*)$/.exec(l.text);
      if (!m) continue;
      const n = Number(m[1]);
      if (n < 1 || n > 1_000_000) continue;
      while (texts.length < n) {
        texts.push('');
        fileLines.push(l.line);
      }
      texts[n - 1] = m[2];
      fileLines[n - 1] = l.line;
    }
  } else {
    for (const l of lines) {
      texts.push(l.text);
      fileLines.push(l.line);
    }
  }
  const parsed = extractIptablesSave(texts.join('\n') + '\n', file);
  for (const d of parsed.diagnostics) {
    if (d.severity === 'info') continue;
    // What kube-proxy tried to restore may be wrong: that is what the log is about, not a reading error.
    diagnostics.push(
      diagnostic('warning', `payload/${d.code}`, `in the logged iptables-restore payload (its line ${d.line}): ${d.message}`, file, fileLines[d.line - 1] ?? at.line, 1, {
        ...(d.expected !== undefined ? { expected: d.expected } : {}),
        ...(d.found !== undefined ? { found: d.found } : {}),
      }),
    );
  }
  return { file, ruleset: parsed.data, fileLines, lines: texts, excerpt: numbered, family: parsed.data.family, at };
}

function proxierMode(text: string): KubeProxyModeName | undefined {
  const m = /Using (iptables|ipvs|nftables|userspace|kernelspace) [Pp]rox(?:ier|y)\b/.exec(text) ?? /Creating dualStackProxier for (iptables|ipvs|nftables)/.exec(text);
  return m ? (m[1] as KubeProxyModeName) : undefined;
}

function familiesOf(r: LogRecord, text: string): (4 | 6)[] {
  if (/dualStack|dual-stack|dual stack/i.test(text)) return [4, 6];
  const f = pair(r, 'ipFamily')?.value ?? /ipFamily[=:]"?(IPv[46])/.exec(text)?.[1];
  return f === 'IPv4' ? [4] : f === 'IPv6' ? [6] : [];
}

const MODULE_FAIL = /modprobe|kernel module|required kernel modules are not loaded|could not insert|Module \S+ not found/i;
const CONFIG_WARN = /strict decoding|unknown field|lenient decoding|clusterCIDR not specified|no cluster CIDR|cluster CIDR (is )?not (set|specified)|detect-local-mode|detectLocalMode|Flag proxy-mode|configuration may be incomplete|nodePortAddresses|node-port-addresses|deprecated|Kube-proxy configuration|invalid configuration|unknown proxy mode/i;

function classify(r: LogRecord, at: LogPlace, events: KubeProxyEvent[]): void {
  const text = fullText(r);
  const mode = proxierMode(r.msg);
  if (mode) return void events.push({ kind: 'proxier', mode, families: familiesOf(r, text), at });
  if (/Can't use (the )?ipvs proxier|can't determine whether to use ipvs prox/i.test(r.msg)) {
    // "Can't use ipvs proxier, trying iptables proxier" (≤1.9) gives no reason; newer versions put it in err.
    const reason = errorText(r, /prox(?:ier|y)[,:]?\s*/i).replace(/^trying \w+ prox(?:ier|y)\.?$/i, '');
    events.push({ kind: 'mode-fallback', requested: 'ipvs', reason, at });
    return;
  }
  const flag = /Flag proxy-mode="([^"]*)" unknown, assuming (\w+) proxy/.exec(r.msg);
  if (flag) {
    events.push({ kind: 'config-warning', text: r.msg, field: 'mode', at });
    return;
  }
  const retry = /Sync failed; retrying in (\S+)/.exec(r.msg) ?? (/^Sync failed/.test(r.msg) ? [r.msg, pair(r, 'retryingTime')?.value ?? ''] : null);
  if (retry) return void events.push({ kind: 'sync-retry', ...(retry[1] ? { retryIn: retry[1] } : {}), at });
  if (/Failed to execute (ip6?tables-restore|iptables-restore|nft)|nftables sync failed|Failed to run nft|Failed to (sync|apply|restore) (iptables|nftables|ipset)|Failed to execute ipset|ipset restore failed/i.test(r.msg)) {
    const out = outputLines(r);
    const output = (pair(r, 'err') ?? pair(r, 'error'))?.value ?? errorText(r, /Failed to execute [\w-]+:?\s*/);
    const { tool, family } = toolOf(`${output}\n${r.msg}`);
    const status = /exit status (\d+)/.exec(output);
    const failingLine = failingLineOf(output);
    const nft = nftEcho(out);
    events.push({
      kind: 'sync-failed',
      tool: nft && tool === 'iptables-restore' && !/iptables/.test(output + r.msg) ? 'nft' : tool,
      ...(family !== undefined ? { family } : {}),
      ...(status ? { exitStatus: Number(status[1]) } : {}),
      ...(failingLine !== undefined ? { failingLine } : {}),
      output,
      ...(nft ? { nft } : {}),
      at,
    });
    return;
  }
  if (/Closing local port/.test(r.msg)) {
    const desc = pair(r, 'port')?.value ?? r.msg.replace(/^.*?Closing local port:?\s*/, '');
    const m = /nodePort for ([^"\s]+?)(?::([-\w]*))?"? \(([^)]*?):(\d+)\/(\w+?)(?:4|6)?\)/.exec(desc);
    events.push({ kind: 'port-closed', description: desc, ...(m ? { service: `${m[1]}:${m[2] ?? ''}`, port: Number(m[4]), protocol: m[5] } : {}), at });
    return;
  }
  if (MODULE_FAIL.test(text) && (r.level !== 'I' || /fail|error|not loaded|not found/i.test(text))) {
    const mod = /module[= ]"?([a-z_0-9]+)"?|\binsert '([a-z_0-9]+)'|not loaded: \[([^\]]+)\]|Module ([a-z_0-9]+) not found/i.exec(text);
    const name = mod ? (mod[1] ?? mod[2] ?? mod[3] ?? mod[4]) : undefined;
    events.push({ kind: 'module-load-failed', ...(name ? { module: name } : {}), reason: errorText(r) || r.msg, at });
    return;
  }
  if (/conntrack/i.test(r.msg) && /delet|clear|flush/i.test(r.msg) && !/fail/i.test(r.msg)) return void events.push({ kind: 'conntrack-cleared', text: text.split('\n')[0], at });
  if ((r.level === 'W' || r.level === 'E' || r.level === 'F') && CONFIG_WARN.test(text)) {
    const field = (/unknown field "([^"]+)"/.exec(text) ?? /found unknown field: (\w+)/.exec(text))?.[1] ?? (/clusterCIDR|cluster CIDR/i.test(text) ? 'clusterCIDR' : /nodePortAddresses|node-port-addresses/i.test(text) ? 'nodePortAddresses' : undefined);
    events.push({ kind: 'config-warning', text: text.replace(/\s*\n\s*/g, ' ').trim(), ...(field ? { field } : {}), at });
  }
}

/** Which payload rule the tool rejected (see the `rejected` field of a sync-failed event). */
export function rejectedRule(payload: RestorePayload, failingLine: number, output: string): { line: number; how: 'named' | 'missing-chain' | 'unknown-option'; name?: string } | undefined {
  const named = payload.lines[failingLine - 1];
  if (named === undefined) return undefined;
  if (/^\s*-[AI] /.test(named)) return { line: failingLine, how: 'named' };
  if (!/^\s*COMMIT\s*$/.test(named)) return undefined;
  let start = failingLine - 1;
  while (start > 0 && !/^\s*\*/.test(payload.lines[start - 1])) start--;
  const rules = payload.lines.slice(start, failingLine - 1).map((text, i) => ({ text, line: start + i + 1 })).filter((l) => /^\s*-[AI] /.test(l.text));
  const chain = (/Chain '([^']+)' does not exist/.exec(output) ?? /Couldn't load target `([^']+)'/.exec(output) ?? /Bad argument `([^']+)'/.exec(output))?.[1];
  if (chain) {
    const esc = chain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const hit = rules.find((l) => new RegExp(`\\s-[jg] ${esc}(\\s|$)`).test(l.text));
    if (hit) return { line: hit.line, how: 'missing-chain', name: chain };
  }
  const option = /unknown option "([^"]+)"/.exec(output)?.[1];
  if (option) {
    const hit = rules.find((l) => l.text.split(/\s+/).includes(option));
    if (hit) return { line: hit.line, how: 'unknown-option', name: option };
  }
  return undefined;
}

export function extractKubeProxyLog(text: string, file: string): ParsedInput<KubeProxyLog> {
  const syntax = parseKubeProxyLog(text);
  const raw = splitInput(text).lines;
  const diagnostics: Diagnostic[] = [];
  const events: KubeProxyEvent[] = [];
  const payloads: RestorePayload[] = [];
  const lastPayload = new Map<number | undefined, RestorePayload>();

  for (const o of syntax.other) {
    switch (o.kind) {
      case 'noise':
        diagnostics.push(diagnostic('info', 'input/noise', `skipped ${o.noise} line: ${printable(o.text.trim())}`, file, o.line, 1));
        break;
      case 'orphan':
        diagnostics.push(diagnostic('info', 'input/before-first-entry', `a line before the first log entry (the paste starts mid-message): ${printable(o.text.trim())}`, file, o.line, Math.max(1, o.column)));
        break;
      case 'bad-json':
        diagnostics.push(diagnostic('error', 'parse/bad-json', `cannot read this docker json-file line: ${printable(o.message)}`, file, o.line, 1, { expected: '{"log":"…","stream":"…","time":"…"}', found: printable(o.text.trim()) }));
        break;
      case 'unterminated-block':
        diagnostics.push(diagnostic('warning', 'parse/unterminated-block', `the \`${printable(o.key)}=<\` block is not closed with \` >\` (the paste ends inside it)`, file, o.line, 1));
        break;
    }
  }

  for (const r of syntax.records) {
    const at = placeOf(r, file, raw);
    const src = payloadSource(r);
    const payload = src ? readPayload(src, at, file, diagnostics) : undefined;
    if (payload) {
      payloads.push(payload);
      lastPayload.set(at.pid, payload);
    }
    const before = events.length;
    classify(r, at, events);
    // A failure is about the payload logged with it, else the last one this process logged before it.
    for (let i = before; i < events.length; i++) {
      const e = events[i];
      if (e.kind !== 'sync-failed') continue;
      const p = payload ?? lastPayload.get(at.pid);
      if (p && (e.tool.includes('tables') || e.tool === 'iptables-restore') && (e.family === undefined || e.family === p.family || p.excerpt)) {
        const rejected = e.failingLine !== undefined ? rejectedRule(p, e.failingLine, e.output) : undefined;
        events[i] = { ...e, payload: p, ...(rejected ? { rejected } : {}) };
      }
    }
  }
  diagnostics.sort((a, b) => a.line - b.line);
  const failures = events.filter((e) => e.kind === 'sync-failed').length;
  return {
    format: 'kube-proxy-log',
    file,
    data: { file, events, payloads, records: syntax.records.length },
    diagnostics,
    counts: { entries: syntax.records.length, events: events.length, 'sync failures': failures, payloads: payloads.length },
  };
}

export const kubeProxyLogParser: FormatParser<KubeProxyLog> = { id: 'kube-proxy-log', parse: (text, file) => extractKubeProxyLog(text, file) };
