// The request parameters of the contract: what the document states for each, and what request-check.ts reads.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { Include } from '../../common/ids.ts';
import { MAX_QUERY_CHARS, MAX_QUERY_TOKENS, MIN_PREFIX, MIN_QUERY_CHARS } from '../../common/normalise.ts';
import { MAX_PATH_PARAMETER_CHARS } from '../../common/request-limits.ts';
import type { ErrorCode } from './error-codes.ts';
import { ChangeEventType, EntityType, IncludeName, RegisterId, Stamp } from './schemas.ts';
import { oneOfValues, ref } from './schema-kit.ts';

/** A parameter of an operation; `T` is the value a route reads (null when absent without a default). */
export interface Parameter<N extends string = string, T = unknown> {
  name: N;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description: string;
  schema: TSchema;
  style?: 'form';
  explode?: boolean;
  /** `?type=` reads as no `type` at all. */
  allowEmptyValue?: boolean;
  /**
   * How the text becomes a value: an integer, a set of include names (cached), or the parameter's own parse; else
   * the text itself.
   */
  parse?: 'integer' | 'include' | Parse<T>;
  /** Phantom: the value type a reader gives. */
  readonly value?: T;
}

/**
 * Refuses a parameter's value: a 400 under the code its schema's `x-error` names (the first, unless `code` picks
 * another the schema lists), with this message.
 */
export type Refuse = (message: string, opts?: { detail?: string; code?: ErrorCode }) => never;
/** A parameter's own reading: every value given (none when absent; at most one unless it explodes) to its value. */
export type Parse<T> = (values: readonly string[], refuse: Refuse) => T;

/** The codes a schema's `x-error` names (a code, or a list whose first is the default), or `fallback`. */
export function schemaCodes(schema: TSchema, fallback: ErrorCode): readonly ErrorCode[] {
  const x = (schema as { 'x-error'?: unknown })['x-error'];
  return typeof x === 'string' ? [x as ErrorCode] : Array.isArray(x) ? (x as ErrorCode[]) : [fallback];
}

/** The values a reader gives for `P`, by parameter name. */
export type ParameterValues<P extends readonly Parameter[]> = { [X in P[number] as X['name']]: X extends Parameter<string, infer T> ? T : never };

/** Named parameters (`#/components/parameters/<name>`), in declaration order. */
export const componentParameters = new Map<string, Parameter>();
const names = new WeakMap<Parameter, string>();

/** Registers `p` as a component parameter: operations then refer to it by `$ref`. */
function named<P extends Parameter>(name: string, p: P): P {
  componentParameters.set(name, p);
  names.set(p, name);
  return p;
}
export const parameterName = (p: Parameter): string | undefined => names.get(p);


type Spec<N extends string, T> = Omit<Parameter<N, T>, 'name' | 'in' | 'required' | 'value'> & { required?: boolean };
const query = <N extends string, T>(name: N, spec: Spec<N, T>): Parameter<N, T> => ({ name, in: 'query', required: false, ...spec });
const path = <N extends string>(name: N, description: string, schema: TSchema): Parameter<N, string> => ({ name, in: 'path', required: true, description, schema });

/** An integer query parameter in [minimum, maximum] with a default. */
const intQuery = <N extends string>(name: N, description: string, minimum: number, maximum: number | undefined, def: number, code?: ErrorCode) =>
  query<N, number>(name, {
    description,
    schema: Type.Integer({ minimum, ...(maximum === undefined ? {} : { maximum }), default: def, ...(code ? { 'x-error': code } : {}) }),
    parse: 'integer',
  });
/** A query parameter read by its own parse, each failure a 400 under a code its schema's `x-error` lists. */
export const parsedQuery = <N extends string, T>(name: N, description: string, schema: TSchema, parse: Parse<T>, form?: { explode: boolean }) =>
  query<N, T>(name, { description, schema, parse, ...(form ? { style: 'form' as const, explode: form.explode } : {}) });
/** A free text query parameter (null when absent). */
const textQuery = <N extends string>(name: N, description: string, schema: TSchema = Type.String()) =>
  query<N, string | null>(name, { description, schema });

export const ReepId = named(
  'ReepId',
  path('reep_id', 'A register ID. Not matching the pattern: 400 `invalid_id` (no cost). Never published: 404 `not_found`.', ref(RegisterId, { 'x-error': 'invalid_id' })),
);
export const Provider = named('Provider', path('provider', 'Provider key.', Type.String({ minLength: 1 })));
export const ExternalId = named(
  'ExternalId',
  path(
    'external_id',
    `The provider's own ID, URL-encoded (a \`/\` inside the ID is sent as \`%2F\`); 1 to ${MAX_PATH_PARAMETER_CHARS} characters without NUL.`,
    Type.String({ minLength: 1, maxLength: MAX_PATH_PARAMETER_CHARS, pattern: '^[^\\u0000]*$', 'x-error': 'invalid_id' }),
  ),
);
export const IncludeParam = named(
  'Include',
  query<'include', ReadonlySet<Include>>('include', {
    description:
      'Comma-separated expansions. Order and repetition do not matter (same bytes). An unknown name is 400 ' +
      '`unknown_include`. Without include, entity and resolve responses are core-only.',
    style: 'form',
    explode: false,
    schema: Type.Array(ref(IncludeName), { 'x-error': 'unknown_include' }),
    parse: 'include',
  }),
);
export const Lang = named('Lang', textQuery('lang', 'Language tag; when `include` has `aliases`, keeps only aliases of that language.'));
export const Namespace = named(
  'Namespace',
  query<'namespace', string>('namespace', { description: 'Provider ID partition; empty when the provider does not partition.', schema: Type.String({ default: '' }) }),
);
export const EntityTypeFilter = named(
  'EntityTypeFilter',
  query<'type', Static<typeof EntityType> | null>('type', {
    description: 'Entity type filter; an unknown type is 400 `unknown_entity_type`.',
    schema: ref(EntityType, { 'x-error': 'unknown_entity_type' }),
    allowEmptyValue: true,
  }),
);
export const SearchQuery = named(
  'SearchQuery',
  query<'q', string>('q', {
    required: true,
    description:
      `At least ${MIN_QUERY_CHARS} normalised characters and at most ${MAX_QUERY_TOKENS} tokens, else 400 \`invalid_query\`. ` +
      `The last token also matches as a prefix (${MIN_PREFIX}+ characters).`,
    schema: Type.String({ minLength: MIN_QUERY_CHARS, maxLength: MAX_QUERY_CHARS, 'x-error': 'invalid_query' }),
  }),
);
export const SearchSort = named(
  'SearchSort',
  query<'sort', 'relevance' | 'bridges'>('sort', {
    description: '`bridges` orders by public bridge coverage, not popularity.',
    schema: oneOfValues(['relevance', 'bridges'], { default: 'relevance' }),
  }),
);
export const SearchLimit = named('SearchLimit', intQuery('limit', 'Out of range: 400 `invalid_parameter`.', 1, 20, 20));
export const RelationshipFamily = named('RelationshipFamily', textQuery('family', 'Restrict to one relationship family.'));
export const RelationshipLimit = named(
  'RelationshipLimit',
  intQuery('limit', 'Maximum relationship families returned. Out of range: 400 `invalid_parameter`.', 1, 100, 25),
);
export const NoticesLimit = named('NoticesLimit', intQuery('limit', 'Out of range: 400 `invalid_parameter`.', 1, 100, 25));
export const NoticesOffset = named('NoticesOffset', intQuery('offset', 'Negative: 400 `invalid_parameter`.', 0, undefined, 0));
const stampQuery = <N extends string>(name: N, description: string) =>
  textQuery(name, description, ref(Stamp, { 'x-error': 'unknown_stamp' }));
export const Since = named(
  'Since',
  stampQuery('since', 'Another way to write `from`: changes after this release (the body says both `since` and `from`). Unknown stamp: 400 `unknown_stamp`.'),
);
export const From = named('From', stampQuery('from', 'Lower release of an explicit window (changes after it). Unknown stamp: 400 `unknown_stamp`.'));
export const To = named('To', stampQuery('to', 'Upper release of the window (inclusive). `from` newer than `to`: 400 `invalid_range`.'));
export const EventTypeFilter = named(
  'EventTypeFilter',
  query<'type', Static<typeof ChangeEventType> | null>('type', { description: 'Only events of this type.', schema: ref(ChangeEventType) }),
);
export const ProviderFilter = named(
  'ProviderFilter',
  textQuery('provider', 'Only `provider_updated` events touching this provider.', Type.String({ minLength: 1 })),
);
export const ChangesLimit = named('ChangesLimit', intQuery('limit', 'Events per page. Out of range: 400 `invalid_parameter`.', 1, 1000, 500));
export const Cursor = named(
  'Cursor',
  textQuery('cursor', 'Opaque `next_cursor` of the previous page. Reused with other filters: 400 `stale_cursor`.', Type.String({ minLength: 1 })),
);
// Registered for the preflight operation, which names it (contract/document.ts: parameterRef).
named('AccessControlRequestMethod', {
  name: 'Access-Control-Request-Method',
  in: 'header',
  required: true,
  description: 'What makes an OPTIONS a CORS preflight (browsers send it); without it the answer is 405.',
  schema: Type.String({ minLength: 1 }),
});
export const IfNoneMatch = named('IfNoneMatch', {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'An ETag from an earlier response; a match answers 304 with no body and no cost.',
  schema: Type.String(),
});
export const FirstRow = named(
  'FirstRow',
  intQuery('first_row', 'CSV body only: the number of its first row, so a file sent in chunks is numbered across them. Below 1: 400 `invalid_parameter`.', 1, undefined, 1),
);
