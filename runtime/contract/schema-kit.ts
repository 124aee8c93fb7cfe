// The few TypeBox builders the contract is written with: named components, references to them, closed objects.
import { Kind, Type, TypeRegistry, type Static, type TSchema, type TUnsafe, type SchemaOptions } from '@sinclair/typebox';

/** Any JSON value; the document must survive JSON.stringify unchanged, so nothing else is allowed in it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** The component schemas in declaration order: the document lists them so. */
export const componentSchemas = new Map<string, TSchema>();
const names = new WeakMap<TSchema, string>();

/** Registers `schema` as `#/components/schemas/<name>`; returns it, so the declaration reads `const X = component('X', …)`. */
export function component<T extends TSchema>(name: string, schema: T): T {
  if (componentSchemas.has(name)) throw new Error(`[contract] two component schemas are called ${name}`);
  componentSchemas.set(name, schema);
  names.set(schema, name);
  return schema;
}

/** Whether `schema` is a registered component (one the document references rather than writes in place). */
export const isComponent = (schema: TSchema): boolean => names.has(schema);

/** The custom kind of a reference: compiled checks follow it to the component (inlineRefs), the document keeps `$ref`. */
const REF = 'ComponentRef';
/** The custom kind of a plain `enum` keyword (TypeBox writes enums as unions of literals, which reads worse). */
const ENUM = 'ValueEnum';
TypeRegistry.Set(ENUM, (schema: { enum: unknown[] }, value) => schema.enum.includes(value));

/** `{$ref: '#/components/schemas/<name>'}` with optional sibling keywords, typed as the component it names. */
export function ref<T extends TSchema>(schema: T, extra: SchemaOptions = {}): TUnsafe<Static<T>> {
  const name = names.get(schema);
  if (!name) throw new Error('[contract] ref() of a schema that is not a component');
  return Type.Unsafe<Static<T>>({ [Kind]: REF, $ref: `#/components/schemas/${name}`, ...extra });
}

/** `{type, enum}` as the document writes it, typed as the union of its values. */
export function oneOfValues<const V extends readonly (string | number | null)[]>(values: V, options: SchemaOptions = {}): TUnsafe<V[number]> {
  const types = [...new Set(values.map((v) => (v === null ? 'null' : typeof v === 'number' ? 'integer' : 'string')))];
  return Type.Unsafe<V[number]>({ [Kind]: ENUM, type: types.length === 1 ? types[0] : types, enum: [...values], ...options });
}

/**
 * A copy of `schema` with every component reference replaced by the component itself (sibling keywords kept), so
 * TypeBox's compiler, which knows nothing of `#/components`, can check it. The contract has no recursive schema.
 */
export function inlineRefs<T extends TSchema>(schema: T): T {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const n = node as Record<string | symbol, unknown>;
    if (n[Kind] === REF) {
      const target = componentSchemas.get(String(n.$ref).slice('#/components/schemas/'.length))!;
      const { $ref: _, ...siblings } = n;
      return walk({ ...target, ...siblings, [Kind]: target[Kind] });
    }
    const out: Record<string | symbol, unknown> = {};
    for (const k of Reflect.ownKeys(n)) out[k] = walk(n[k]);
    return out;
  };
  return walk(schema) as T;
}

export const str = (description?: string) => Type.String(description ? { description } : {});
export const strOrNull = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});
export const count = (description: string) => Type.Integer({ minimum: 0, description });
export const arrayOf = <T extends TSchema>(items: T, description?: string) => Type.Array(items, description ? { description } : {});
export const orNull = <T extends TSchema>(schema: T, description?: string) => Type.Union([schema, Type.Null()], description ? { description } : {});

/** An object whose keys are data (entity types, sections, families) and whose values all share one schema. */
export function mapOf<T extends TSchema>(values: T, description: string, keys?: TSchema): TUnsafe<Record<string, Static<T>>> {
  // Never part of a request, so it needs no compiled check: a plain schema is enough.
  return Type.Unsafe<Record<string, Static<T>>>(keys ? { type: 'object', description, propertyNames: keys, additionalProperties: values } : { type: 'object', description, additionalProperties: values });
}

/**
 * A closed object: the listed properties in body order (the contract fixes key order, and the test validator
 * enforces it from this order), nothing else. Optional fields are wrapped in Type.Optional.
 */
export const closed = <P extends Record<string, TSchema>>(description: string, properties: P, extra: SchemaOptions = {}) =>
  Type.Object(properties, { description, additionalProperties: false, ...extra });
