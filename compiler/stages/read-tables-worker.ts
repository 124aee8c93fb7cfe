// Worker-thread entry of stage 1's side reads (see readTables).
import { readSide, type SideReadJob, type SideReadResult } from './read-tables.ts';

export const run = (job: SideReadJob): Promise<SideReadResult> => readSide(job);
