/**
 * Telling `iptables-restore --noflush` input (kube-proxy's payload) from an iptables-save dump.
 * iptables-save prints every built-in chain of every table it prints (`:PREROUTING ACCEPT [0:0]`),
 * whatever its contents; kube-proxy's payload declares only its own chains (`:KUBE-… - [0:0]`)
 * and never a built-in one, because it must not touch chains other programs own. So a file whose
 * tables declare user chains but no built-in chain can only be restore input. Read from the whole
 * parsed file, not the sniffed head: one table with built-ins anywhere makes it a dump.
 */
import { BUILTIN_CHAINS, type Ruleset } from '../model/netfilter.js';

/** LoadedFile.variant of an iptables-save-format file that is restore input (`kpx inspect` shows it). */
export const RESTORE_INPUT = 'restore-input';

export function isRestoreInput(rs: Ruleset): boolean {
  if (rs.tables.length === 0) return false;
  let userChains = 0;
  for (const t of rs.tables) {
    // Pasted rules without `*table` are a fragment (its own diagnostic), not a payload.
    if (t.implicit) return false;
    const builtins = BUILTIN_CHAINS[t.name] ?? [];
    for (const c of t.chains) {
      if (c.line === undefined) continue;
      if (c.builtin || builtins.includes(c.name)) return false;
      userChains++;
    }
  }
  return userChains > 0;
}

/** The ruleset, marked when it is restore input (a new object; the parsed one is left as it is). */
export function markRestoreInput(rs: Ruleset): Ruleset {
  return isRestoreInput(rs) ? { ...rs, restoreInput: true } : rs;
}
