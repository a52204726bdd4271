/**
 * Cheap content sniffers for `ipset list` and `ipset save` (no parser import, regexes only).
 */

/**
 * Structurally a `FormatSniffer` (src/load/format.ts); declared here because grammars/ must not
 * import from src/.
 */
export interface IpsetSniffer {
  readonly id: 'ipset-list' | 'ipset-save';
  sniff(lines: readonly string[]): number;
}

const LIST_NAME = /^\s*Name: \S+\s*$/;
const LIST_TYPE = /^\s*Type: (hash|bitmap|list):[a-z,]+\s*$/;
const LIST_FIELD = /^\s*(Revision: \d+|Header: .*|Size in memory: \d+|References: \d+|Number of entries: \d+|Members:)\s*$/;
const LIST_XML = /^\s*(<ipsets>|<ipset name="[^"]*">)\s*$/;
const SAVE_CREATE = /^\s*create \S+ (hash|bitmap|list):[a-z,]+(\s|$)/;
/** `add NAME ELEMENT [extensions]`; not nft scripts (`add table|chain|rule|element … { … ; }`). */
const SAVE_ADD = /^\s*add (?!(?:table|chain|rule|element|set|map|flowtable|counter|quota|limit)\s)\S+ [^\s{};]+(?:\s+(?:timeout|packets|bytes|comment|skbmark|skbprio|skbqueue|nomatch)\b[^{};]*)?\s*$/;

function scan(lines: readonly string[], limit = 200): readonly string[] {
  return lines.length > limit ? lines.slice(0, limit) : lines;
}

export const ipsetListSniffer: IpsetSniffer = {
  id: 'ipset-list',
  sniff(lines) {
    let names = 0;
    let types = 0;
    let fields = 0;
    let xml = 0;
    for (const l of scan(lines)) {
      if (LIST_NAME.test(l)) names++;
      else if (LIST_TYPE.test(l)) types++;
      else if (LIST_FIELD.test(l)) fields++;
      else if (LIST_XML.test(l)) xml++;
    }
    if (names > 0 && types > 0) return fields > 0 ? 0.98 : 0.9;
    if (types > 0 && fields > 0) return 0.8;
    if (xml > 0) return 0.85;
    if (names > 0 && fields >= 2) return 0.6;
    return 0;
  },
};

export const ipsetSaveSniffer: IpsetSniffer = {
  id: 'ipset-save',
  sniff(lines) {
    let creates = 0;
    let adds = 0;
    let other = 0;
    for (const l of scan(lines)) {
      if (SAVE_CREATE.test(l)) creates++;
      else if (SAVE_ADD.test(l)) adds++;
      else if (l.trim() !== '') other++;
    }
    if (creates > 0) return 0.98;
    // A fragment with only `add` lines (head cut off): weak unless it is nearly all adds.
    if (adds >= 3 && adds >= 4 * other) return 0.5;
    return 0;
  },
};
