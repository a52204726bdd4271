/** `kpx inspect`: what each input file is, what it holds, and what is wrong with it — as text or JSON. */
import { missingDumps, proxyModes } from '../../kube/modes.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { printable } from '../../source/index.js';
import { formatDiagnostic } from '../diagnostics.js';
import { renderJson } from '../json.js';
import { versioned } from '../schemas/index.js';
import { elideStart, renderColumns, type Cell, type Column } from '../columns.js';
import { jsonText, type RenderContext, type Rendered } from '../output.js';

/** The variant name of iptables-restore --noflush input (src/load/restore-input.ts RESTORE_INPUT). */
const RESTORE_INPUT = 'restore-input';

export interface InspectResult {
  readonly kind: 'inspect';
  readonly snapshot: NodeSnapshot;
}

/** What a partial input leaves out, by LoadedFile.variant, said below the table. */
const PARTIAL_NOTE: ReadonlyMap<string, string> = new Map([
  [
    RESTORE_INPUT,
    "iptables-restore --noflush input (what kube-proxy writes), not a dump: only the chains it declares are in it; built-in chains (PREROUTING, INPUT, …) and other programs' chains and rules are not, so what it does not show is unknown",
  ],
]);

export function snapshotSummary(s: NodeSnapshot) {
  return {
    name: s.name,
    proxyModes: proxyModes(s),
    families: [...new Set(s.rulesets.map((r) => r.family))].sort(),
    iptablesBackends: [...new Set(s.rulesets.map((r) => r.backend))],
    counts: {
      tables: s.rulesets.reduce((n, r) => n + r.tables.length, 0),
      rules: s.rulesets.reduce((n, r) => n + r.ruleCount, 0),
      ipsets: s.ipsets.length,
      ipsetMembers: s.ipsets.reduce((n, x) => n + x.members.length, 0),
      virtualServers: s.ipvs.reduce((n, d) => n + d.virtualServers.length, 0),
      realServers: s.ipvs.reduce((n, d) => n + d.virtualServers.reduce((m, v) => m + v.realServers.length, 0), 0),
      routes: s.routes.length,
      interfaces: s.interfaces.length,
      addresses: s.interfaces.reduce((n, i) => n + i.addresses.length, 0),
      sysctls: s.sysctls.size,
      nftTables: s.nft.reduce((n, r) => n + r.tables.length, 0),
    },
    nftTables: s.nft.flatMap((r) =>
      r.tables.map((t) => ({
        family: t.family,
        name: t.name,
        // iptables-nft keeps iptables' own tables in nftables: they are iptables rules, not kube-proxy's nftables mode.
        writtenBy: t.fromIptablesNft ? 'iptables-nft' : t.name === 'kube-proxy' ? 'kube-proxy nftables mode' : 'nft',
      })),
    ),
    missing: missingDumps(s),
  };
}

/** What a text output leaves out, by the reader that read it (a paste names its parts' readers). */
const TEXT_NOTE: ReadonlyMap<string, string> = new Map([
  ['kubectl', 'kubectl get/describe text shows some fields of each object: the ones it does not show are unknown, and a listing not of every Service of a namespace (a name, a selector, a grep) is not all of them'],
  ['iptables-list', 'an iptables -L/-S listing, not a dump: chains it does not list are unknown, not empty'],
]);

const FILE_COLUMNS: readonly Column[] = [
  { head: 'file', shrink: true, min: 24, elide: elideStart },
  { head: 'format' },
  // What a file holds is a summary, not a name to copy: it gives up room first.
  { head: 'contents', shrink: true, min: 20 },
  { head: 'errors' },
  { head: 'warnings' },
];

/** `a/b/` when every path is under a/b (and more than a file name would be left), else ''. */
function commonDirectory(paths: readonly string[]): string {
  if (paths.length < 2) return '';
  let dir = paths[0].slice(0, paths[0].lastIndexOf('/') + 1);
  for (const p of paths) while (dir && !p.startsWith(dir)) dir = dir.slice(0, dir.slice(0, -1).lastIndexOf('/') + 1);
  return dir;
}

export const inspectJson = ({ snapshot }: InspectResult): Rendered =>
  jsonText(
    renderJson(versioned('inspect', {
      files: snapshot.files.map((f) => ({
        path: f.path,
        format: f.format,
        ...(f.variant ? { variant: f.variant } : {}),
        bytes: f.bytes,
        counts: f.counts,
        diagnostics: f.diagnostics.map((d) => ({ severity: d.severity, code: d.code, message: d.message, line: d.line, column: d.column, ...(d.expected ? { expected: d.expected } : {}), ...(d.found ? { found: d.found } : {}) })),
      })),
      snapshot: snapshotSummary(snapshot),
    })),
  );

export function inspectText(r: InspectResult, ctx: RenderContext): Rendered {
  const c = ctx.c;
  // kubectl-style columns; a long path loses its start, never its file name.
  const dir = commonDirectory(r.snapshot.files.map((f) => f.path));
  const rows: Cell[][] = r.snapshot.files.map((f) => {
    const counts = Object.entries(f.counts)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ');
    const errors = f.diagnostics.filter((d) => d.severity === 'error').length;
    const warnings = f.diagnostics.filter((d) => d.severity === 'warning').length;
    const format = f.format === 'unknown' ? { text: 'unknown', paint: c.red } : f.variant ? `${f.format} (${f.variant})` : f.format;
    return [printable(f.path.slice(dir.length), 4096), format, counts || '-', errors ? { text: String(errors), paint: c.red } : '0', String(warnings)];
  });
  // Files of one bundle are named once by their directory, then by their own names.
  const table = (dir ? `${elideStart(printable(dir, 4096), ctx.width)}\n` : '') + renderColumns(FILE_COLUMNS, rows, { width: ctx.width });
  const summary = snapshotSummary(r.snapshot);
  const lines = [table];
  lines.push(`${c.bold('proxy mode')}: ${summary.proxyModes.join(', ') || 'none found'}${summary.families.length ? `   families: ${summary.families.map((f) => 'IPv' + f).join(', ')}` : ''}`);
  if (summary.nftTables.length) lines.push(`${c.bold('nft tables')}: ${summary.nftTables.map((t) => `${t.family} ${printable(t.name, 40)} (${t.writtenBy})`).join(', ')}`);
  for (const m of summary.missing) lines.push(`${c.yellow('missing')}: ${m}`);
  for (const f of r.snapshot.files) {
    const note = f.variant === undefined ? undefined : PARTIAL_NOTE.get(f.variant);
    if (note) lines.push(`${c.yellow('partial')}: ${elideStart(printable(f.path, 4096), 60)}: ${note}`);
    // Text outputs (issue 30): `kubectl (tables)`, and a paste's parts, named in its variant.
    const readers = f.format === 'paste' ? (f.variant ?? '').split(' + ').map((p) => p.split(' ')[0]) : [f.format];
    for (const r of new Set(readers)) {
      const text = TEXT_NOTE.get(r);
      if (text) lines.push(`${c.yellow('partial')}: ${elideStart(printable(f.path, 4096), 60)}: ${text}`);
    }
  }
  // A file read whole that gave nothing: its notes say why (a `kubectl get deployments` table, prose).
  for (const f of r.snapshot.files) {
    if (f.format === 'unknown' || f.format === 'empty' || Object.values(f.counts).some((n) => n > 0)) continue;
    for (const d of f.diagnostics.filter((x) => x.severity === 'info').slice(0, 5)) lines.push(`${c.yellow('nothing read')}: ${elideStart(printable(f.path, 4096), 60)}:${d.line}: ${printable(d.message, 300)}`);
  }
  const diags = r.snapshot.files.flatMap((f) => f.diagnostics.filter((d) => d.severity !== 'info'));
  if (diags.length) {
    lines.push('', c.bold('diagnostics'));
    for (const d of diags.slice(0, 200)) lines.push(formatDiagnostic(d, c));
    if (diags.length > 200) lines.push(`… and ${diags.length - 200} more (use -o json)`);
  }
  return { via: 'text', text: lines.join('\n') + '\n' };
}
