// Identifier rules and closed vocabularies of the contract, shared by compiler and runtime.

/** A register ID: `r`, a type-hint letter, 14 hex digits. */
export const REGISTER_ID = /^r[a-z][0-9a-f]{14}$/;
/** A release stamp: compact UTC timestamp, e.g. 20261005T180536Z. */
export const STAMP = /^\d{8}T\d{6}Z$/;

export const ENTITY_TYPES = ['coach', 'competition', 'match', 'player', 'referee', 'season', 'stage', 'team'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];
const ENTITY_TYPE_SET = new Set<string>(ENTITY_TYPES);
export const isEntityType = (s: string): s is EntityType => ENTITY_TYPE_SET.has(s);

export const PROVIDER_ROLES = ['canonical_bridge', 'bridge_only', 'overlay_only'] as const;
export type ProviderRole = (typeof PROVIDER_ROLES)[number];

/** Expansions a client may ask for with `include`, in the order their fields appear in an Entity. */
export const INCLUDES = ['aliases', 'attributes', 'bridges', 'relationships', 'overlay'] as const;
export type Include = (typeof INCLUDES)[number];

export const TIERS = ['public_bridge_v1', 'open_census'] as const;

/** Version strings reported by the API; part of the compiled bytes, so they change only with the contract. */
export const API_NAME = 'identity-register';
export const API_VERSION = '1.0.0';
export const API_SCHEMA = 'public-bridge-register-v2';
export const NAMESPACES = ['v1', 'next'] as const;
export type Namespace = (typeof NAMESPACES)[number];
