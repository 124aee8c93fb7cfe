// Synthetic provider-notice batches (private/notices/<provider>.json): findings about one provider's data, shaped
// like the contract's ProviderNoticeFinding without the seen/acknowledged state, which the runtime keeps.
import { createHash } from 'node:crypto';
import type { NoticeBatch, NoticeFindingRecord } from '../common/dist-layout.ts';
import { hash32, saltOf } from './random.ts';

/** What a finding is about: one provider ID attached to one register entity. */
export interface NoticeSubject {
  reep_id: string;
  label: string;
  entity_type: string;
  provider: string;
  namespace: string;
  external_id: string;
  /** For duplicate-ID findings: the other entity holding the same provider ID. */
  other_reep_id?: string;
}

export type NoticeKind = 'score_outlier' | 'dob_mismatch' | 'duplicate_external_id' | 'stale_external_id' | 'label_mismatch';

/** Relative path of a provider's notice batch inside a release. */
export const noticePath = (provider: string): string => `private/notices/${provider}.json`;

const DAY_MS = 86_400_000;

function isoDaysBefore(iso: string, days: number): string {
  return new Date(Date.parse(iso) - days * DAY_MS).toISOString().replace('.000Z', 'Z');
}

/** The kind of finding that suits an entity type (ambiguous IDs always give duplicate_external_id). */
export function kindFor(subject: NoticeSubject, u: number): NoticeKind {
  if (subject.other_reep_id) return 'duplicate_external_id';
  if (subject.entity_type === 'match') return u % 3 === 0 ? 'stale_external_id' : 'score_outlier';
  if (subject.entity_type === 'player' || subject.entity_type === 'coach') {
    return u % 3 === 0 ? 'label_mismatch' : 'dob_mismatch';
  }
  return u % 2 === 0 ? 'label_mismatch' : 'stale_external_id';
}

/**
 * One finding. Its ID depends only on (seed, provider, kind, subject), so a successor release that still sees the
 * same problem reports the same finding_id and the runtime keeps its seen/acknowledged state.
 */
export function makeFinding(seed: number | string, subject: NoticeSubject, kind: NoticeKind, generatedAt: string): NoticeFindingRecord {
  const salt = saltOf(seed, `notice/${subject.provider}/${kind}/${subject.reep_id}`);
  const h = (k: number) => hash32(k, salt);
  const where = `${subject.provider}${subject.namespace ? '/' + subject.namespace : ''}/${subject.external_id}`;
  let title: string;
  let observed: string | null;
  let expected: string | null;
  let severity: string;
  let action: string | null;
  let extra: Record<string, unknown>;
  switch (kind) {
    case 'score_outlier': {
      const hs = h(1) % 4;
      const as = h(2) % 3;
      observed = `${hs + 3 + (h(3) % 4)}-${as}`;
      expected = `${hs}-${as}`;
      title = `Score for ${subject.label} disagrees with other providers`;
      severity = 'medium';
      action = 'Check the final score published on the match page.';
      extra = { field: 'score', agreeing_providers: 2 + (h(4) % 4) };
      break;
    }
    case 'dob_mismatch': {
      const y = 1985 + (h(1) % 20);
      const m = String(1 + (h(2) % 12)).padStart(2, '0');
      const d = 1 + (h(3) % 27);
      observed = `${y}-${m}-${String(d).padStart(2, '0')}`;
      expected = `${y}-${m}-${String(d + 1).padStart(2, '0')}`;
      title = `Date of birth for ${subject.label} differs from the consensus`;
      severity = 'low';
      action = 'Confirm the date of birth against an official source.';
      extra = { field: 'date_of_birth' };
      break;
    }
    case 'duplicate_external_id':
      observed = `${subject.reep_id}, ${subject.other_reep_id}`;
      expected = 'one entity';
      title = `ID ${subject.external_id} is attached to two different entities`;
      severity = 'high';
      action = 'Tell us which entity the ID belongs to, or retire one of the pages.';
      extra = { reep_ids: [subject.reep_id, subject.other_reep_id] };
      break;
    case 'stale_external_id':
      observed = 'HTTP 404';
      expected = 'HTTP 200';
      title = `Page for ${where} no longer resolves`;
      severity = 'medium';
      action = 'Redirect the old URL or tell us the replacement ID.';
      extra = { checked: 3 };
      break;
    case 'label_mismatch':
      observed = subject.label.toUpperCase();
      expected = subject.label;
      title = `Name "${subject.label}" is spelled differently on ${subject.provider}`;
      severity = 'low';
      action = null;
      extra = { field: 'name' };
      break;
  }
  const payload = { reep_id: subject.reep_id, external_id: subject.external_id, ...extra };
  return {
    finding_id: `${subject.provider}-${kind.replace(/_/g, '-')}-${h(9).toString(16).padStart(8, '0')}`,
    provider: subject.provider,
    kind,
    title,
    provider_ref: subject.external_id,
    source: { provider: subject.provider, namespace: subject.namespace, external_id: subject.external_id, entity_type: subject.entity_type },
    observed,
    expected,
    severity,
    suggested_action: action,
    payload,
    payload_hash: createHash('sha256').update(JSON.stringify(payload)).digest('hex'),
    first_seen_at: isoDaysBefore(generatedAt, 1 + (h(5) % 60)),
    last_seen_at: generatedAt,
  };
}

/** The JSON text of a batch, findings sorted by ID so the bytes do not depend on discovery order. */
export function noticeBatchJson(batch: NoticeBatch): string {
  const findings = [...batch.findings].sort((a, b) => (a.finding_id < b.finding_id ? -1 : a.finding_id > b.finding_id ? 1 : 0));
  return JSON.stringify({ ...batch, findings }, null, 2) + '\n';
}
