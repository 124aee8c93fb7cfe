// Worker-thread entry of stage 2: builds one partition range (see buildEntities).
import { buildEntityRange, type EntityRangeJob, type EntityRangeResult } from './build-entities.ts';

export const run = (job: EntityRangeJob): Promise<EntityRangeResult> => buildEntityRange(job);
