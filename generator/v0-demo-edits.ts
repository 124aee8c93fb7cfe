// `import-v0 --prior … --demo-edits`: the v0 data is one fixed snapshot, so a successor imported from it is the same
// data and its changelog is empty. These two edits, chosen by rule from the data (no ID is written down here), give
// the walkthrough's successor something to show: a duplicate club merged (`redirect_changed`, and the Transfermarkt
// ID the two shared resolves to one club instead of a 409) and one score corrected (`score_updated`). The score is
// invented for the demonstration; nothing else of the import changes.

/** The rows importV0 builds, in the column order of generator/tables.ts; edited in place. */
export interface V0Rows {
  entities: string[][];
  teamRows: string[][];
  matchRows: string[][];
  bridges: string[][];
  overlay: string[][];
  relationships: string[][];
}

export interface DemoEdits {
  /** The merge's redirect row, `[from_id, to_id, 'merged']`. */
  redirect: string[];
  /** One line per edit, for the command to print. */
  lines: string[];
}

const byId = (rows: string[][], id: string) => rows.find((r) => r[0] === id);

/**
 * Merges the first pair of clubs sharing a Transfermarkt `verein` ID (lowest ID, compared as a number) and adds one
 * goal to the home side of the earliest scored match (by date, then register ID). Refuses when the data has neither.
 */
export function applyDemoEdits(t: V0Rows): DemoEdits {
  const owners = new Map<string, string[]>();
  for (const b of t.bridges) {
    if (b[0] !== 'transfermarkt' || b[1] !== 'verein') continue;
    const list = owners.get(b[2]) ?? [];
    if (!list.includes(b[3])) list.push(b[3]);
    owners.set(b[2], list);
  }
  const shared = [...owners].filter(([, ids]) => ids.length === 2).sort(([a], [b]) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0));
  if (shared.length === 0) throw new Error('--demo-edits: the data has no Transfermarkt club ID shared by two clubs to merge');
  const [tmId, pair] = shared[0];
  // The survivor is the better-bridged club (on a tie, the lower register ID): a merge keeps what is best known.
  const bridgeCount = (id: string) => t.bridges.filter((b) => b[3] === id).length;
  const [survivor, loser] = [...pair].sort((a, b) => bridgeCount(b) - bridgeCount(a) || (a < b ? -1 : 1));
  const label = (id: string) => byId(t.entities, id)?.[3] ?? id;
  const lines = [`merged ${loser} (${label(loser)}) into ${survivor} (${label(survivor)}), which shared transfermarkt verein ${tmId}`];

  const drop = (rows: string[][]) => rows.splice(rows.findIndex((r) => r[0] === loser), 1);
  drop(t.entities);
  drop(t.teamRows);
  // The loser's bridges move to the survivor, less those it already has; its knowledge-base link goes unless the
  // survivor has none; every reference to it now names the survivor.
  const has = new Set(t.bridges.filter((b) => b[3] === survivor).map((b) => `${b[0]}\u0000${b[1]}\u0000${b[2]}`));
  for (let i = t.bridges.length - 1; i >= 0; i--) {
    const b = t.bridges[i];
    if (b[3] !== loser) continue;
    if (has.has(`${b[0]}\u0000${b[1]}\u0000${b[2]}`)) t.bridges.splice(i, 1);
    else b[3] = survivor;
  }
  const loserLink = t.overlay.findIndex((o) => o[0] === loser);
  if (loserLink >= 0) {
    if (byId(t.overlay, survivor)) t.overlay.splice(loserLink, 1);
    else t.overlay[loserLink][0] = survivor;
  }
  for (const r of t.relationships) for (const at of [0, 1]) if (r[at] === loser) r[at] = survivor;
  for (const m of t.matchRows) for (const at of [9, 10]) if (m[at] === loser) m[at] = survivor;

  const scored = t.matchRows.filter((m) => m[3] !== '' && m[4] !== '').sort((a, b) => (a[11] + a[0] < b[11] + b[0] ? -1 : 1));
  if (scored.length === 0) throw new Error('--demo-edits: the data has no scored match to correct');
  const m = scored[0];
  const before = `${m[3]}–${m[4]}`;
  m[3] = String(Number(m[3]) + 1);
  lines.push(`corrected the score of ${m[0]} (${m[2]}, ${m[11]}) from ${before} to ${m[3]}–${m[4]} (invented for the demonstration)`);
  return { redirect: [loser, survivor, 'merged'], lines };
}
