/**
 * The state the kubectl readers share while reading one paste: the tables' reader (./kubectl.ts) and
 * the describe blocks' reader (./kubectl-describe.ts) add to one collector.
 */
import type { Diagnostic } from '../source/index.js';
import type { ApiEndpointSlice, ApiNode, ApiPod, ApiService } from '../model/k8s-api.js';

/** What the readers of tables and describe blocks add to. */
export interface KubectlCollector {
  readonly file: string;
  readonly services: ApiService[];
  readonly slices: ApiEndpointSlice[];
  readonly nodes: ApiNode[];
  readonly pods: ApiPod[];
  readonly diagnostics: Diagnostic[];
  /** Namespaces whose Services a listing holds whole (`*`: every one). */
  readonly covered: Set<string>;
  readonly ignored: Map<string, { count: number; line: number }>;
}
