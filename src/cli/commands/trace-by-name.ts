/**
 * `kpx trace ns/name[:port]`: the Service port by name — named by the dumps, or by the API's objects
 * when given (IPVS virtual servers carry no names) — traced at its cluster IP. A Service the API has
 * but kube-proxy programs nothing for (headless, ExternalName) is explained, not "not found".
 */
import { loadFromOptions } from '../inputs.js';
import { resolveServices } from '../../kube/resolve.js';
import { intendedDataplane } from '../../kube/intent.js';
import { formatHostPort } from '../../model/addr.js';
import { explainWithoutRules } from '../../render/api.js';
import { ExitCode, UsageError } from '../exit.js';
import type { TraceCliOptions } from './trace.js';

const NAME = /^([a-z0-9][-a-z0-9.]*)\/([a-z0-9][-a-z0-9.]*)(?::([-a-z0-9]+))?(?:\/(tcp|udp|sctp))?$/i;

/** Whether the trace target is a Service name rather than VIP:PORT. */
export const isServiceName = (target: string): boolean => NAME.test(target) && !/^\[|^\d+\.\d+\.\d+\.\d+:/.test(target);

export async function traceByName(target: string, opts: TraceCliOptions, traceAddress: (dest: string, opts: TraceCliOptions) => Promise<number>): Promise<number> {
  const [, ns, name, port, proto] = NAME.exec(target)!;
  const snapshot = await loadFromOptions([], opts, false);
  const res = await resolveServices(snapshot);
  const ports = res.services.filter(
    (s) => s.namespace === ns && s.name === name && s.clusterIP !== null && (port === undefined || s.portName === port || String(s.port) === port) && (proto === undefined || s.protocol === proto.toLowerCase()),
  );
  const vips = [...new Map(ports.map((s) => [`${formatHostPort(s.clusterIP!, s.port)}/${s.protocol ?? 'tcp'}`, s])).keys()];
  if (vips.length === 1) return traceAddress(vips[0], opts);
  if (vips.length > 1) throw new UsageError(`${target} has several ports: ${ports.map((s) => `${ns}/${name}:${s.portName ?? s.port}`).join(', ')}; name one (ns/name:port)`);
  const intent = snapshot.api ? intendedDataplane(snapshot.api, snapshot) : undefined;
  const explained = intent?.withoutRules.find((w) => w.service.namespace === ns && w.service.name === name);
  if (explained) {
    process.stdout.write(`${explainWithoutRules(explained)}\n`);
    return ExitCode.Ok;
  }
  const intended = intent?.ports.find((p) => p.namespace === ns && p.name === name && (port === undefined || p.portName === port || String(p.port) === port));
  if (intended) {
    process.stdout.write(`${target} is in the API (${formatHostPort(intended.clusterIP, intended.port)}/${intended.protocol}) but not programmed on this node: \`kpx lint\` reports it (api-service-not-programmed)\n`);
    return ExitCode.Findings;
  }
  throw new UsageError(`no Service ${target} in ${snapshot.api ? 'these dumps or the API objects' : 'these dumps (give `kubectl get svc,endpointslices,nodes,pods -A -o json` to name Services the dumps do not)'}`);
}
