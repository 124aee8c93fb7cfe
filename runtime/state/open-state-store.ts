// Which state store a server runs on: the journal in a state folder, or, for a read-only mirror (no folder), the
// in-memory store that refuses acknowledgements. One decision for `serve` in one process and a --workers primary.
import type { StateStore } from '../interfaces.ts';
import { openJournalStore } from './journal-store.ts';
import { createReadOnlyStore } from './read-only-store.ts';

export async function openStateStore(state: string | null): Promise<StateStore> {
  return state === null ? createReadOnlyStore() : await openJournalStore({ dir: state });
}
