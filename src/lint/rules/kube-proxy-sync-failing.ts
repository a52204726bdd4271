import type { KubeProxyEvent, NftErrorEcho } from '../../model/kube-proxy.js';
import { parseServiceComment } from '../../kube/comments.js';
import { payloadLineOwner } from '../../judge/index.js';
import { parseNftObjectName } from '../../kube/resolve-nft.js';
import { servicePortName } from '../../kube/hash.js';
import { createRule, type Related } from '../rule.js';
import { kubeProxyLogs, placeRelated } from '../kube-proxy-util.js';

type SyncFailed = Extract<KubeProxyEvent, { kind: 'sync-failed' }>;

const firstLine = (s: string) => s.split('\n').map((l) => l.trim()).filter(Boolean).join(' | ');

export default createRule({
  id: 'kube-proxy-sync-failing',
  meta: {
    description: "kube-proxy's log shows its rule syncs failing (iptables-restore, nft, ipset): the dataplane in the dumps may be stale since the first failure.",
    severity: 'error',
    requires: ['kube-proxy-log'],
    standalone: true,
    relevant: () => false,
    docs: [
      'kube-proxy writes the whole dataplane in one transaction per sync (`iptables-restore --noflush`, one',
      '`nft -f -` transaction). When the tool rejects the transaction, nothing of it is applied: the rules on the',
      'node stay as they were at the last successful sync, and kube-proxy retries (`Sync failed; retrying in',
      '30s`) with the same bad line until the cause goes away. Services created or changed since then do not',
      'work on this node, endpoints that went away still get traffic, and after a failure kube-proxy closes the',
      'NodePort holder sockets it had opened (`Closing local port …`).',
      '',
      'The finding gives the first and last failure, how many, the line the tool names and — when the log holds',
      'the payload (`-v=5` and up, or the lines logged around the failure) — that payload line, numbered as',
      'iptables-restore numbers it, with the Service it belongs to. Legacy iptables-restore often names the',
      'table\'s `COMMIT` line instead of the rule. Typical causes: a rule with an empty `-s` when no cluster CIDR',
      'is set, a jump to a kubelet-owned chain (`KUBE-MARK-DROP`) that no longer exists, an option the host\'s',
      'iptables does not know (`--xor-mark`, `--random-fully`), an nft expression whose kernel module is missing.',
      'Before the transaction kube-proxy checks its base chains and the jumps to them with iptables itself',
      '(`Failed to ensure chain exists`, `Failed to ensure chain jumps`, e.g. an nf_tables iptables that cannot',
      'find `conntrack`): when that fails it gives up the sync too, and is counted here. In nftables mode the',
      'failure names its family (`ipFamily`, kube-proxy 1.31 and later): each family\'s proxier fails on its own.',
      '',
      '**Fix:** read the named payload line (raise kube-proxy\'s verbosity to 5 to have the payload logged); create',
      'the missing chain or module, or use a kube-proxy image whose iptables matches the host\'s; then check',
      'the log for `Sync failed` to stop, and re-take the dumps.',
      '',
      '**Example** (kubernetes/kubernetes#104234): `E0809 05:37:21.484590 1 proxier.go:1507] Failed to execute',
      'iptables-restore: exit status 1 (iptables-restore: line 51 failed` followed by `Sync failed; retrying in',
      '30s`, repeated for hours.',
    ].join('\n'),
    messages: {
      failing:
        "kube-proxy's {{tool}} failed {{when}}{{status}}: the dumps may show the rules as they were before {{first}}{{what}}{{said}}{{ports}}",
    },
  },
  check(ctx) {
    for (const log of kubeProxyLogs(ctx)) {
      // One finding per tool and family: nft serves both families, each proxier fails on its own.
      const byTool = new Map<string, SyncFailed[]>();
      for (const e of log.events) {
        if (e.kind !== 'sync-failed') continue;
        const key = `${e.tool}${e.family !== undefined && e.tool === 'nft' ? ` (IPv${e.family})` : ''}`;
        const list = byTool.get(key) ?? [];
        list.push(e);
        byTool.set(key, list);
      }
      const ports = log.events.filter((e): e is Extract<KubeProxyEvent, { kind: 'port-closed' }> => e.kind === 'port-closed');
      for (const [tool, fails] of byTool) {
        const first = fails[0];
        const last = fails[fails.length - 1];
        const related: Related[] = [];
        let what = '';
        let service: string | undefined;
        // The most recent failure whose payload holds the named line says the most.
        const withPayload = [...fails].reverse().find((f) => f.payload && f.failingLine !== undefined && f.payload.lines[f.failingLine - 1] !== undefined);
        if (withPayload?.payload && withPayload.failingLine !== undefined) {
          const p = withPayload.payload;
          const n = withPayload.failingLine;
          const rej = withPayload.rejected;
          const namedText = (p.lines[n - 1] ?? '').trim();
          const target = rej ? rej.line : n;
          const owner = payloadLineOwner(ctx.snapshot, ctx.resolution, p, target);
          service = owner.service;
          const why = rej?.how === 'missing-chain' ? `, which jumps to ${rej.name}: that chain does not exist` : rej?.how === 'unknown-option' ? `, which uses ${rej.name}: this iptables does not know that option` : '';
          what =
            rej && rej.line !== n
              ? `; the tool named payload line ${n} (\`${namedText}\`); the rule it rejected is payload line ${target}: \`${owner.text.trim()}\`${service ? ` (Service ${service})` : ''}${why}`
              : `; the tool named payload line ${n}: \`${owner.text.trim()}\`${service ? ` (Service ${service})` : ''}${/^COMMIT$/.test(namedText) ? ' — the table\'s COMMIT, not a rule: the message does not say which rule failed' : ''}`;
          related.push({ file: log.file, line: p.fileLines[target - 1], text: owner.text });
        } else if (withPayload === undefined && tool !== 'nft' && fails.some((f) => f.failingLine !== undefined)) {
          const lines = [...new Set(fails.map((f) => f.failingLine).filter((n): n is number => n !== undefined))];
          what = `; the tool named payload line${lines.length > 1 ? 's' : ''} ${lines.join(', ')} (the payload is not in the log: run kube-proxy with -v=5 to see it)`;
        }
        const ensure = fails.find((f) => f.step === 'ensure-jump' || f.step === 'ensure-chain');
        if (ensure?.chains) {
          const c = ensure.chains;
          const table = c.table ? ` in table ${c.table}` : '';
          what += ensure.step === 'ensure-jump' ? `; it could not check or add the jump ${c.from ?? '?'} → ${c.to ?? '?'}${table}, so it gave up the sync before writing any rule` : `; it could not create chain ${c.chain ?? '?'}${table}, so it gave up the sync before writing any rule`;
        }
        if (last.nft) {
          const e = last.nft;
          const where = e.chain ? ` in chain ${e.chain}` : e.set ? ` in ${e.object === 'map' ? 'map' : 'set'} ${e.set}` : '';
          const expr = e.expression && e.underlined && e.expression.text !== e.underlined.trim() ? ` (${e.expression.kind} \`${e.expression.text}\`)` : '';
          what += `; nft rejected transaction line ${e.line}${where}${e.underlined ? ` at \`${e.underlined}\`${expr}` : ''}`;
          service ??= nftEchoService(e);
          related.push({ file: log.file, line: e.fileLine, text: `${e.command ?? e.message}` });
        }
        if (last !== first) related.push(placeRelated(last.at));
        for (const p of ports.slice(0, 5)) related.push(placeRelated(p.at));
        const status = [...new Set(fails.map((f) => f.exitStatus).filter((s) => s !== undefined))];
        const when = (f: SyncFailed) => f.at.wallTime ?? f.at.time;
        ctx.report({
          messageId: 'failing',
          data: {
            tool,
            when: fails.length === 1 ? `once, at ${when(first)}` : `${fails.length} times, from ${when(first)} to ${when(last)}`,
            first: when(first),
            status: status.length ? ` (exit status ${status.join(', ')})` : '',
            what,
            said: `; it said: ${firstLine(last.output).slice(0, 300)}`,
            ports: ports.length ? `; ${ports.length} NodePort socket${ports.length === 1 ? '' : 's'} closed (${ports.slice(0, 3).map((p) => p.port ?? p.description).join(', ')}${ports.length > 3 ? ', …' : ''})` : '',
          },
          file: log.file,
          line: first.at.line,
          column: 1,
          text: first.at.text,
          ...(service ? { service } : {}),
          related,
        });
      }
    }
  },
});

/**
 * The Service a refused nft command belongs to: kube-proxy's per-Service chains carry it in their
 * names (`service-HASH-ns/name/proto/port`, also as the target of a map element or a jump), and
 * its no-endpoint map elements in their comments (`comment "ns/name:port"`).
 */
function nftEchoService(e: NftErrorEcho): string | undefined {
  for (const name of [e.chain, e.set, ...(e.targets ?? [])]) {
    const o = name !== undefined ? parseNftObjectName(name) : undefined;
    if (o?.namespace && o.name) return servicePortName(o.namespace, o.name, o.portName ?? null);
  }
  const c = e.comment !== undefined ? parseServiceComment(e.comment) : undefined;
  return c ? servicePortName(c.namespace, c.name, c.portName) : undefined;
}

