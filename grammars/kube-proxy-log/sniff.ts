/**
 * Cheap sniffer for kube-proxy logs: most content lines are klog (or logrus) entries once their
 * wrappers are removed, and the text says kube-proxy (its source files, its messages). A kubelet
 * or CNI log is klog too: without a kube-proxy marker the score stays below the threshold.
 */
import { unwrap } from './envelope.js';
import { klogHeader, LOGRUS, LOGRUS_TTY } from './klog.js';
import { SYSTEMD_STATUS } from './systemd.js';

export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

/** Source files, packages and messages only kube-proxy writes (tested on the whole line: journald's identifier counts). */
const MARKER =
  /kube-proxy|pkg\/proxy\/|\] "?Using (iptables|ipvs|nftables|userspace) [Pp]roxier|\b(proxier|server_others|server_linux|conntrack|healthcheck|proxier_health|graceful_termination|traffic|endpointslicecache|service)\.go:\d+\]|iptables-restore|KUBE-[A-Z]+|Sync failed|Closing local port|Opened local port|Failed to retrieve node info|invalid nodeIP|Unknown proxy mode|br-netfilter|nftables sync failed/;

export const kubeProxyLogSniffer: Sniffer<'kube-proxy-log'> = {
  id: 'kube-proxy-log',
  sniff(lines) {
    let content = 0;
    let entries = 0;
    let marker = false;
    let firstIsEntry: boolean | undefined;
    let inBlock = false;
    for (const raw of lines.slice(0, 200)) {
      if (raw.trim() === '') continue;
      const u = unwrap(raw);
      const body = u.body;
      // A `key=<` block (a payload, a tool's output) belongs to the entry that opened it.
      if (inBlock) {
        if (/^\s*>\s*$/.test(body)) inBlock = false;
        continue;
      }
      if (body.trim() === '' || /^\s*(```|~~~|-- (Logs begin|Journal begins|No entries|Reboot))/.test(body)) continue;
      // `systemctl status`' header and systemd's own journal lines frame the log; they are not entries.
      if (SYSTEMD_STATUS.test(raw) || /^systemd$/.test(u.envelope.ident ?? '')) continue;
      content++;
      // Fifty lines without an entry: not a log (a log pasted after that much else is rare; sniffing
      // every big dump's head must stay cheap).
      if (content > 50 && entries === 0) return 0;
      const b = body.trimStart();
      const isEntry = klogHeader(b) !== undefined || LOGRUS.test(b) || LOGRUS_TTY.test(b);
      firstIsEntry ??= isEntry;
      if (isEntry) {
        entries++;
        if (!marker && MARKER.test(raw)) marker = true;
        if (/=<\s*$/.test(body)) inBlock = true;
      }
    }
    if (entries === 0 || !marker) return 0;
    // Old multi-line messages (a payload after "Restoring iptables rules:") make many lines headerless;
    // a log that starts with an entry is a log.
    const ratio = entries / content;
    return ratio >= 0.5 || entries >= 5 || firstIsEntry ? 1 : ratio >= 0.1 ? 0.8 : 0.4;
  },
};
