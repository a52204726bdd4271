/**
 * What a lint rule reports: a finding with its severity and the dump lines that are its evidence.
 * Its own file, so that the shared context (./context.ts) and the rule contract (./rule.ts) both use
 * it without importing each other.
 */
export type Severity = 'error' | 'warning' | 'info';
export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info'];
export const severityRank = (s: Severity): number => (s === 'error' ? 0 : s === 'warning' ? 1 : 2);

/** Another dump line that is evidence for a finding (the shadowing rule, the route, the other Service…). */
export interface Related {
  readonly file: string;
  readonly line: number;
  readonly column?: number;
  readonly text: string;
}

export interface Finding {
  /** The rule id, without the `kpx/` prefix SARIF uses. */
  readonly ruleId: string;
  readonly severity: Severity;
  readonly message: string;
  readonly file: string;
  /** 1-based line in `file`; 0 when the finding is about the snapshot as a whole. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
  /** The dump line at file:line, when there is one. */
  readonly text?: string;
  /** `ns/name:port` (kube-proxy's ServicePortName) when the finding is about one Service port. */
  readonly service?: string;
  readonly related?: readonly Related[];
  /** Stable identity for baselines and SARIF (src/lint/fingerprint.ts): not the file path, not the line. */
  readonly fingerprint: string;
}
