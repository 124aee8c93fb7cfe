// POST /contributions/check: a contribution file's rows (CSV or JSON) checked against the served release, one result
// per row (runtime/contributions/, shared with `register check`). A request that cannot be read whole is refused
// before anything is charged; each row that is not `invalid` costs one lookup, like a batch item.
import { ApiError } from '../api-error.ts';
import { costingErrors, errorResponse, ok, responseRef, TAGGED_COST_HEADERS, COST_HEADERS } from '../contract/http-parts.ts';
import { FirstRow } from '../contract/parameters.ts';
import { bodyChecker, parameterReader } from '../contract/request-check.ts';
import { CheckCsvBody, CheckRequest, CheckResponse, ref } from '../contract/schemas.ts';
import { MAX_CHECK_ROWS } from '../../common/request-limits.ts';
import { concatToSend } from '../../common/bytes.ts';
import { isInvalid } from '../contributions/check-row.ts';
import { writeCheck } from '../contributions/check-stream.ts';
import { chunksOfBytes, ContributionFileError, readContributionCsv, rowsOfJson, type ContributionRow } from '../contributions/contribution-file.ts';
import { parseJsonBody, readBodyBytes } from '../read-body.ts';
import { bodyEtag } from '../response-headers.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import type { Release } from '../release/open-release.ts';

const checkBody = bodyChecker(CheckRequest);
const PARAMETERS = [FirstRow] as const;
const readParameters = parameterReader(PARAMETERS);
const enc = new TextEncoder();
const PATH = '/contributions/check';

/** A CSV body's rows, every one read before anything is charged: a file that cannot be read is refused whole. */
async function csvRows(release: Release, bytes: Uint8Array, firstRow: number): Promise<ContributionRow[]> {
  const rows: ContributionRow[] = [];
  try {
    for await (const row of readContributionCsv(chunksOfBytes(bytes), release.providers, firstRow)) {
      if (rows.length === MAX_CHECK_ROWS) throw new ApiError(400, 'check_too_large', `At most ${MAX_CHECK_ROWS} rows a request; send a longer file in chunks (the client does).`, { detail: `limit ${MAX_CHECK_ROWS}` });
      rows.push(row);
    }
  } catch (e) {
    if (e instanceof ContributionFileError) throw new ApiError(400, 'invalid_csv', `The CSV body cannot be read: ${e.message}.`, { detail: `line ${e.line}` });
    throw e;
  }
  return rows;
}

export const contributionRoutes = (maxBodyBytes: number): RouteDef[] => [
  defineRoute({
    method: 'POST',
    path: PATH,
    auth: true,
    operation: {
      operationId: 'checkContributions',
      tag: 'lookup',
      summary: 'Check a contribution file against the served release',
      description:
        `Up to ${MAX_CHECK_ROWS} rows of a contribution file, as CSV (\`text/csv\`, a header row first) or JSON ` +
        '(`application/json`), each checked against the release: `already_bridged`, `new_bridge`, `conflict`, ' +
        '`redirected`, `retired`, `ambiguous`, `no_candidate` or `invalid`, with a band, reasons and the candidates ' +
        '(docs/contributions.md). One lookup is charged per row that is not `invalid`; the rate limiter counts the ' +
        'request as one. Refused whole, and not charged: no rows (400 `empty_check`), more than ' +
        `${MAX_CHECK_ROWS} (400 \`check_too_large\`), a CSV that cannot be read (400 \`invalid_csv\`, \`detail\` naming ` +
        'the line: no header with `provider` and `external_id`, a byte that is not UTF-8, a quote out of place, a ' +
        'record too long), JSON that is not the request (400 `invalid_body`), another content type (415 ' +
        '`unsupported_media_type`). The `ETag` is derived from the release and the body: the same rows give the same ' +
        'bytes on every server of the same stamp.',
      cost: 'per_item',
      parameters: PARAMETERS,
      requestMedia: { 'application/json': CheckRequest, 'text/csv': CheckCsvBody },
      responses: {
        '200': ok('One result per row, in order.', ref(CheckResponse), TAGGED_COST_HEADERS),
        ...costingErrors([...checkBody.codes, ...readParameters.codes, 'empty_check', 'check_too_large', 'invalid_csv', 'invalid_body']),
        '413': responseRef('PayloadTooLarge'),
        '415': errorResponse('The body is neither `text/csv` nor `application/json`. Not charged.', ['unsupported_media_type'], COST_HEADERS),
      },
    },
    async prepare(c) {
      const type = (c.request.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
      // The body is read whatever is refused next: one left unread would be taken for the next request on the connection.
      const bytes = await readBodyBytes(c.request, maxBodyBytes);
      let rows: ContributionRow[];
      let parts: string[];
      if (type === 'application/json') {
        const body = checkBody(parseJsonBody(bytes));
        rows = rowsOfJson(body.rows, c.release.providers, body.first_row ?? 1);
        parts = ['json'];
      } else if (type === 'text/csv') {
        const p = readParameters(c);
        rows = await csvRows(c.release, bytes, p.first_row);
        if (rows.length === 0) throw new ApiError(400, 'empty_check', 'The CSV holds a header and no rows.');
        parts = ['csv', String(p.first_row)];
      } else {
        throw new ApiError(415, 'unsupported_media_type', 'Send the rows as text/csv or application/json.', { detail: type.slice(0, 100) });
      }
      const release = c.release;
      return {
        cost: rows.filter((r) => !isInvalid(release, r)).length,
        async run() {
          const out: string[] = [];
          await writeCheck(release, rows, (t) => void out.push(t));
          return { status: 200, body: concatToSend([enc.encode(out.join(''))]), headers: { etag: bodyEtag(release.manifestSha256, PATH, parts, bytes) } };
        },
      };
    },
  }),
];
