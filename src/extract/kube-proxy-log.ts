/**
 * kube-proxy log records → typed events (src/model/kube-proxy.ts). The messages matched here are
 * kube-proxy's own (cmd/kube-proxy/app/server*.go, pkg/proxy/{iptables,ipvs,nftables}/proxier.go,
 * pkg/proxy/healthcheck, pkg/proxy/conntrack), in their printf (≤1.21) and structured (≥1.22)
 * wordings. Embedded iptables-restore payloads are read with the iptables-save extractor, numbered
 * as iptables-restore numbers them (the payload's own lines).
 */
import { parseKubeProxyLog, type BodyLine, type LogRecord, type OtherLine } from '../../grammars/kube-proxy-log/index.js';
import { splitInput } from '../../grammars/common/text.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';
import type { KubeProxyEvent, KubeProxyLog, LogPlace, RestorePayload } from '../model/kube-proxy.js';
import { extractIptablesSave } from './iptables-save.js';
import { classifyRecord, unitState } from './kube-proxy-log-events.js';

export { failingLineOf } from './kube-proxy-log-events.js';
export { nftEcho } from './kube-proxy-log-nft.js';

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
    ...(r.cutAt !== undefined ? { cutAt: r.cutAt } : {}),
  };
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

/**
 * Source files only other components have. k3s and rke2 run kube-proxy, the kubelet, the
 * controller-manager, the scheduler and the API server in one process whose journal interleaves
 * their klog lines: those lines are read as another component's (noise), never as kube-proxy's.
 * Files kube-proxy shares with them (server.go, reflector.go, shared_informer.go, config.go…) stay
 * kube-proxy's: what kpx types from them are kube-proxy's own messages.
 */
const OTHER_COMPONENT_SOURCE =
  /^(?:kubelet\w*|kuberuntime_\w+|pod_workers|controllermanager|controller|\w+_controller|controller_utils|scheduler|schedule_one|secure_serving|tlsconfig|dynamic_\w+_content|configmap_cafile_content|storage_scheduling|status_manager|cpu_manager|memory_manager|state_mem|policy_none|setters|volume_manager|reconciler\w*|csi_\w+|docker_service|hostport_manager|cni|cri_stats_provider|eviction_manager|container_manager_\w+|daemon_controller|stateful_set|garbagecollector|certificate_\w+|leaderelection|lease\w*|apiserver|genericapiserver|handler|alloc\w*|range_allocator|node_lifecycle_controller|etcd\w*)\.go:\d+$/;

function writtenByOther(r: LogRecord): boolean {
  if (r.format === 'logrus' && !r.structured && /^\d+$/.test(r.time)) return true; // k3s' own `INFO[0010]` lines
  return r.source !== undefined && OTHER_COMPONENT_SOURCE.test(r.source);
}

function otherLineDiagnostic(o: OtherLine, file: string): Diagnostic | undefined {
  switch (o.kind) {
    case 'noise':
      if (o.noise === 'other-process') return diagnostic('info', 'input/other-program', `a line ${printable(o.ident ?? 'another program')} wrote into the same journal (not kube-proxy's): ${printable(o.text.trim(), 160)}`, file, o.line, 1);
      if (o.noise === 'systemd-status') return diagnostic('info', 'input/noise', `systemctl status header: ${printable(o.text.trim())}`, file, o.line, 1);
      return diagnostic('info', 'input/noise', `skipped ${o.noise} line: ${printable(o.text.trim())}`, file, o.line, 1);
    case 'unit':
      return diagnostic('info', 'input/systemd', `systemd about the unit: ${printable(o.text.trim(), 160)}`, file, o.line, 1);
    case 'orphan':
      return diagnostic('info', 'input/before-first-entry', `a line before the first log entry (the paste starts mid-message): ${printable(o.text.trim())}`, file, o.line, Math.max(1, o.column));
    case 'bad-json':
      return diagnostic('error', 'parse/bad-json', `cannot read this docker json-file line: ${printable(o.message)}`, file, o.line, 1, { expected: '{"log":"…","stream":"…","time":"…"}', found: printable(o.text.trim()) });
    case 'unterminated-block':
      return diagnostic('warning', 'parse/unterminated-block', `the \`${printable(o.key)}=<\` block is not closed with \` >\` (the paste ends inside it)`, file, o.line, 1);
  }
}

/** systemd's lines about kube-proxy's unit → unit-state events. */
function unitEvents(other: readonly OtherLine[], file: string, raw: readonly string[]): KubeProxyEvent[] {
  const out: KubeProxyEvent[] = [];
  for (const o of other) {
    if (o.kind !== 'unit') continue;
    const at: LogPlace = { file, line: o.line, endLine: o.line, text: raw[o.line - 1] ?? '', time: o.time ?? '', level: 'I' };
    const e = unitState(o.text, at);
    if (e) out.push(e);
  }
  return out;
}

/** A failure is about the payload logged with it, else the last one this process logged before it. */
function withPayload(e: KubeProxyEvent, payload: RestorePayload | undefined): KubeProxyEvent {
  if (e.kind !== 'sync-failed' || !payload || e.step !== 'restore') return e;
  if (!(e.tool.includes('tables') || e.tool === 'iptables-restore') || !(e.family === undefined || e.family === payload.family || payload.excerpt)) return e;
  const rejected = e.failingLine !== undefined ? rejectedRule(payload, e.failingLine, e.output) : undefined;
  return { ...e, payload, ...(rejected ? { rejected } : {}) };
}

export function extractKubeProxyLog(text: string, file: string): ParsedInput<KubeProxyLog> {
  const syntax = parseKubeProxyLog(text);
  const raw = splitInput(text).lines;
  const diagnostics: Diagnostic[] = [];
  const events: KubeProxyEvent[] = [];
  const payloads: RestorePayload[] = [];
  const lastPayload = new Map<number | undefined, RestorePayload>();
  let others = 0;

  for (const o of syntax.other) {
    const d = otherLineDiagnostic(o, file);
    if (d) diagnostics.push(d);
  }
  for (const r of syntax.records) {
    if (writtenByOther(r)) {
      others++;
      diagnostics.push(diagnostic('info', 'input/other-component', `another component's line in the same log (k3s/rke2 run it in kube-proxy's process): ${printable(r.source ?? r.msg, 80)}`, file, r.line, 1));
      continue;
    }
    const at = placeOf(r, file, raw);
    if (r.cutAt !== undefined) diagnostics.push(diagnostic('info', 'input/cut-line', `the terminal cut this line at column ${r.cutAt}: the end of the message is lost`, file, r.line, r.cutAt));
    const src = payloadSource(r);
    const payload = src ? readPayload(src, at, file, diagnostics) : undefined;
    if (payload) {
      payloads.push(payload);
      lastPayload.set(at.pid, payload);
    }
    for (const e of classifyRecord(r, at)) events.push(withPayload(e, payload ?? lastPayload.get(at.pid)));
  }
  events.push(...unitEvents(syntax.other, file, raw));
  events.sort((a, b) => a.at.line - b.at.line);
  diagnostics.sort((a, b) => a.line - b.line);
  const failures = events.filter((e) => e.kind === 'sync-failed').length;
  return {
    format: 'kube-proxy-log',
    file,
    data: { file, events, payloads, records: syntax.records.length - others, ...(others ? { otherComponents: others } : {}) },
    diagnostics,
    counts: { entries: syntax.records.length - others, events: events.length, 'sync failures': failures, payloads: payloads.length, ...(others ? { 'other components\' lines': others } : {}) },
  };
}

export const kubeProxyLogParser: FormatParser<KubeProxyLog> = { id: 'kube-proxy-log', parse: (text, file) => extractKubeProxyLog(text, file) };
