// Worker-thread entry of stage 3 (see startResolve).
import { buildResolve, type ResolveJob, type ResolveResult } from './build-resolve.ts';

export const run = (job: ResolveJob): Promise<ResolveResult> => buildResolve(job);
