/**
 * Load the inputs and say first what could not be used; when nothing left can answer the
 * question (no ruleset for it), say why and give the "cannot tell" outcome instead of a
 * snapshot: with no ruleset, "no Services" would be a lie. Shared by services and summarize
 * (lint and trace decide more finely: standalone rules, a family).
 */
import { ExitCode } from '../judge/inputs.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { cannotTell, inputProblemLines, logAccountLines } from '../render/evidence.js';
import type { AppIO, Outcome } from './io.js';

export async function loadAnswerable(inputs: readonly string[], io: AppIO, question: string): Promise<{ snapshot: NodeSnapshot } | { outcome: Outcome }> {
  const snapshot = await io.load(inputs);
  for (const l of inputProblemLines(snapshot)) io.notice(l);
  const unknown = cannotTell(snapshot, question);
  if (!unknown) return { snapshot };
  io.notice(unknown);
  for (const l of logAccountLines(snapshot)) io.notice(l);
  return { outcome: { exit: ExitCode.CannotTell } };
}
