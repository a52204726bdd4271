/**
 * One klog line: the header `Lmmdd hh:mm:ss.uuuuuu threadid file:line] ` and its message, which is
 * either free text (klog.Infof) or structured (klog.InfoS: `"msg" key="value" key=value key=<`).
 * Also logrus lines (`time="…" level=warning msg="…"`), which old kube-proxy images printed
 * from vendored libraries. The header is one regular expression (the sniffer uses it: no parser
 * loaded to sniff); the structured message after it is a Chevrotain grammar (structured.ts).
 */

export type KlogLevel = 'I' | 'W' | 'E' | 'F';

export interface KlogHeader {
  readonly level: KlogLevel;
  /** `MMDD`. */
  readonly date: string;
  /** `hh:mm:ss.uuuuuu`. */
  readonly time: string;
  readonly thread: number;
  /** `proxier.go:1536`. */
  readonly source: string;
  /** Column (0-based, within the unwrapped body) where the message starts. */
  readonly messageOffset: number;
}

const HEADER = /^([IWEF])(\d{4}) +(\d\d:\d\d:\d\d\.\d+)\s+(\d+) ([^\s\]]+:\d+)\] ?/;
export const LOGRUS = /^time=(?:"([^"]*)"|(\S+)) level=(\w+) msg=/;
/** logrus' text format on a terminal (k3s' supervisor lines): `INFO[0010] message`. */
export const LOGRUS_TTY = /^(DEBU|INFO|WARN|ERRO|FATA|PANI)\[(\d+)\] ?(.*)$/;

export function klogHeader(body: string): KlogHeader | undefined {
  const m = HEADER.exec(body);
  if (!m) return undefined;
  return { level: m[1] as KlogLevel, date: m[2], time: m[3], thread: Number(m[4]), source: m[5], messageOffset: m[0].length };
}

/** A Go quoted string starting at `s[i] === '"'`: its value and the index after the closing quote. */
export function readQuoted(s: string, i: number): { value: string; end: number } | undefined {
  let out = '';
  let j = i + 1;
  while (j < s.length) {
    const c = s[j];
    if (c === '"') return { value: out, end: j + 1 };
    if (c !== '\\') {
      out += c;
      j++;
      continue;
    }
    const n = s[j + 1];
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', "'": "'", a: '\x07', b: '\b', f: '\f', v: '\v' };
    if (n !== undefined && n in simple) {
      out += simple[n];
      j += 2;
    } else if (n === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(j + 2, j + 4))) {
      out += String.fromCharCode(parseInt(s.slice(j + 2, j + 4), 16));
      j += 4;
    } else if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(j + 2, j + 6))) {
      out += String.fromCharCode(parseInt(s.slice(j + 2, j + 6), 16));
      j += 6;
    } else {
      out += c;
      j++;
    }
  }
  return undefined;
}

export interface KeyValue {
  readonly key: string;
  /** Decoded value; for a `key=<` block, filled in by the caller from the lines that follow. */
  readonly value: string;
  /** `key=<`: the value is the indented block on the following lines, ended by ` >`. */
  readonly block: boolean;
}

export interface Structured {
  readonly msg: string;
  readonly pairs: readonly KeyValue[];
}
