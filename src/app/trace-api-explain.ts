/**
 * `kpx trace ns/name[:port]` for a Service the dumps do not implement, when the API's objects are
 * given: a Service kube-proxy programs nothing for (headless, ExternalName) is explained, not "not
 * found"; one the API has and kube-proxy should program here is said to be missing (lint's
 * api-service-not-programmed). Names the dumps or the API give are resolved by the trace target
 * itself (src/trace/target.ts): the API's names flow into the resolved Services.
 */
import { intendedDataplane } from '../kube/intent.js';
import { dataplaneShownWhole } from '../kube/drift.js';
import { formatHostPort } from '../model/addr.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { Target } from '../trace/target.js';
import { explainWithoutRules } from '../render/api.js';
import { ExitCode } from '../judge/inputs.js';

export function explainFromApi(target: Extract<Target, { kind: 'service' }>, snapshot: NodeSnapshot): { text: string; exit: number } | undefined {
  if (!snapshot.api) return undefined;
  const { namespace: ns, name, port } = target;
  const intent = intendedDataplane(snapshot.api, snapshot);
  const explained = intent.withoutRules.find((w) => w.service.namespace === ns && w.service.name === name);
  if (explained) return { text: `${explainWithoutRules(explained)}\n`, exit: ExitCode.Ok };
  const intended = intent.ports.find((p) => p.namespace === ns && p.name === name && (port === undefined || p.portName === port || String(p.port) === port));
  // "Not programmed" only from whole dumps and a Service whose type and labels the evidence shows.
  if (intended && (!dataplaneShownWhole(snapshot, intended.family) || intended.unknown.has('proxyName') || intended.unknown.has('type')))
    return {
      text: `${target.text} is in the API (${formatHostPort(intended.clusterIP, intended.port)}/${intended.protocol}); whether this node programs it cannot be told from this evidence\n`,
      exit: ExitCode.CannotTell,
    };
  if (intended)
    return {
      text: `${target.text} is in the API (${formatHostPort(intended.clusterIP, intended.port)}/${intended.protocol}) but not programmed on this node: \`kpx lint\` reports it (api-service-not-programmed)\n`,
      exit: ExitCode.Findings,
    };
  return undefined;
}
