// Test helper: checks one concrete API response (status, headers, bytes) against the project's OpenAPI document.
//
// Every runtime test funnels responses through validateResponse, so beyond the JSON Schema it also enforces the
// contract decisions a schema cannot express: canonical bytes (no whitespace, no `1.0`), fixed key order (the
// order of `properties` in the document), the JSON content type, and the documented response headers.

import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchema, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { HttpMethod, JsonObject, JsonValue, PathItem } from '../../runtime/contract/document.ts';
import { openapiDocument as documentOfRoutes } from '../../runtime/openapi-json.ts';

/** The document the server serves, derived from the route table and the contract's schemas. */
const openapiDocument = documentOfRoutes();

// ajv-formats is CommonJS: depending on the loader its default import is the plugin or its module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule.default;

/** The base URI under which the document's component schemas are registered with ajv. */
const COMPONENTS_ID = 'https://identity-register.test/openapi/components.json';
/** Validator-only keyword: the object's keys must appear in this relative order. */
const KEY_ORDER = 'x-key-order';
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

type HeaderInput = Headers | Record<string, string | string[] | number | undefined> | undefined;

export interface ResponseSample {
  method: string;
  /** The request path after the namespace (`/api/v1` or `/api/next` is stripped if present); the query is ignored. */
  path: string;
  status: number;
  headers?: HeaderInput;
  /** Response body bytes; empty for 304. */
  body: string | Uint8Array;
}

export interface ErrorBody {
  error: string;
  message?: string;
  detail?: string;
  [extra: string]: unknown;
}

export interface MatchedOperation {
  /** The path template of the document, e.g. `/entities/{reep_id}`. */
  template: string;
  /** Lower-case HTTP method. */
  method: string;
  /** The operation object, or null when the path exists but not with this method. */
  operation: JsonObject | null;
  /** Path parameter values, still URL-encoded. */
  params: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------------------------
// ajv set-up: one instance, component schemas registered once, validators compiled on first use and cached.

let ajvInstance: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

function ajv(): Ajv2020 {
  if (ajvInstance) return ajvInstance;
  // strict mode makes a typo'd keyword in the document a compile error instead of a silently ignored constraint.
  // strictRequired is off because "at least one of" (`anyOf` of `required`) is the idiomatic way to say it.
  const instance = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true, discriminator: true });
  addFormats(instance);
  // The 400 code a failed request check answers (runtime/contract/request-check.ts): an annotation, nothing to check.
  // A list names every code a parameter's own parse may answer, the first being its default.
  instance.addKeyword({ keyword: 'x-error', schemaType: ['string', 'array', 'object'] });
  instance.addKeyword({
    keyword: KEY_ORDER,
    type: 'object',
    schemaType: 'array',
    errors: true,
    validate: function keyOrder(order: string[], data: Record<string, unknown>): boolean {
      const misplaced = firstMisplacedKey(order, Object.keys(data));
      if (!misplaced) return true;
      (keyOrder as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        {
          keyword: KEY_ORDER,
          message: `key "${misplaced.key}" must come before "${misplaced.after}" (contract order: ${order.join(', ')})`,
          params: { order },
        },
      ];
      return false;
    },
  });
  const defs: Record<string, AnySchema> = {};
  for (const [name, schema] of Object.entries(openapiDocument.components.schemas)) defs[name] = prepareSchema(schema);
  instance.addSchema({ $id: COMPONENTS_ID, $defs: defs });
  ajvInstance = instance;
  return instance;
}

/** The first key of `keys` that appears after a key the contract orders behind it. */
function firstMisplacedKey(order: string[], keys: string[]): { key: string; after: string } | null {
  let lastIndex = -1;
  let lastKey = '';
  for (const key of keys) {
    const i = order.indexOf(key);
    if (i < 0) continue; // unknown keys are additionalProperties' business
    if (i < lastIndex) return { key, after: lastKey };
    lastIndex = i;
    lastKey = key;
  }
  return null;
}

// Keywords whose value is a subschema, a list of subschemas, or a map of subschemas: the only places a walk over
// a schema may descend, so a property that happens to be named `properties` is never mistaken for the keyword.
const SUBSCHEMA = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas', '$defs'];

/**
 * A copy of a document schema ajv can compile: `#/components/schemas/X` refs point at the registered components,
 * and every object schema with `properties` gets the key-order keyword (the document lists them in body order).
 */
function prepareSchema(schema: JsonValue): AnySchema {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema as AnySchema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$ref' && typeof v === 'string') out[k] = rewriteRef(v);
    else if (SUBSCHEMA.includes(k)) out[k] = prepareSchema(v);
    else if (SUBSCHEMA_LISTS.includes(k) && Array.isArray(v)) out[k] = v.map(prepareSchema);
    else if (SUBSCHEMA_MAPS.includes(k) && v && typeof v === 'object' && !Array.isArray(v))
      out[k] = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, prepareSchema(sub)]));
    else out[k] = structuredClone(v);
  }
  if (schema.properties && typeof schema.properties === 'object' && !Array.isArray(schema.properties)) {
    out[KEY_ORDER] = Object.keys(schema.properties);
  }
  return out as AnySchema;
}

function rewriteRef(ref: string): string {
  const prefix = '#/components/schemas/';
  if (!ref.startsWith(prefix)) throw new Error(`[openapi] schema $ref ${ref} does not point at components/schemas`);
  return `${COMPONENTS_ID}#/$defs/${ref.slice(prefix.length)}`;
}

/** Compiles a schema written in the document's terms (refs to `#/components/schemas/...`), with the key-order rule. */
export function compileSchema(schema: JsonValue): ValidateFunction {
  return ajv().compile(prepareSchema(schema));
}

function cachedValidator(cacheKey: string, schema: JsonValue): ValidateFunction {
  let v = compiled.get(cacheKey);
  if (!v) {
    v = compileSchema(schema);
    compiled.set(cacheKey, v);
  }
  return v;
}

/** Validates `value` against `components/schemas/<name>`; throws listing ajv's errors. Returns the value. */
export function validateComponent<T = unknown>(name: string, value: unknown): T {
  if (!openapiDocument.components.schemas[name]) throw new Error(`[openapi] no component schema named ${name}`);
  const v = cachedValidator(`component ${name}`, { $ref: `#/components/schemas/${name}` });
  if (!v(value)) throw new Error(`[openapi] value does not match components/schemas/${name}:\n  ${formatErrors(v.errors)}`);
  return value as T;
}

// ---------------------------------------------------------------------------------------------------------------
// Document navigation.

/** Follows local `$ref`s (`#/...`) through the document until a non-reference object. */
export function resolveDocumentRef(node: JsonValue): JsonObject {
  let current = node;
  for (let hops = 0; hops < 16; hops++) {
    if (!current || typeof current !== 'object' || Array.isArray(current)) throw new Error('[openapi] not an object');
    const ref = current.$ref;
    if (typeof ref !== 'string') return current;
    current = lookupPointer(ref);
  }
  throw new Error('[openapi] $ref chain too long');
}

/** The value at a local JSON pointer (`#/components/...`) of the document; throws naming the pointer if absent. */
export function lookupPointer(ref: string): JsonValue {
  if (!ref.startsWith('#/')) throw new Error(`[openapi] only local refs are used, got ${ref}`);
  let node: JsonValue = openapiDocument as unknown as JsonValue;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (!node || typeof node !== 'object' || Array.isArray(node) || !(part in node)) {
      throw new Error(`[openapi] $ref ${ref} does not resolve (no "${part}")`);
    }
    node = node[part];
  }
  return node;
}

interface RouteEntry {
  template: string;
  segments: string[];
  literalCount: number;
  item: PathItem;
}

let routes: RouteEntry[] | undefined;
let pageRoutes: RouteEntry[] | undefined;

function routeTableOf(paths: Record<string, PathItem>): RouteEntry[] {
  const table = Object.entries(paths).map(([template, item]) => {
    const segments = template.split('/').slice(1);
    return { template, segments, literalCount: segments.filter((s) => !s.startsWith('{')).length, item };
  });
  // A literal segment beats a template segment, like any router would rank them.
  return table.sort((a, b) => b.literalCount - a.literalCount);
}

function routeTable(): RouteEntry[] {
  return (routes ??= routeTableOf(openapiDocument.paths));
}

/** The request path without origin, query, fragment or namespace prefix; `/` for the namespace root. */
function normaliseRequestPath(path: string): string {
  let p = path;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) p = p.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  p = p.split('#')[0].split('?')[0];
  const ns = /^\/api\/(v1|next)(?=\/|$)/.exec(p);
  if (ns) p = p.slice(ns[0].length);
  return p === '' ? '/' : p;
}

/** The documented path template and operation a concrete request path and method correspond to, or null. */
export function findOperation(method: string, path: string, table: RouteEntry[] = routeTable()): MatchedOperation | null {
  const segments = normaliseRequestPath(path).split('/').slice(1);
  for (const route of table) {
    if (route.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let matches = true;
    for (let i = 0; i < segments.length && matches; i++) {
      const t = route.segments[i];
      if (t.startsWith('{')) {
        // A path parameter is one whole segment; an encoded slash (%2F) stays inside it.
        if (segments[i] === '') matches = false;
        else params[t.slice(1, -1)] = segments[i];
      } else matches = t === segments[i];
    }
    if (!matches) continue;
    const m = method.toLowerCase();
    const op = route.item[m as HttpMethod];
    return { template: route.template, method: m, operation: op ?? null, params };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// Response validation.

const decoder = new TextDecoder('utf-8', { fatal: true });

function headerGetter(headers: HeaderInput): (name: string) => string | null {
  if (!headers) return () => null;
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return (name) => headers.get(name);
  const record = headers as Record<string, string | string[] | number | undefined>;
  const lower = new Map<string, string>();
  for (const [k, v] of Object.entries(record)) {
    if (v === undefined) continue;
    lower.set(k.toLowerCase(), Array.isArray(v) ? v.join(', ') : String(v));
  }
  return (name) => lower.get(name.toLowerCase()) ?? null;
}

function excerpt(body: string): string {
  return body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return '(no details)';
  const lines = errors.slice(0, 25).map((e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword}${paramsNote(e)}`);
  if (errors.length > 25) lines.push(`… and ${errors.length - 25} more`);
  return lines.join('\n  ');
}

function paramsNote(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'additionalProperties') return ` ("${String(p.additionalProperty)}")`;
  if (e.keyword === 'enum') return ` (${JSON.stringify(p.allowedValues)})`;
  if (e.keyword === 'const') return ` (${JSON.stringify(p.allowedValue)})`;
  return '';
}

/** Index of the first differing character, for a readable "not canonical" message. */
function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

function checkHeaders(where: string, response: JsonObject, cacheKey: string, get: (name: string) => string | null): void {
  const declared = response.headers;
  if (!declared || typeof declared !== 'object' || Array.isArray(declared)) return;
  for (const [name, node] of Object.entries(declared)) {
    const header = resolveDocumentRef(node);
    const raw = get(name);
    if (raw === null) {
      if (header.required === true) throw new Error(`[openapi] ${where}: required header ${name} is missing`);
      continue;
    }
    const schema = header.schema as JsonValue;
    const type = resolveDocumentRef(schema).type;
    let value: unknown = raw;
    // Header values are text; an integer-typed header must be plain decimal digits to count as that integer.
    if (type === 'integer') value = /^-?[0-9]+$/.test(raw) ? Number(raw) : raw;
    const v = cachedValidator(`${cacheKey} header ${name}`, schema);
    if (!v(value)) throw new Error(`[openapi] ${where}: header ${name}: ${JSON.stringify(raw)} ${formatErrors(v.errors)}`);
  }
}

/**
 * Checks one response against the document and returns the parsed body (undefined when the response has none).
 * Throws an Error naming the request, the status and every problem found, with an excerpt of the body.
 *
 * An undocumented path may only answer 404 (components/responses/UnknownPath); a documented path with an
 * undocumented method may only answer 405 (components/responses/MethodNotAllowed); anything else undocumented throws.
 */
export function validateResponse(sample: ResponseSample): unknown {
  const body = typeof sample.body === 'string' ? sample.body : decoder.decode(sample.body);
  const where = `${sample.method.toUpperCase()} ${sample.path} → ${sample.status}`;
  // The document states HEAD once for every GET path: the GET's status and headers, Content-Length included, no body.
  const head = sample.method.toUpperCase() === 'HEAD';
  const match = findOperation(head ? 'GET' : sample.method, sample.path);

  let response: JsonObject;
  let cacheKey: string;
  if (!match) {
    if (sample.status !== 404) {
      throw new Error(`[openapi] ${where}: path ${normaliseRequestPath(sample.path)} is not documented (only 404 is valid there)`);
    }
    response = resolveDocumentRef(openapiDocument.components.responses.UnknownPath);
    cacheKey = 'unknown-path';
  } else if (!match.operation) {
    if (sample.status !== 405) {
      const allowed = Object.keys(openapiDocument.paths[match.template]).map((m) => m.toUpperCase());
      throw new Error(
        `[openapi] ${where}: ${sample.method.toUpperCase()} is not documented for ${match.template} ` +
          `(documented: ${allowed.join(', ')}; only 405 is valid for other methods)`,
      );
    }
    response = resolveDocumentRef(openapiDocument.components.responses.MethodNotAllowed);
    cacheKey = 'method-not-allowed';
  } else {
    const responses = match.operation.responses as JsonObject;
    const node = responses[String(sample.status)];
    if (node === undefined) {
      throw new Error(
        `[openapi] ${where}: status ${sample.status} is not documented for ${match.method.toUpperCase()} ${match.template} ` +
          `(documented: ${Object.keys(responses).join(', ')})\n  body: ${excerpt(body)}`,
      );
    }
    response = resolveDocumentRef(node);
    cacheKey = `${match.method} ${match.template} ${sample.status}`;
  }

  const get = headerGetter(sample.headers);
  checkHeaders(where, response, cacheKey, get);
  return checkBody(where, response, cacheKey, get, body, head);
}

/**
 * Checks one response of the pages at the server root (the document's `x-pages`: the explorer, the reference and
 * their assets) and returns its body: the documented status, headers, exact content type, and a non-empty body;
 * an Error body (404, 503) against its schema like any other.
 */
export function validatePageResponse(sample: ResponseSample): unknown {
  const body = typeof sample.body === 'string' ? sample.body : decoder.decode(sample.body);
  const where = `${sample.method.toUpperCase()} ${sample.path} → ${sample.status} (page)`;
  const head = sample.method.toUpperCase() === 'HEAD';
  const match = findOperation('GET', sample.path.split('?')[0], (pageRoutes ??= routeTableOf(openapiDocument['x-pages'])));
  if (!match?.operation) throw new Error(`[openapi] ${where}: not a documented page (x-pages: ${Object.keys(openapiDocument['x-pages']).join(', ')})`);
  const parameters = (match.operation.parameters ?? []) as JsonObject[];
  for (const p of parameters) {
    const v = cachedValidator(`page ${match.template} param ${String(p.name)}`, p.schema as JsonValue);
    const value = decodeURIComponent(match.params[String(p.name)] ?? '');
    if (sample.status === 200 && !v(value)) throw new Error(`[openapi] ${where}: path parameter ${String(p.name)} ${JSON.stringify(value)} ${formatErrors(v.errors)}`);
  }
  const node = (match.operation.responses as JsonObject)[String(sample.status)];
  if (node === undefined) throw new Error(`[openapi] ${where}: status ${sample.status} is not documented for page ${match.template}\n  body: ${excerpt(body)}`);
  const response = resolveDocumentRef(node);
  const cacheKey = `page ${match.template} ${sample.status}`;
  const get = headerGetter(sample.headers);
  checkHeaders(where, response, cacheKey, get);
  return checkBody(where, response, cacheKey, get, body, head);
}

/** The body checks shared by API and page responses: its documented media type, then canonical JSON and schema. */
function checkBody(where: string, response: JsonObject, cacheKey: string, get: (name: string) => string | null, body: string, head: boolean): unknown {
  const content = response.content as JsonObject | undefined;
  const media = content?.['application/json'] as JsonObject | undefined;
  // A documented text body (Prometheus metrics, a page, a script): its exact content type and a non-empty body are all there is to check.
  if (content && !media) {
    const got = get('content-type');
    const types = Object.keys(content);
    if (got === null || !types.includes(got)) throw new Error(`[openapi] ${where}: Content-Type must be one of ${JSON.stringify(types)}, got ${JSON.stringify(got)}`);
    if (head) {
      if (body !== '') throw new Error(`[openapi] ${where}: a HEAD answer has no body`);
      return undefined;
    }
    if (body === '') throw new Error(`[openapi] ${where}: empty body, a text body is documented`);
    return body;
  }
  if (!media) {
    if (body !== '') throw new Error(`[openapi] ${where}: this response has no body, got ${excerpt(body)}`);
    return undefined;
  }

  const contentType = get('content-type');
  if (contentType === null || contentType.trim().toLowerCase() !== JSON_CONTENT_TYPE) {
    throw new Error(`[openapi] ${where}: Content-Type must be "${JSON_CONTENT_TYPE}", got ${JSON.stringify(contentType)}`);
  }
  if (head) {
    if (body !== '') throw new Error(`[openapi] ${where}: a HEAD answer has no body, got ${excerpt(body)}`);
    const length = get('content-length');
    if (length === null || !/^[1-9][0-9]*$/.test(length)) throw new Error(`[openapi] ${where}: Content-Length must be the GET body's length, got ${JSON.stringify(length)}`);
    return undefined;
  }
  if (body === '') throw new Error(`[openapi] ${where}: empty body, a JSON body is documented`);

  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw new Error(`[openapi] ${where}: body is not JSON (${(err as Error).message})\n  body: ${excerpt(body)}`);
  }
  // Canonical bytes are a contract decision: re-serialising must reproduce the body exactly.
  const canonical = JSON.stringify(parsed);
  if (canonical !== body) {
    const at = firstDifference(canonical, body);
    throw new Error(
      `[openapi] ${where}: body is not canonical JSON (whitespace, \`1.0\`-style number or escape) at character ${at}: ` +
        `${JSON.stringify(body.slice(Math.max(0, at - 20), at + 20))}`,
    );
  }

  const validate = cachedValidator(cacheKey, media.schema as JsonValue);
  if (!validate(parsed)) {
    throw new Error(`[openapi] ${where}: body does not match the documented schema:\n  ${formatErrors(validate.errors)}\n  body: ${excerpt(body)}`);
  }
  return parsed;
}

/**
 * Checks a refusal written before routing (not HTTP, no Host, a bad Expect, CONNECT, slow or huge headers) against
 * components/responses/ProtocolRefusal: status, Error body and code. Returns the parsed body.
 */
export function validateProtocolRefusal(sample: Omit<ResponseSample, 'method' | 'path'>): ErrorBody {
  const body = typeof sample.body === 'string' ? sample.body : decoder.decode(sample.body);
  const where = `refusal → ${sample.status}`;
  const response = resolveDocumentRef(openapiDocument.components.responses.ProtocolRefusal);
  const get = headerGetter(sample.headers);
  const contentType = get('content-type');
  if (contentType === null || contentType.trim().toLowerCase() !== JSON_CONTENT_TYPE) {
    throw new Error(`[openapi] ${where}: Content-Type must be "${JSON_CONTENT_TYPE}", got ${JSON.stringify(contentType)}`);
  }
  if (get('content-length') !== String(Buffer.byteLength(body))) throw new Error(`[openapi] ${where}: Content-Length ${get('content-length')} for a body of ${Buffer.byteLength(body)} bytes`);
  const byStatus: Record<number, string> = { 400: 'bad_request', 405: 'method_not_allowed', 408: 'request_timeout', 417: 'expectation_failed', 431: 'headers_too_large' };
  const code = byStatus[sample.status];
  if (code === undefined) throw new Error(`[openapi] ${where}: not a documented refusal status`);
  const parsed = JSON.parse(body) as ErrorBody;
  if (JSON.stringify(parsed) !== body) throw new Error(`[openapi] ${where}: body is not canonical JSON`);
  const schema = ((response.content as JsonObject)['application/json'] as JsonObject).schema as JsonValue;
  const validate = cachedValidator('protocol-refusal', schema);
  if (!validate(parsed)) throw new Error(`[openapi] ${where}: body does not match ProtocolRefusal:\n  ${formatErrors(validate.errors)}`);
  if (parsed.error !== code) throw new Error(`[openapi] ${where}: expected code ${code}, got ${parsed.error}`);
  return parsed;
}

/**
 * Checks that `body` (text, bytes or parsed) is a valid Error body with `error` equal to `code`; returns it parsed.
 * A 409 body is checked as the ambiguous-resolve error (with candidates), a `gone` body as the tombstone error.
 */
export function assertErrorBody(body: string | Uint8Array | unknown, code: string): ErrorBody {
  let parsed: unknown = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const text = typeof body === 'string' ? body : decoder.decode(body);
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`[openapi] expected an Error body with code "${code}", got non-JSON: ${excerpt(text)}`);
    }
  }
  const schema = code === 'ambiguous_provider_id' ? 'AmbiguousResolveError' : code === 'gone' ? 'GoneError' : 'Error';
  validateComponent(schema, parsed);
  const actual = (parsed as ErrorBody).error;
  if (actual !== code) {
    throw new Error(`[openapi] expected error code "${code}", got "${actual}": ${excerpt(JSON.stringify(parsed))}`);
  }
  return parsed as ErrorBody;
}
