import type { KubeProxyEvent } from '../../model/kube-proxy.js';
import { createRule, type Related } from '../rule.js';
import { kubeProxyLogs, placeRelated } from '../kube-proxy-util.js';

type Exited = Extract<KubeProxyEvent, { kind: 'exited' }>;
type Unit = Extract<KubeProxyEvent, { kind: 'unit-state' }>;

export default createRule({
  id: 'kube-proxy-exited',
  meta: {
    description: "kube-proxy's log shows it exiting (a fatal line, \"Error running ProxyServer\", systemd's unit failing): nothing updates this node's Service rules.",
    severity: 'error',
    requires: ['kube-proxy-log'],
    standalone: true,
    relevant: () => false,
    docs: [
      'kube-proxy exits when it cannot start: a fatal klog line (`F…`), `"Error running ProxyServer" err=…` and',
      '`"command failed"` (1.2x and later), or — run by systemd — the unit\'s main process exiting, the unit entering',
      'the failed state, restarts refused. Since 1.26 it also exits when asked for IPVS on a node that cannot do',
      'it (`can\'t use the IPVS proxier: …`) instead of falling back to iptables. While it is down nothing',
      'writes the node\'s Service rules: the dumps show what the last kube-proxy wrote, or no Service rules at all,',
      'and new Services, endpoints and NodePorts do not work on this node. A DaemonSet pod in CrashLoopBackOff',
      'restarts it again and again with the same error.',
      '',
      '**Fix:** fix what the exit message names (the configuration file or kubeconfig path, the IPVS kernel',
      'modules and ipset, the node IP or --bind-address), then check that kube-proxy logs `Using … Proxier` and',
      'stays up.',
      '',
      '**Example** (kubernetes/kubernetes#16785): `F1104 05:04:24.174215 24007 server.go:101] Unable to create',
      'proxer: failed to select a host interface: Unable to select an IP.`, then systemd: `kube-proxy.service start',
      'request repeated too quickly, refusing to start.`',
    ].join('\n'),
    messages: {
      exited: 'kube-proxy exited{{when}}: {{reason}}{{unit}} — nothing updates this node\'s Service rules since then',
      unitFailed: 'systemd says kube-proxy\'s unit {{state}}{{when}}: nothing updates this node\'s Service rules while it is down',
    },
  },
  check(ctx) {
    for (const log of kubeProxyLogs(ctx)) {
      const exits = log.events.filter((e): e is Exited => e.kind === 'exited');
      const units = log.events.filter((e): e is Unit => e.kind === 'unit-state' && e.state !== 'starting' && e.state !== 'stopping');
      const when = (e: KubeProxyEvent) => (e.at.wallTime ?? e.at.time ? ` at ${e.at.wallTime ?? e.at.time}` : '');
      const last = exits[exits.length - 1];
      if (last) {
        const refused = units.find((u) => u.state === 'start-refused' || u.state === 'failed');
        const related: Related[] = [...exits.slice(0, -1).slice(-3), ...units.slice(0, 3)].map((e) => placeRelated(e.at));
        ctx.report({
          messageId: 'exited',
          data: { when: when(last), reason: last.reason.slice(0, 300), unit: refused ? `; systemd: ${refused.text.slice(0, 120)}` : '' },
          file: log.file,
          line: last.at.line,
          column: 1,
          text: last.at.text,
          related,
        });
        continue;
      }
      const failed = units.find((u) => u.state === 'failed' || u.state === 'start-refused') ?? units.find((u) => u.state === 'exited');
      if (!failed) continue;
      const state = failed.state === 'start-refused' ? 'refused to restart' : failed.state === 'failed' ? 'failed' : 'exited';
      ctx.report({ messageId: 'unitFailed', data: { state, when: when(failed) }, file: log.file, line: failed.at.line, column: 1, text: failed.at.text, related: units.filter((u) => u !== failed).slice(0, 3).map((u) => placeRelated(u.at)) });
    }
  },
});
