/**
 * kube-proxy's own account of a node: what its log says happened (typed events) and how it was
 * configured (KubeProxyConfiguration). Plain data: the readers are src/extract/kube-proxy-*.ts,
 * the judgements src/lint/rules/kube-proxy-*.ts.
 */
import type { Ruleset } from './netfilter.js';

export type KubeProxyModeName = 'iptables' | 'ipvs' | 'nftables' | 'userspace' | 'kernelspace';

/** Where an event was logged. */
export interface LogPlace {
  readonly file: string;
  /** First and last line of the record in the file. */
  readonly line: number;
  readonly endLine: number;
  /** The record's header line, as the file has it (for evidence; not yet made printable). */
  readonly text: string;
  /** klog `MMDD hh:mm:ss.uuuuuu` (or the logrus time). */
  readonly time: string;
  /** The wrapper's wall-clock time (journald, --timestamps, docker), when there is one. */
  readonly wallTime?: string;
  readonly level: 'I' | 'W' | 'E' | 'F';
  /** The process (journald pid or klog thread id): a restart starts another. */
  readonly pid?: number;
  /** The terminal cut this line at that column (journalctl, less -S, systemctl status): what follows is lost. */
  readonly cutAt?: number;
}

/**
 * An iptables-restore payload kube-proxy logged (at -v=5 and up, or the lines around a failure).
 * Its rules are numbered as iptables-restore numbers them: line 1 is the payload's first line,
 * not the log's. `fileLines[n - 1]` is the log line that holds payload line n.
 */
export interface RestorePayload {
  readonly file: string;
  readonly ruleset: Ruleset;
  readonly fileLines: readonly number[];
  /** Payload line n → its text. */
  readonly lines: readonly string[];
  /** Only some lines were logged (an excerpt around a failure): absent lines are blank here. */
  readonly excerpt: boolean;
  readonly family: 4 | 6;
  readonly at: LogPlace;
}

/** nft's echo of a failed command: `/dev/stdin:120:31-44: Error: …`, the command, a caret line. */
export interface NftErrorEcho {
  /** The transaction line nft names (`/dev/stdin:120`). */
  readonly line: number;
  readonly columns: { readonly from: number; readonly to: number };
  readonly message: string;
  /** The command nft echoed, and the text the carets underline. */
  readonly command?: string;
  readonly underlined?: string;
  /** The echoed command as the nft grammar reads it (absent when it is not a command nft -f takes). */
  readonly verb?: string;
  readonly object?: string;
  readonly family?: string;
  readonly table?: string;
  /** The rule's chain, or the chain a chain command names. */
  readonly chain?: string;
  /** The set or map an element/set/map command names. */
  readonly set?: string;
  /** The rule statement the carets fall in: its kind (`match`, `vmap`, `dnat`, `verdict`, …) and nft's text of it. */
  readonly expression?: { readonly kind: string; readonly text: string };
  /** Chains the command's verdicts name (rule jump/goto, element verdicts): where kube-proxy's Service chains show. */
  readonly targets?: readonly string[];
  /** The rule's comment (`comment "…"`), which names the Service in kube-proxy's rules. */
  readonly comment?: string;
  /** The log line holding the error line. */
  readonly fileLine: number;
}

export type KubeProxyEvent =
  | { readonly kind: 'proxier'; readonly mode: KubeProxyModeName; readonly families: readonly (4 | 6)[]; readonly at: LogPlace }
  | { readonly kind: 'mode-fallback'; readonly requested: KubeProxyModeName | 'unknown'; readonly reason: string; readonly at: LogPlace }
  | { readonly kind: 'module-load-failed'; readonly module?: string; readonly reason: string; readonly at: LogPlace }
  | {
      readonly kind: 'sync-failed';
      /** `iptables-restore`, `ip6tables-restore`, `nft`, `ipset`… */
      readonly tool: string;
      readonly family?: 4 | 6;
      readonly exitStatus?: number;
      /** The payload line the tool names (`line 12 failed`, `Error occurred at line: 12`, `/dev/stdin:12`). */
      readonly failingLine?: number;
      /**
       * The payload rule the tool rejected: the named line when it is a rule, else (the tool named the
       * table's COMMIT, as iptables-restore does for errors found at commit) the rule its message
       * points at — the jump to the chain it says does not exist, the option it does not know.
       */
      readonly rejected?: { readonly line: number; readonly how: 'named' | 'missing-chain' | 'unknown-option'; readonly name?: string };
      /**
       * What failed: the whole transaction (iptables-restore, `nft -f`), or the step before it that
       * makes kube-proxy give up this sync (checking or creating a chain or the jump to it, with
       * iptables itself).
       */
      readonly step?: 'restore' | 'ensure-chain' | 'ensure-jump';
      /** The chains an ensure step names (table, chain or the jump's source and destination). */
      readonly chains?: { readonly table?: string; readonly chain?: string; readonly from?: string; readonly to?: string };
      /** What the tool said (joined lines). */
      readonly output: string;
      /** The payload this failure is about: logged with it, or the last one logged before it by this process. */
      readonly payload?: RestorePayload;
      readonly nft?: NftErrorEcho;
      readonly at: LogPlace;
    }
  | { readonly kind: 'sync-retry'; readonly retryIn?: string; readonly at: LogPlace }
  | { readonly kind: 'port-closed'; readonly description: string; readonly service?: string; readonly port?: number; readonly protocol?: string; readonly at: LogPlace }
  | { readonly kind: 'conntrack-cleared'; readonly text: string; readonly at: LogPlace }
  | { readonly kind: 'config-warning'; readonly text: string; readonly field?: string; readonly at: LogPlace }
  /**
   * kube-proxy could not read its own Node: not there under the name it looked for (the host name
   * or --hostname-override differs from the Node's name), or the API server did not answer.
   */
  | { readonly kind: 'node-lookup-failed'; readonly node?: string; readonly notFound: boolean; readonly apiError: boolean; readonly reason: string; readonly at: LogPlace }
  /** kube-proxy took 127.0.0.1 (loopback) as the node IP, for want of a better one. */
  | { readonly kind: 'node-ip-fallback'; readonly ip: string; readonly at: LogPlace }
  /** The API server did not answer a list or watch (Services, Endpoints, EndpointSlices, Nodes): changes do not reach the rules. */
  | { readonly kind: 'api-unreachable'; readonly resource?: string; readonly reason: string; readonly at: LogPlace }
  /** The host lacks something kube-proxy needs and said so: br_netfilter/bridge-nf-call-iptables, the conntrack tool. */
  | { readonly kind: 'host-missing'; readonly what: 'br-netfilter' | 'conntrack-tool'; readonly text: string; readonly at: LogPlace }
  /** A listing kube-proxy needs failed (nft chains, sets, elements): stale objects stay, or the next sync starts over. */
  | { readonly kind: 'tool-failed'; readonly tool: string; readonly what: string; readonly output: string; readonly family?: 4 | 6; readonly at: LogPlace }
  /** kube-proxy stopped: a fatal klog line, "Error running ProxyServer", "command failed". */
  | { readonly kind: 'exited'; readonly reason: string; readonly at: LogPlace }
  /** systemd's own journal lines about kube-proxy's unit: exited, failed, restarts refused. */
  | { readonly kind: 'unit-state'; readonly state: 'exited' | 'failed' | 'start-refused' | 'starting' | 'stopping'; readonly text: string; readonly at: LogPlace };

export interface KubeProxyLog {
  readonly file: string;
  readonly events: readonly KubeProxyEvent[];
  readonly payloads: readonly RestorePayload[];
  /** Records read (every klog/logrus entry, whatever it says), kube-proxy's own. */
  readonly records: number;
  /** Entries other components wrote into the same log (k3s and rke2 run them in one process). */
  readonly otherComponents?: number;
}

export const syncFailures = (log: KubeProxyLog) => log.events.filter((e): e is Extract<KubeProxyEvent, { kind: 'sync-failed' }> => e.kind === 'sync-failed');

/** One field of the configuration, where it was written. */
export interface ConfigValue<T> {
  readonly value: T;
  readonly line: number;
  /** The line as the file has it. */
  readonly text: string;
}

/**
 * The KubeProxyConfiguration fields kpx can check against the dumps (kubeproxy.config.k8s.io/v1alpha1).
 * A field absent here was not set (kube-proxy uses its default).
 */
export interface KubeProxyConfig {
  readonly file: string;
  /** How it was given: the ConfigMap, the file, the flags, a fragment without apiVersion and kind, kubeadm's `kubeProxy: config:`. */
  readonly form: 'configmap' | 'config' | 'flags' | 'fragment' | 'kubeadm';
  readonly mode?: ConfigValue<string>;
  readonly clusterCIDR?: ConfigValue<readonly string[]>;
  readonly masqueradeBit?: ConfigValue<number>;
  readonly masqueradeAll?: ConfigValue<boolean>;
  readonly nodePortAddresses?: ConfigValue<readonly string[]>;
  readonly strictARP?: ConfigValue<boolean>;
  readonly ipvsScheduler?: ConfigValue<string>;
  readonly detectLocalMode?: ConfigValue<string>;
  readonly localhostNodePorts?: ConfigValue<boolean>;
  readonly conntrackMaxPerCore?: ConfigValue<number>;
  /** Every field as written (dotted path → value text), for display. */
  readonly fields: ReadonlyMap<string, ConfigValue<string>>;
  /** Fields KubeProxyConfiguration does not have (kube-proxy's strict decoding rejects them). */
  readonly unknownFields: readonly ConfigValue<string>[];
  /** What kube-proxy would not read as written: ignored, duplicated, refused. */
  readonly issues: readonly ConfigIssue[];
}

/**
 * A field kube-proxy does not read as written. Its file is decoded strictly, and when that fails,
 * leniently (cmd/kube-proxy/app options.go loadConfig): unknown, misplaced and removed fields are then
 * ignored, a duplicated key keeps its last value; a value of the wrong type fails both, and kube-proxy
 * exits.
 */
export type ConfigIssue =
  | { readonly kind: 'unknown'; readonly path: string; readonly line: number; readonly text: string }
  /** Written in another section than the one kube-proxy reads it from: ignored, so `home` keeps its default. */
  | { readonly kind: 'misplaced'; readonly path: string; readonly home: string; readonly default?: string; readonly line: number; readonly text: string }
  /** A field older kube-proxies had and current ones do not (`note`: what became of it). */
  | { readonly kind: 'removed'; readonly path: string; readonly note: string; readonly line: number; readonly text: string }
  /** The key again: the value read is this, the last one (`first` is the line of the first). */
  | { readonly kind: 'duplicate'; readonly path: string; readonly first: number; readonly line: number; readonly text: string }
  | { readonly kind: 'bad-value'; readonly path: string; readonly expected: 'integer' | 'boolean'; readonly value: string; readonly line: number; readonly text: string }
  /** Not kubeproxy.config.k8s.io: the group kube-proxy reads. */
  | { readonly kind: 'api-version'; readonly value: string; readonly line: number; readonly text: string };
