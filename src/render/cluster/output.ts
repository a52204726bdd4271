/** The cluster's results (`services --nodes`, `trace --node`), and the renderers of each -o format. */
import type { NodeComparison } from '../../cluster/compare.js';
import type { SkippedNode } from '../../cluster/load.js';
import type { CrossTrace } from '../../cluster/trace.js';
import type { ClusterSnapshot } from '../../cluster/types.js';
import { renderJson, renderYaml } from '../json.js';
import { versioned } from '../schemas/index.js';
import { jsonText, type RenderContext, type Rendered } from '../output.js';
import { crossTraceJson, nodeComparisonJson, renderCrossTraceText, renderNodeComparison } from './render.js';

/** `services --nodes`: where the nodes disagree, per Service port, as the filters keep them. */
export interface ServicesNodesResult {
  readonly kind: 'services-nodes';
  /** The comparison with the Service ports the filters kept (its summary counts those). */
  readonly shown: NodeComparison;
  /** Nodes that could not be read (said on stderr first; listed in the JSON). */
  readonly skipped: readonly SkippedNode[];
  /** Text: list agreeing Service ports too. */
  readonly all: boolean;
}

/** `trace --node A`: the packet from node A to the pod's node and interface, per traced flow. */
export interface TraceClusterResult {
  readonly kind: 'trace-cluster';
  readonly traces: readonly CrossTrace[];
  readonly cluster: ClusterSnapshot;
  readonly verbose: boolean;
}

function servicesNodesDocument(r: ServicesNodesResult) {
  return versioned('services-nodes', { ...nodeComparisonJson(r.shown), ...(r.skipped.length ? { skipped: r.skipped.map((s) => ({ node: s.node, path: s.dir, reason: s.reason })) } : {}) });
}

/** text and wide: the same comparison, fitted to the width. */
export const servicesNodesText = (r: ServicesNodesResult, ctx: RenderContext): Rendered => ({ via: 'text', text: renderNodeComparison(r.shown, ctx.c, { all: r.all, width: ctx.width }) });

export const servicesNodesJson = (r: ServicesNodesResult): Rendered => jsonText(renderJson(servicesNodesDocument(r)));

export const servicesNodesYaml = (r: ServicesNodesResult): Rendered => jsonText(renderYaml(servicesNodesDocument(r)));

export const traceClusterText = (r: TraceClusterResult, ctx: RenderContext): Rendered => ({
  via: 'text',
  text: r.traces.map((t) => renderCrossTraceText(t, ctx.c, { verbose: r.verbose, cluster: r.cluster })).join('\n'),
});

export const traceClusterJson = (r: TraceClusterResult): Rendered => jsonText(renderJson(versioned('trace-cluster', { traces: r.traces.map(crossTraceJson) })));
