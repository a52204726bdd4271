/**
 * Generated clusters seen from every node: the generator models one node's view (cluster.node
 * and each endpoint's `local`); here the same cluster is re-aimed at each node, so each node's
 * rules mark its own endpoints local and its routes hold its own pods. Writes cluster bundles
 * (one `kpx collect`-like folder per node, with a manifest) for tests and benchmarks.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, NodeInfo, Service, ServicePortRef } from './cluster.js';
import { writeBundle, type Mode } from './bundle.js';
import { apiObjects, hintEligible, zoneOf, type ApiObjectsOptions } from './api-objects.js';

/** The cluster as `node` (a name or index) sees it. Service order and sync order are kept. */
export function nodeView(cluster: Cluster, node: string | number, opts: { hints?: boolean } = {}): Cluster {
  const target: NodeInfo | undefined = typeof node === 'number' ? cluster.nodes[node] : cluster.nodes.find((n) => n.name === node);
  if (!target) throw new Error(`no node ${String(node)} in the generated cluster`);
  const svcMap = new Map<Service, Service>();
  const portMap = new Map<object, Service['ports'][number]>();
  const services = cluster.services.map((s) => {
    // With topology hints, kube-proxy on this node uses only the endpoints hinted for its zone
    // (topology.go CategorizeEndpoints; every endpoint is hinted for its own zone, and every zone has one).
    const zoneOfNode = new Map(cluster.nodes.map((n) => [n.name, zoneOf(n.index)]));
    const filter = opts.hints === true && hintEligible(s, cluster.nodes);
    const ports = s.ports.map((p) => {
      const kept = filter ? p.endpoints.filter((e) => zoneOfNode.get(e.nodeName) === zoneOf(target.index)) : p.endpoints;
      const np = { ...p, endpoints: kept.map((e) => ({ ...e, local: e.nodeName === target.name })) };
      portMap.set(p, np);
      return np;
    });
    const ns: Service = { ...s, ports };
    svcMap.set(s, ns);
    return ns;
  });
  const syncOrder: ServicePortRef[] = cluster.syncOrder.map((r) => ({ service: svcMap.get(r.service)!, port: portMap.get(r.port)! }));
  return { ...cluster, node: target, services, syncOrder };
}

export interface ClusterBundleOptions {
  /** Only these nodes (names); default every node of the cluster. */
  readonly nodes?: readonly string[];
  /** Write manifest.json (kind kpx-bundle, host = node name). Default true. */
  readonly manifest?: boolean;
  /** Also write each node's api-objects.json (the whole cluster's, as kubectl prints it from any node). */
  readonly api?: ApiObjectsOptions;
}

/** Write DIR/<node>/… for each node; returns the node names written. */
export function writeClusterBundle(cluster: Cluster, mode: Mode, dir: string, opts: ClusterBundleOptions = {}): string[] {
  mkdirSync(dir, { recursive: true });
  const names = opts.nodes ?? cluster.nodes.map((n) => n.name);
  for (const name of names) {
    const sub = join(dir, name);
    writeBundle(nodeView(cluster, name, { hints: opts.api?.hints === true }), mode, sub);
    if (opts.api) writeFileSync(join(sub, 'api-objects.json'), JSON.stringify(apiObjects(cluster, opts.api).list, null, 2) + '\n');
    if (opts.manifest ?? true) {
      const manifest = { kind: 'kpx-bundle', host: name, collectedAt: '2026-01-15T12:00:00.000Z', kpxVersion: '0.1.0', tools: {}, steps: [], generated: { seed: cluster.seed, mode } };
      writeFileSync(join(sub, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    }
  }
  return [...names];
}
