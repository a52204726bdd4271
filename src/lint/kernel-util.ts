/** What the kernel-switch rules share: the interfaces Service traffic comes in on, and sysctl evidence as findings' text. */
import { interfaceRole, type NetInterface } from '../model/iface.js';
import type { SwitchEvidence } from '../model/switches.js';
import type { LintContext } from './context.js';

/** Interfaces Service traffic may arrive on: uplinks, bridges, tunnels and pod veths (not lo, not kube-ipvs0). */
export function ingressInterfaces(ctx: LintContext): NetInterface[] {
  return ctx.snapshot.interfaces.filter((i) => !['loopback', 'ipvs-dummy'].includes(interfaceRole(i.name)));
}

/** Bridges: by `ip -d link`'s kind, else by the CNI naming conventions. */
export function bridges(ctx: LintContext): NetInterface[] {
  return ctx.snapshot.interfaces.filter((i) => i.linkInfo?.kind === 'bridge' || (i.linkInfo?.kind === undefined && interfaceRole(i.name) === 'bridge'));
}

/** The line a reading rests on (the last one with a place), for the finding's position. */
export function decisive(ev: readonly SwitchEvidence[]): (SwitchEvidence & { file: string; line: number }) | undefined {
  return [...ev].reverse().find((e): e is SwitchEvidence & { file: string; line: number } => e.file !== null && e.line !== null);
}

export const evidenceLine = (e: SwitchEvidence) => (e.value === null ? `${e.key} (absent)` : `${e.key} = ${e.value}`);
