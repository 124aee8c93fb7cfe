// Name key records: stage 2 writes one line per match key of each live entity's names (common/name-keys.ts), and the
// name keys stage (compiler/stages/build-name-keys.ts) gathers them by key. Lines are grouped by the key's hash, so
// every line of one key meets in one group, and a group is a few megabytes at full size.
//
// A line: `key \t bridges \t source \t register ID \t type index \t country \t name`. Keys are made of [a-z0-9 :]
// and the other fields hold no tab or newline (the name's are made spaces), so no escaping is needed.
import { bucketOf } from '../../common/hash.ts';
import { MAX_NAME_CHARS, nameKeys, nameTokens } from '../../common/name-keys.ts';
import { ownCopy } from '../../common/own-copy.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';

const NAME_GROUPS = 256;

/** Where a name comes from, strongest first: the entity's label, one of its aliases, an alias of its overlay. */
const NAME_LABEL = 0;
const NAME_ALIAS = 1;
const NAME_OVERLAY = 2;

const CONTROL = /[\t\n\r]/g;

/** What one stage-2 range hands on: its name key lines and the countries its entities named. */
export interface NamePart {
  lines: GroupSpillHandle;
  countries: string[];
}

/**
 * Collects one stage-2 range's name key lines, an entity at a time. Matches are left out: their labels ("Arsenal v
 * Chelsea") name two teams, not the match, and they are most of a release's entities.
 */
export class NameKeyCollector {
  private readonly lines: GroupSpill;
  private readonly countries = new Set<string>();

  constructor(dir: string) {
    this.lines = new GroupSpill({ dir, groups: NAME_GROUPS });
  }

  /** One live entity's names; each key of each name once, from the strongest source that has it. */
  add(id: string, typeIndex: number, bridgeCount: number, country: string, label: string, aliases: readonly { name: string }[], overlayAliases: readonly { name: string }[] | null): void {
    const c = country.replace(CONTROL, ' ');
    if (c) this.countries.add(ownCopy(c));
    // key -> normalised name -> [name, source]: of the names that normalise alike ("Série A", "Serie A") under a
    // key, the first from the strongest source is kept, the label first of all.
    const seen = new Map<string, Map<string, [string, number]>>();
    const take = (name: string, source: number) => {
      const form = name.slice(0, MAX_NAME_CHARS).replace(CONTROL, ' ').trim();
      if (!form) return;
      const normalised = nameTokens(form).join(' ');
      for (const key of nameKeys(form)) {
        let forms = seen.get(key);
        if (!forms) seen.set(key, (forms = new Map()));
        const had = forms.get(normalised);
        if (!had || had[1] > source) forms.set(normalised, [form, source]);
      }
    };
    take(label, NAME_LABEL);
    for (const x of aliases) take(x.name, NAME_ALIAS);
    if (overlayAliases) for (const x of overlayAliases) take(x.name, NAME_OVERLAY);
    for (const [key, forms] of seen) {
      const group = bucketOf(key, NAME_GROUPS);
      for (const [form, source] of forms.values()) this.lines.addLine(group, `${key}\t${bridgeCount}\t${source}\t${id}\t${typeIndex}\t${c}\t${form}`);
    }
  }

  finish(): NamePart {
    this.lines.seal();
    return { lines: this.lines.handle(), countries: [...this.countries] };
  }
}

/** One name key line, read back. */
export interface NameKeyLine {
  key: string;
  bridges: number;
  source: number;
  id: string;
  type: number;
  country: string;
  name: string;
}

/** Calls `use` for each line of a group's text, in the order they were written. */
export function forEachNameLine(text: string, use: (line: NameKeyLine) => void): void {
  for (let pos = 0; pos < text.length; ) {
    const nl = text.indexOf('\n', pos);
    const f = text.slice(pos, nl).split('\t');
    use({ key: f[0], bridges: Number(f[1]), source: Number(f[2]), id: f[3], type: Number(f[4]), country: f[5], name: f[6] });
    pos = nl + 1;
  }
}
