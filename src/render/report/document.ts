/**
 * The report, answer first: the header (which node, which kpx, what the evidence lacks), the
 * problems, the Services they touch, the remaining Services, the graphs asked for, the evidence
 * (every dump line mentioned above, each with its anchor), and the inputs read.
 */
import type { ServicePort } from '../../kube/types.js';
import { EvidenceIndex } from './evidence.js';
import { headerBlocks } from './header.js';
import type { ReportGraph, ReportInput } from './input.js';
import { plural, type Block } from './model.js';
import { problemsOf, problemsSection } from './problems.js';
import { otherServicesTable, serviceSection } from './services.js';

const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/** `svc-<id>` for each Service port shown in detail, unique among them. */
function serviceAnchors(services: readonly ServicePort[]): Map<ServicePort, string> {
  const out = new Map<ServicePort, string>();
  const used = new Set<string>();
  for (const s of services) {
    const base = `svc-${slug(s.id)}`;
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    out.set(s, id);
  }
  return out;
}

function graphBlocks(graphs: readonly ReportGraph[]): Block[] {
  if (graphs.length === 0) return [];
  const blocks: Block[] = [{ kind: 'heading', level: 2, text: 'Graphs' }];
  for (const g of graphs) {
    blocks.push({ kind: 'heading', level: 3, text: g.selector });
    if (g.services.length === 0) blocks.push({ kind: 'paragraph', content: [`No Service matches ${g.selector}.`] });
    else if (g.svg !== undefined) blocks.push({ kind: 'svg', svg: g.svg, alt: { lang: 'mermaid', text: g.mermaid ?? '' } });
    else {
      if (g.svgUnavailable) blocks.push({ kind: 'paragraph', content: ['Graphviz could not run here (no memory for WebAssembly): the graph is given as Mermaid text.'] });
      blocks.push({ kind: 'code', lang: 'mermaid', text: g.mermaid ?? '' });
    }
  }
  return [{ kind: 'section', id: 'graphs', blocks }];
}

function evidenceSection(ev: EvidenceIndex): Block {
  const blocks: Block[] = [{ kind: 'heading', level: 2, text: `Evidence (${plural(ev.size, 'dump line')})` }];
  blocks.push({ kind: 'paragraph', cls: 'summary', content: ['Every dump line mentioned above, as the dump has it (control characters shown as escapes).'] });
  for (const g of ev.byFile()) {
    blocks.push({ kind: 'heading', level: 3, text: g.file });
    blocks.push({ kind: 'evidence', file: g.file, lines: g.lines });
  }
  return { kind: 'section', id: 'evidence', blocks };
}

function inputsSection(input: ReportInput): Block {
  const files = input.node.snapshot.files;
  const rows = files.map((f) => [
    [f.path],
    [f.format],
    [
      Object.entries(f.counts)
        .map(([k, v]) => `${v} ${k}`)
        .join(', '),
    ],
    [String(f.diagnostics.filter((d) => d.severity === 'error').length)],
    [String(f.diagnostics.filter((d) => d.severity === 'warning').length)],
  ]);
  return { kind: 'section', id: 'inputs', blocks: [{ kind: 'heading', level: 2, text: `Inputs (${plural(files.length, 'file')})` }, { kind: 'table', head: ['file', 'format', 'contents', 'errors', 'warnings'], rows }] };
}

/** The whole report as blocks. */
export function reportDocument(input: ReportInput): Block[] {
  const node = input.node;
  const ev = new EvidenceIndex();
  const p = problemsOf(node, input.lint);
  const detailed = p.touched.slice(0, input.maxServices ?? 100);
  const anchors = serviceAnchors(detailed);
  const out = headerBlocks(input);
  out.push(problemsSection(node, input.lint, p, ev, (s) => anchors.get(s), input.maxProblems ?? 200));

  const touched: Block[] = [{ kind: 'heading', level: 2, text: `Services the problems touch (${p.touched.length})` }];
  if (detailed.length === 0) touched.push({ kind: 'paragraph', content: ['None.'] });
  for (const s of detailed) touched.push(serviceSection(s, node.judgementOf(s), anchors.get(s)!, ev, p.findingsOf.get(s) ?? []));
  if (p.touched.length > detailed.length) touched.push({ kind: 'paragraph', content: [`${p.touched.length - detailed.length} more are in the table below (kpx services --service NAME shows one in detail).`] });
  out.push({ kind: 'section', id: 'services', blocks: touched });

  const others = node.resolution.services.filter((s) => !anchors.has(s));
  const rest: Block[] = [{ kind: 'heading', level: 2, text: `${detailed.length ? 'Other Services' : 'Services'} (${others.length})` }];
  rest.push(others.length ? otherServicesTable(others, node.judgementOf) : { kind: 'paragraph', content: [node.resolution.services.length ? 'None.' : 'No Kubernetes Services found in these dumps.'] });
  out.push({ kind: 'section', id: 'other-services', blocks: rest });

  for (const b of graphBlocks(input.graphs ?? [])) out.push(b);
  out.push(evidenceSection(ev));
  out.push(inputsSection(input));
  return out;
}
