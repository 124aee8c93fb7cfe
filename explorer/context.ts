// What every view of the explorer is given: the typed client for the chosen namespace, and the provider list it
// reads once per namespace (roles for bridges, names for the resolve box and the change chart).
import type { CheckResult, RegisterClient } from '../client/register-client.ts';

export interface ProviderInfo {
  name: string;
  role: string;
  bridgeCount: number;
}

export interface ViewContext {
  client: RegisterClient;
  /** `v1` or `next`. */
  namespace: string;
  providers(): Promise<ProviderInfo[]>;
  /**
   * One `POST /contributions/check` of CSV bytes (a header and at most 1,000 records), its rows numbered from
   * `firstRow`; a refusal is a RegisterApiError with the Error body.
   */
  checkCsv(csv: Uint8Array<ArrayBuffer>, firstRow: number): Promise<CheckAnswer>;
}

/** What a check request answers that the view uses. */
export interface CheckAnswer {
  stamp: string;
  results: CheckResult[];
}

/** The route's parameters: `#/changes?from=…` gives path `changes`, params from the query. */
export interface Route {
  path: string[];
  params: URLSearchParams;
}

/** Events per page of the changes view's list. */
export const CHANGES_PAGE_SIZE = 50;
