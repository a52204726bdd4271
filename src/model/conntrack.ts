/**
 * Connection-tracking state (`conntrack -L`, `/proc/net/nf_conntrack`, `conntrack -S`/`-C`).
 *
 * A table can hold millions of entries, so entries are not objects: each field is a column in a
 * typed array, addresses are interned (a node's tables repeat a few thousand addresses), and one
 * entry is a row number. `entry(i)` materialises a row as a plain object for the few rows a finding
 * or a trace talks about.
 */

/** `redacted`: the author hid an address or port before pasting (the entry is read; address matches skip it). */
export const CT_FLAG = { unreplied: 1, assured: 2, offload: 4, hwOffload: 8, redacted: 16 } as const;

/** Protocol numbers kpx names. */
export const IPPROTO = { icmp: 1, tcp: 6, udp: 17, dccp: 33, gre: 47, icmpv6: 58, sctp: 132, udplite: 136 } as const;

export interface CtTuple {
  readonly src: string;
  readonly dst: string;
  /** Ports (TCP/UDP/SCTP/DCCP/UDP-Lite); for ICMP `sport` is the echo id; undefined when not printed. */
  readonly sport?: number;
  readonly dport?: number;
  /** ICMP type and code. */
  readonly type?: number;
  readonly code?: number;
}

export interface CtEntry {
  /** Row number in its table. */
  readonly index: number;
  readonly family: 4 | 6;
  /** IANA protocol number. */
  readonly protoNum: number;
  /** Name as printed (`tcp`, `udp`, `unknown`…). */
  readonly proto: string;
  /** Seconds until the entry expires, as of the dump; undefined for offloaded entries (no timeout printed). */
  readonly timeout?: number;
  readonly state?: string;
  readonly orig: CtTuple;
  readonly reply: CtTuple;
  readonly unreplied: boolean;
  readonly assured: boolean;
  readonly offload: boolean;
  readonly hwOffload: boolean;
  readonly mark?: number;
  readonly zone?: number;
  readonly use?: number;
  /** `-o id`. */
  readonly id?: number;
  readonly line: number;
  readonly file: string;
}

const NONE = -1;

/** A growable column of 32-bit integers (NONE = absent). */
class Column {
  data: Int32Array;
  constructor(capacity: number) {
    this.data = new Int32Array(capacity).fill(NONE);
  }
  grow(capacity: number): void {
    const next = new Int32Array(capacity).fill(NONE);
    next.set(this.data);
    this.data = next;
  }
}

const COLUMNS = ['proto', 'family', 'timeout', 'state', 'flags', 'oSrc', 'oDst', 'rSrc', 'rDst', 'oSport', 'oDport', 'rSport', 'rDport', 'oType', 'oCode', 'rType', 'rCode', 'mark', 'zone', 'use', 'id', 'line'] as const;
type ColumnName = (typeof COLUMNS)[number];

/** One row to append: numbers, with addresses and names as strings (interned on the way in). */
export interface CtRow {
  family: 4 | 6;
  protoNum: number;
  proto: string;
  timeout: number;
  state: string | undefined;
  flags: number;
  oSrc: string;
  oDst: string;
  rSrc: string;
  rDst: string;
  oSport: number;
  oDport: number;
  rSport: number;
  rDport: number;
  oType: number;
  oCode: number;
  rType: number;
  rCode: number;
  mark: number;
  zone: number;
  use: number;
  id: number;
  line: number;
}

export class ConntrackTable {
  private cols: Record<ColumnName, Column>;
  private capacity = 1024;
  private strings: string[] = [];
  private ids = new Map<string, number>();
  /** Number of entries. */
  size = 0;
  /**
   * `tool`: `conntrack -L`; `proc`: `/proc/net/nf_conntrack` (or `conntrack -L -o extended`,
   * which prints the same layout).
   */
  variant: 'tool' | 'proc' = 'tool';
  /** The "N flow entries have been shown" line, when present. */
  shown?: { readonly count: number; readonly line: number; readonly version: string };

  constructor(readonly file: string) {
    this.cols = Object.fromEntries(COLUMNS.map((c) => [c, new Column(this.capacity)])) as Record<ColumnName, Column>;
  }

  intern(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(s);
      this.ids.set(s, id);
    }
    return id;
  }
  str(id: number): string {
    return this.strings[id];
  }

  add(r: CtRow): number {
    if (this.size === this.capacity) {
      this.capacity *= 2;
      for (const c of COLUMNS) this.cols[c].grow(this.capacity);
    }
    const i = this.size++;
    const c = this.cols;
    c.proto.data[i] = (r.protoNum & 0xffff) | (this.intern(r.proto) << 16);
    c.family.data[i] = r.family;
    c.timeout.data[i] = r.timeout;
    c.state.data[i] = r.state === undefined ? NONE : this.intern(r.state);
    c.flags.data[i] = r.flags;
    c.oSrc.data[i] = this.intern(r.oSrc);
    c.oDst.data[i] = this.intern(r.oDst);
    c.rSrc.data[i] = this.intern(r.rSrc);
    c.rDst.data[i] = this.intern(r.rDst);
    c.oSport.data[i] = r.oSport;
    c.oDport.data[i] = r.oDport;
    c.rSport.data[i] = r.rSport;
    c.rDport.data[i] = r.rDport;
    c.oType.data[i] = r.oType;
    c.oCode.data[i] = r.oCode;
    c.rType.data[i] = r.rType;
    c.rCode.data[i] = r.rCode;
    c.mark.data[i] = r.mark;
    c.zone.data[i] = r.zone;
    c.use.data[i] = r.use;
    c.id.data[i] = r.id;
    c.line.data[i] = r.line;
    return i;
  }

  // ---- cheap per-row accessors (no objects) ----
  protoNum(i: number): number {
    return this.cols.proto.data[i] & 0xffff;
  }
  origDst(i: number): string {
    return this.strings[this.cols.oDst.data[i]];
  }
  origSrc(i: number): string {
    return this.strings[this.cols.oSrc.data[i]];
  }
  replySrc(i: number): string {
    return this.strings[this.cols.rSrc.data[i]];
  }
  /** Original destination port; undefined when the protocol has none. */
  origDport(i: number): number | undefined {
    const v = this.cols.oDport.data[i];
    return v === NONE ? undefined : v;
  }
  origSport(i: number): number | undefined {
    const v = this.cols.oSport.data[i];
    return v === NONE ? undefined : v;
  }
  replySport(i: number): number | undefined {
    const v = this.cols.rSport.data[i];
    return v === NONE ? undefined : v;
  }
  flags(i: number): number {
    return this.cols.flags.data[i];
  }
  lineOf(i: number): number {
    return this.cols.line.data[i];
  }

  entry(i: number): CtEntry {
    const c = this.cols;
    const opt = (col: Column): number | undefined => (col.data[i] === NONE ? undefined : col.data[i]);
    const tuple = (src: Column, dst: Column, sp: Column, dp: Column, ty: Column, co: Column): CtTuple => {
      const t: { -readonly [K in keyof CtTuple]: CtTuple[K] } = { src: this.strings[src.data[i]], dst: this.strings[dst.data[i]] };
      if (opt(sp) !== undefined) t.sport = opt(sp);
      if (opt(dp) !== undefined) t.dport = opt(dp);
      if (opt(ty) !== undefined) t.type = opt(ty);
      if (opt(co) !== undefined) t.code = opt(co);
      return t;
    };
    const flags = c.flags.data[i];
    const out: { -readonly [K in keyof CtEntry]: CtEntry[K] } = {
      index: i,
      family: c.family.data[i] as 4 | 6,
      protoNum: c.proto.data[i] & 0xffff,
      proto: this.strings[c.proto.data[i] >>> 16],
      orig: tuple(c.oSrc, c.oDst, c.oSport, c.oDport, c.oType, c.oCode),
      reply: tuple(c.rSrc, c.rDst, c.rSport, c.rDport, c.rType, c.rCode),
      unreplied: (flags & CT_FLAG.unreplied) !== 0,
      assured: (flags & CT_FLAG.assured) !== 0,
      offload: (flags & CT_FLAG.offload) !== 0,
      hwOffload: (flags & CT_FLAG.hwOffload) !== 0,
      line: c.line.data[i],
      file: this.file,
    };
    if (opt(c.timeout) !== undefined) out.timeout = opt(c.timeout);
    if (c.state.data[i] !== NONE) out.state = this.strings[c.state.data[i]];
    if (opt(c.mark) !== undefined) out.mark = c.mark.data[i] >>> 0;
    if (opt(c.zone) !== undefined) out.zone = opt(c.zone);
    if (opt(c.use) !== undefined) out.use = opt(c.use);
    if (opt(c.id) !== undefined) out.id = c.id.data[i] >>> 0;
    return out;
  }

  /** Bytes held by the columns (for the benchmark's account). */
  get columnBytes(): number {
    return COLUMNS.length * this.capacity * 4;
  }
}

/** The entry as conntrack -L prints it (the form kpx quotes in findings: the raw line is not kept). */
export function formatEntry(e: CtEntry): string {
  const tuple = (t: CtTuple): string =>
    [`src=${t.src}`, `dst=${t.dst}`, t.sport !== undefined && t.type === undefined ? `sport=${t.sport}` : '', t.dport !== undefined ? `dport=${t.dport}` : '', t.type !== undefined ? `type=${t.type} code=${t.code ?? 0} id=${t.sport ?? 0}` : '']
      .filter(Boolean)
      .join(' ');
  return [
    e.proto.padEnd(8),
    String(e.protoNum),
    e.timeout !== undefined ? String(e.timeout) : '',
    e.state ?? '',
    tuple(e.orig),
    e.unreplied ? '[UNREPLIED]' : '',
    tuple(e.reply),
    e.assured ? '[ASSURED]' : '',
    e.offload ? '[OFFLOAD]' : '',
    e.hwOffload ? '[HW_OFFLOAD]' : '',
    e.mark !== undefined ? `mark=${e.mark}` : '',
    e.zone !== undefined ? `zone=${e.zone}` : '',
    e.use !== undefined ? `use=${e.use}` : '',
    e.id !== undefined ? `id=${e.id}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** `conntrack -S` (either form) and `conntrack -C`. */
export interface ConntrackStats {
  readonly file: string;
  readonly form: 'per-cpu' | 'summary' | 'count';
  /** Counter → sum over CPUs (per-CPU form) or the printed value (old form). */
  readonly totals: Readonly<Record<string, number>>;
  /** Per-CPU rows (per-CPU form only). */
  readonly cpus: readonly { readonly cpu: number; readonly line: number; readonly counters: Readonly<Record<string, number>> }[];
  /** Line of each counter's first non-zero value (or first occurrence), for findings. */
  readonly lineOf: Readonly<Record<string, number>>;
  /** `conntrack -C` / `entries` of the old form. */
  readonly count?: { readonly value: number; readonly line: number };
}
