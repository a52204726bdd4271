/**
 * kube-proxy's own restore payloads (test/fixtures/kube-proxy-restore: TestSyncProxyRulesRepeated,
 * nine syncs in a row, three of them deleting chains with -X), and small constructed -X cases
 * with whether iptables-restore takes them (measured in test/kernel/restore-roundtrip.test.ts).
 */
import { fileURLToPath } from 'node:url';

export const FIX = (n: number) => fileURLToPath(new URL(`../fixtures/kube-proxy-restore/sync-repeated-${n}.rules`, import.meta.url));
export const STEPS = [1, 2, 3, 4, 5, 6, 7, 8, 9];
/** The chains each step's `-X` lines delete (kube-proxy's expected payloads). */
export const DELETED: Record<number, string[]> = {
  3: ['KUBE-SEP-UHEGFW77JX3KXTOV', 'KUBE-SVC-2VJB64SDSIJUP5T6'],
  6: ['KUBE-SEP-BSWRHOQ77KEXZLNL'],
  9: ['KUBE-SEP-AYCN5HPXMIRJNJXU', 'KUBE-SVC-4SW47YFZTEDKD3PK'],
};

/**
 * Constructed restore inputs (unit cases), and which iptables-restore refuses each (measured in
 * test/kernel/restore-roundtrip.test.ts with both backends: they agree but on a built-in chain).
 * `code`: what kpx says — an error where both refuse, a warning where the backend decides.
 */
export const DELETE_CASES: Record<string, { text: string; refused: boolean | { nf_tables: boolean; legacy: boolean }; code?: string }> = {
  'an empty chain': { text: '*nat\n:A - [0:0]\n:B - [0:0]\n-A B -j RETURN\n-X A\nCOMMIT\n', refused: false },
  'every user chain (a bare -X)': { text: '*nat\n:A - [0:0]\n:B - [0:0]\n-X\nCOMMIT\n', refused: false },
  'declared again after the deletion': { text: '*nat\n:A - [0:0]\n-X A\n:A - [0:0]\n-A A -j RETURN\nCOMMIT\n', refused: false },
  'a chain with rules': { text: '*nat\n:A - [0:0]\n-A A -j RETURN\n-X A\nCOMMIT\n', refused: true, code: 'extract/delete-chain-refused' },
  'a rule for the chain after its deletion': { text: '*nat\n:A - [0:0]\n-X A\n-A A -j RETURN\nCOMMIT\n', refused: true, code: 'extract/rule-for-deleted-chain' },
  'a chain another rule jumps to': { text: '*nat\n:A - [0:0]\n:B - [0:0]\n-A B -j A\n-X A\nCOMMIT\n', refused: true, code: 'extract/jump-to-deleted-chain' },
  'a jump to the chain after its deletion': { text: '*nat\n:A - [0:0]\n:B - [0:0]\n-X A\n-A B -j A\nCOMMIT\n', refused: true, code: 'extract/jump-to-deleted-chain' },
  'a built-in chain': { text: '*nat\n:PREROUTING ACCEPT [0:0]\n-X PREROUTING\nCOMMIT\n', refused: { nf_tables: false, legacy: true }, code: 'extract/delete-builtin-chain' },
};

