/** The shapes a kube-proxy configuration is read into: shared by the YAML and flags readers and ./index.ts. */

export interface ConfigField {
  /** Dotted path in KubeProxyConfiguration (`ipvs.strictARP`). */
  readonly path: string;
  /** The value as text (lists joined with `,`; null as ``). */
  readonly value: string;
  readonly isNull: boolean;
  readonly list?: readonly string[];
  /** A quoted string in the YAML (`"14"` where a number is expected is a type error for kube-proxy). */
  readonly quoted?: boolean;
  /** 1-based file line. */
  readonly line: number;
}

export type ConfigForm = 'configmap' | 'config' | 'flags' | 'fragment' | 'kubeadm';

export interface ConfigProblem {
  readonly line: number;
  readonly message: string;
  readonly severity: 'error' | 'warning' | 'info';
  /** yaml: the YAML itself; noise, prose: a pasted line that is not the configuration. */
  readonly code: 'yaml' | 'noise' | 'prose';
}

export interface KubeProxyConfigSyntax {
  readonly form: ConfigForm;
  /** Every field kube-proxy reads, in file order (of a key written twice in one mapping, the last). */
  readonly fields: readonly ConfigField[];
  readonly duplicates: readonly Duplicate[];
  readonly problems: readonly ConfigProblem[];
  readonly apiVersion?: { readonly value: string; readonly line: number };
}

/** A key written twice in one mapping: kube-proxy's lenient decoding keeps only the last (a whole section, for a section). */
export interface Duplicate {
  readonly path: string;
  readonly first: number;
  readonly line: number;
}
