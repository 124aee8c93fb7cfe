// Request validation derived from the contract: parameters and bodies checked by TypeBox checks compiled once, each
// failure answered with the code the schema names (`x-error`, default invalid_parameter or invalid_body).
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { INCLUDES, type Include } from '../../common/ids.ts';
import { ApiError } from '../api-error.ts';
import type { ErrorCode } from './error-codes.ts';
import { schemaCodes, type Parameter, type ParameterValues, type Refuse } from './parameters.ts';
import { inlineRefs } from './schema-kit.ts';

/** A check compiled from a contract schema (references inlined: the compiler knows nothing of components). */
function compileCheck<T extends TSchema>(schema: T): TypeCheck<T> {
  return TypeCompiler.Compile(inlineRefs(schema));
}

const errorCode = (schema: TSchema, fallback: ErrorCode): ErrorCode => {
  const code = (schema as { 'x-error'?: unknown })['x-error'];
  return typeof code === 'string' ? (code as ErrorCode) : fallback;
};

// ---------------------------------------------------------------------------------------------------------------
// Parameters.

// Parsed `include` strings: clients send the same few on every call. Bounded, since spacing and repeats make
// endless spellings of the same set.
const parsedIncludes = new Map<string, ReadonlySet<Include>>();
const MAX_PARSED_INCLUDES = 64;
const NO_INCLUDES: ReadonlySet<Include> = new Set();

/**
 * Parses `include` (comma-separated string or array); order and repetition do not matter. The set may be shared
 * with other calls: read it, do not change it. 400 `code` for a name the contract does not know.
 */
export function parseInclude(raw: string | readonly string[] | null | undefined, code: ErrorCode = 'unknown_include'): ReadonlySet<Include> {
  if (raw === null || raw === undefined) return NO_INCLUDES;
  if (typeof raw === 'string') {
    const known = parsedIncludes.get(raw);
    if (known) return known;
  }
  const set = new Set<Include>();
  // A comma list is what the schema's `style: form, explode: false` means; an array comes from a batch body.
  for (const p of typeof raw === 'string' ? raw.split(',') : raw.flatMap((x) => x.split(','))) {
    const name = p.trim();
    if (name === '') continue;
    if (!(INCLUDES as readonly string[]).includes(name)) {
      throw new ApiError(400, code, `Unknown include ${JSON.stringify(name.slice(0, 64))}; allowed: ${INCLUDES.join(', ')}.`);
    }
    set.add(name as Include);
  }
  if (typeof raw === 'string') {
    if (parsedIncludes.size >= MAX_PARSED_INCLUDES) parsedIncludes.clear();
    parsedIncludes.set(raw, set);
  }
  return set;
}

/** Reads one parameter's text from a request and gives its checked value (or throws its 400). */
type Read = (params: Record<string, string>, query: URLSearchParams) => unknown;

const DIGITS = /^\d{1,9}$/;

/**
 * The reader of one parameter, specialised once to its kind (path, include, integer, text) so that a request pays
 * for no decision the declaration already made: this runs on every entity lookup.
 */
function readerOf(p: Parameter, refuseRepeats = true): Read {
  const schema = inlineRefs(p.schema) as TSchema & { default?: unknown; minimum?: number; maximum?: number; enum?: unknown[] };
  const codes = schemaCodes(schema, 'invalid_parameter');
  const code = codes[0];
  const name = p.name;
  const absent = schema.default ?? null;
  const required = p.required;
  const refuse = (raw: string, why: string): never => {
    throw new ApiError(400, code, `${name} ${why}.`, { detail: raw.slice(0, 64) });
  };
  const missing = (): never => {
    throw new ApiError(400, code, `${name} is required.`);
  };
  /** The one value of a query parameter, or null (a repeated one is a 400: which one wins would be a guess). */
  const once = (query: URLSearchParams): string | null => {
    const all = query.getAll(name);
    if (refuseRepeats && all.length > 1) throw new ApiError(400, 'invalid_parameter', `${name} may be given once.`);
    return all.length ? all[0] : null;
  };
  const parse = p.parse;
  if (typeof parse === 'function') {
    const refuse: Refuse = (message, opts = {}) => {
      const chosen = opts.code ?? code;
      // A code the schema does not list would be missing from the document's list for the route.
      if (!codes.includes(chosen)) throw new Error(`parameter ${name} refused with ${chosen}, which its x-error does not list`);
      throw new ApiError(400, chosen, message, opts.detail === undefined ? {} : { detail: opts.detail });
    };
    const many = p.explode === true;
    return (_, query) => {
      const all = query.getAll(name);
      if (refuseRepeats && !many && all.length > 1) throw new ApiError(400, 'invalid_parameter', `${name} may be given once.`);
      return parse(all, refuse);
    };
  }
  if (parse === 'include') {
    return (_, query) => {
      const raw = once(query);
      return raw === null ? (required ? missing() : NO_INCLUDES) : parseInclude(raw, code);
    };
  }
  const compiled = compileCheck(schema);
  const check: (value: unknown) => boolean = compiled.Check.bind(compiled);
  if (parse === 'integer') {
    const range = `must be an integer from ${schema.minimum ?? 0} to ${schema.maximum ?? 999_999_999}`;
    // A repeated integer takes its first value (URLSearchParams.get): `?limit=5&limit=9` means 5, never a 400.
    return (_, query) => {
      const raw = query.get(name);
      if (raw === null) return required ? missing() : absent;
      const n = DIGITS.test(raw) ? Number(raw) : NaN;
      return check(n) ? n : refuse(raw, range);
    };
  }
  // What the value should look like, in the schema's own words (its first sentence).
  const described = (schema as { description?: string }).description;
  const why = schema.enum ? `must be one of ${schema.enum.join(', ')}` : `is not valid${described ? `: ${described.split(/\.\s+(?=[A-Z])/)[0].replace(/\.$/, '')}` : ''}`;
  if (p.in === 'path') return (params) => (check(params[name]) ? params[name] : refuse(params[name], why));
  const emptyIsAbsent = p.allowEmptyValue === true;
  return (_, query) => {
    const raw = once(query);
    if (raw === null || (emptyIsAbsent && raw === '')) return required ? missing() : absent;
    return check(raw) ? raw : refuse(raw, why);
  };
}

/** How a route's reader treats what no single parameter can judge. */
export interface ReaderOptions<P extends readonly Parameter[]> {
  /** The code for a query parameter the operation does not declare (null: ignored). Default invalid_parameter. */
  unknown?: ErrorCode | null;
  /**
   * The code for a repeated parameter that may be given once, refused in the same pass over the request's names as
   * unknown ones (so the first offending name answers). Without it each is refused as it is read, as invalid_parameter.
   */
  repeated?: ErrorCode;
  /** The path the unknown and repeated refusals name, when the route's messages say it. */
  where?: string;
  /**
   * Checks over several parameters, each run as soon as the parameter it follows is read: a message refuses the
   * request with the check's code, null lets it pass. The query is there for what a value cannot tell (was it given?).
   */
  checks?: readonly ParameterCheck<P>[];
}
export interface ParameterCheck<P extends readonly Parameter[]> {
  after: P[number]['name'];
  code: ErrorCode;
  check(values: ParameterValues<P>, query: URLSearchParams): string | null;
}

/** A route's parameter reader, and every 400 code it can answer with (the route's 400 response lists them). */
export type ParameterReader<P extends readonly Parameter[]> = ((c: { params: Record<string, string>; query: URLSearchParams }) => ParameterValues<P>) & {
  readonly codes: readonly ErrorCode[];
};

/**
 * The parameters of an operation as one function over a request: every path and query parameter read and checked
 * (in the order given), and, when `unknown` names a code, any query parameter the operation does not declare refused
 * with it, so a typo is a 400 rather than silently ignored. Headers are the core's business.
 */
export function parameterReader<const P extends readonly Parameter[]>(parameters: P, opts: ReaderOptions<P> = {}): ParameterReader<P> {
  const unknown = opts.unknown === undefined ? 'invalid_parameter' : opts.unknown;
  const repeated = opts.repeated ?? null;
  const on = opts.where ? ` on ${opts.where}` : '';
  const read = parameters.filter((p) => p.in !== 'header');
  const names = read.map((p) => p.name);
  const readers = read.map((p) => readerOf(p, repeated === null));
  const after = read.map((p) => (opts.checks ?? []).filter((c) => c.after === p.name));
  // Most routes have no such check: their requests skip the loop.
  const checked = after.some((a) => a.length > 0);
  const declared = new Set(parameters.filter((p) => p.in === 'query').map((p) => p.name));
  const once = new Set(parameters.filter((p) => p.in === 'query' && !p.explode).map((p) => p.name));
  // Every answer has the same keys: copying a template of them keeps one object shape, with no transitions per request.
  const template: Record<string, unknown> = Object.fromEntries(names.map((n) => [n, null]));
  const reader = (c: { params: Record<string, string>; query: URLSearchParams }) => {
    if (unknown !== null || repeated !== null) {
      for (const k of c.query.keys()) {
        if (unknown !== null && !declared.has(k)) throw new ApiError(400, unknown, `Unknown query parameter ${JSON.stringify(k.slice(0, 64))}${on}.`);
        if (repeated !== null && once.has(k) && c.query.getAll(k).length > 1) {
          throw new ApiError(400, repeated, `${opts.where ? `The ${opts.where} parameter ` : ''}${k} may be given once.`);
        }
      }
    }
    const out = { ...template };
    for (let i = 0; i < readers.length; i++) {
      out[names[i]] = readers[i](c.params, c.query);
      if (checked) {
        for (const check of after[i]) {
          const refused = check.check(out as ParameterValues<P>, c.query);
          if (refused !== null) throw new ApiError(400, check.code, refused);
        }
      }
    }
    return out as ParameterValues<P>;
  };
  // Each parameter's codes in reading order, then the reader's own.
  const codes = new Set<ErrorCode>();
  for (const [i, p] of read.entries()) {
    for (const code of schemaCodes(inlineRefs(p.schema), 'invalid_parameter')) codes.add(code);
    if (p.in === 'query' && !p.explode && repeated === null) codes.add('invalid_parameter');
    for (const check of after[i]) codes.add(check.code);
  }
  if (unknown !== null) codes.add(unknown);
  if (repeated !== null) codes.add(repeated);
  return Object.assign(reader, { codes: [...codes] });
}

/** One value checked as parameter `p` would check it (a batch item's ID as the path's `reep_id`). */
export function valueChecker(p: Parameter): (value: string) => string {
  const read = readerOf(p);
  const params: Record<string, string> = {};
  const none = new URLSearchParams();
  return (value) => {
    params[p.name] = value;
    return read(params, none) as string;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Bodies.

/**
 * The keyword of a failed check, for a node whose `x-error` maps keywords to codes (the batch's caps; its third,
 * maxContains, is counted apart: see bodyChecker).
 */
const KEYWORD: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.ArrayMinItems]: 'minItems',
  [ValueErrorType.ArrayMaxItems]: 'maxItems',
};

/** The code for a failed check: the failing node's own, else that of its nearest annotated ancestor. */
function codeOf(root: TSchema, e: ValueError): { code: ErrorCode; detail?: string } {
  let code = errorCode(root, 'invalid_body');
  let node: TSchema | undefined = root;
  for (const seg of e.path.split('/').slice(1)) {
    node = (node?.properties as Record<string, TSchema> | undefined)?.[seg] ?? (node?.type === 'array' ? (node.items as TSchema) : undefined);
    if (node) code = errorCode(node, code);
  }
  const own = (e.schema as { 'x-error'?: unknown })['x-error'];
  if (typeof own === 'string') code = own as ErrorCode;
  else if (own && typeof own === 'object') {
    const keyword = KEYWORD[e.type];
    const mapped = keyword ? (own as Record<string, ErrorCode>)[keyword] : undefined;
    // A cap's detail names the limit.
    if (mapped) return { code: mapped, detail: keyword === 'minItems' ? undefined : `limit ${(e.schema as Record<string, unknown>)[keyword!]}` };
  }
  return { code };
}

/**
 * A compiled body check: the value typed as the schema says, or the ApiError of its first failure. `itemsInPlace`
 * names an array property whose items are left unchecked here, because each is judged (and answered) on its own.
 */
export function bodyChecker<T extends TObject>(
  schema: T,
  opts: { itemsInPlace?: keyof T['properties'] & string } = {},
): ((value: unknown) => Static<T>) & { readonly codes: readonly ErrorCode[] } {
  const inlined = inlineRefs(schema);
  let checked: TSchema = inlined;
  let capped: ((value: unknown) => void) | null = null;
  if (opts.itemsInPlace) {
    const name = opts.itemsInPlace;
    // TypeBox's compiler wants at least one `contains` match whatever `minContains` says, so the cap on matches
    // (the batch's resolve items) is counted here, from the same schema.
    const { contains, minContains: _, maxContains, ...list } = inlined.properties[name] as TSchema;
    checked = { ...inlined, properties: { ...inlined.properties, [name]: { ...list, items: Type.Unknown() } } } as TSchema;
    if (contains && maxContains !== undefined) {
      const matches = TypeCompiler.Compile(contains as TSchema);
      const code: ErrorCode = (list['x-error'] as Record<string, ErrorCode> | undefined)?.maxContains ?? 'invalid_body';
      capped = (value) => {
        const found = ((value as Record<string, unknown[]>)[name]).filter((x) => matches.Check(x)).length;
        if (found > maxContains) throw new ApiError(400, code, `${name}: at most ${maxContains} may be ${describe(contains)}.`, { detail: `limit ${maxContains}` });
      };
    }
  }
  const compiled = TypeCompiler.Compile(checked);
  const check = (value: unknown): Static<T> => {
    if (compiled.Check(value)) {
      capped?.(value);
      return value as Static<T>;
    }
    const e = compiled.Errors(value).First()!;
    const { code, detail } = codeOf(inlined, e);
    const where = e.path === '' ? 'The body' : e.path.slice(1).replaceAll('/', '.');
    // TypeBox names a custom kind where it means the values the schema lists.
    const values = (e.schema as { enum?: unknown[] }).enum;
    const why = values ? `must be one of ${values.join(', ')}` : e.message;
    throw new ApiError(400, code, `${where}: ${why}.`, detail ? { detail } : undefined);
  };
  // Items judged in place answer inside the 200, so their codes are not the body's.
  const body = opts.itemsInPlace ? (checked as TObject) : inlined;
  return Object.assign(check, { codes: bodyCodes(body, 'invalid_body') });
}

/**
 * Every code a failed check of `schema` can answer, in document order: each node's `x-error` (one code, or one per
 * keyword), and `inherited` for a node with none. An unchecked part (`items: {}`) answers nothing of its own.
 */
function bodyCodes(schema: TSchema, inherited: ErrorCode, into = new Set<ErrorCode>()): ErrorCode[] {
  const x = (schema as { 'x-error'?: unknown })['x-error'];
  const own = typeof x === 'string' ? (x as ErrorCode) : inherited;
  into.add(own);
  if (x && typeof x === 'object') for (const code of Object.values(x as Record<string, ErrorCode>)) into.add(code);
  const children = [
    ...Object.values((schema.properties ?? {}) as Record<string, TSchema>),
    ...(schema.items && Object.keys(schema.items).length > 0 ? [schema.items as TSchema] : []),
    ...((schema.anyOf ?? []) as TSchema[]),
  ];
  for (const child of children) bodyCodes(child, own, into);
  return [...into];
}

/** `{type: 'resolve'}` for a `contains` schema of one constant property: what its matches are, in a message. */
function describe(schema: TSchema): string {
  const props = Object.entries((schema.properties ?? {}) as Record<string, { const?: unknown }>);
  return props.map(([k, v]) => `${k} ${JSON.stringify(v.const)}`).join(', ') || 'such items';
}
