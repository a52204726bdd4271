/**
 * Every JSON document kpx prints, by name: its schema and its version. This is the one place to
 * look (and to edit) when an output gains a member: the command's module here names each member,
 * `kpx schema NAME` prints it, and test/render/schemas.test.ts validates real outputs against it.
 */
import type { Schema } from './common.js';
import { SERVICES_SCHEMA, SERVICES_VERSION } from './services.js';
import { TRACE_SCHEMA, TRACE_VERSION } from './trace.js';
import { SERVICES_NODES_SCHEMA, SERVICES_NODES_VERSION, TRACE_CLUSTER_SCHEMA, TRACE_CLUSTER_VERSION } from './cluster.js';
import { LINT_RULES_SCHEMA, LINT_RULES_VERSION, LINT_SCHEMA, LINT_VERSION } from './lint.js';
import { NODE_SUMMARY_SCHEMA, NODE_SUMMARY_VERSION } from './summary.js';
import { DIFF_SCHEMA, DIFF_VERSION, DUMP_SCHEMA, DUMP_VERSION, INSPECT_SCHEMA, INSPECT_VERSION, REVERSE_SCHEMA, REVERSE_VERSION } from './snapshot.js';

export type { Schema } from './common.js';

export const SCHEMA_VERSION = {
  services: SERVICES_VERSION,
  'services-nodes': SERVICES_NODES_VERSION,
  trace: TRACE_VERSION,
  'trace-cluster': TRACE_CLUSTER_VERSION,
  lint: LINT_VERSION,
  'lint-rules': LINT_RULES_VERSION,
  inspect: INSPECT_VERSION,
  dump: DUMP_VERSION,
  diff: DIFF_VERSION,
  reverse: REVERSE_VERSION,
  'node-summary': NODE_SUMMARY_VERSION,
} as const;

export type DocumentName = keyof typeof SCHEMA_VERSION;

/** The schema of each document, with the command that prints it. */
export const SCHEMAS: Readonly<Record<DocumentName, { readonly command: string; readonly schema: Schema }>> = {
  services: { command: 'kpx services -o json|yaml (--service X adds evidence)', schema: SERVICES_SCHEMA },
  'services-nodes': { command: 'kpx services --nodes -o json', schema: SERVICES_NODES_SCHEMA },
  trace: { command: 'kpx trace VIP:PORT -o json', schema: TRACE_SCHEMA },
  'trace-cluster': { command: 'kpx trace VIP:PORT -i CLUSTER --node A -o json', schema: TRACE_CLUSTER_SCHEMA },
  lint: { command: 'kpx lint -o json (and --baseline FILE)', schema: LINT_SCHEMA },
  'lint-rules': { command: 'kpx lint --list-rules -o json', schema: LINT_RULES_SCHEMA },
  inspect: { command: 'kpx inspect -o json', schema: INSPECT_SCHEMA },
  dump: { command: 'kpx dump FILE -o json', schema: DUMP_SCHEMA },
  diff: { command: 'kpx diff OLD NEW -o json', schema: DIFF_SCHEMA },
  reverse: { command: 'kpx reverse POD-IP[:PORT] -o json (alias who-dnat)', schema: REVERSE_SCHEMA },
  'node-summary': { command: 'kpx summarize -o json (read back by kpx services --nodes)', schema: NODE_SUMMARY_SCHEMA },
};

/** `body` as the named document: `schemaVersion` first, then its members. */
export function versioned<T extends object>(name: DocumentName, body: T): { schemaVersion: number } & T {
  return { schemaVersion: SCHEMA_VERSION[name], ...body };
}
