/**
 * Field sets the contract's documented shapes share (remember and the read side). They are
 * the domain's schemas (src/domain), named here for the HTTP modules that use them.
 */
import type { Schema } from "effect"
import { edgeFields } from "../domain/Responses.js"
import { RememberRun } from "../domain/runView.js"

/** An edge as the remember response and the read side show it; null fields are omitted. */
export { edgeFields }

/** A remember run as the run log shows it (`GET /v1/gb/runs/{id}`, the admin API). */
export const RunDoc = RememberRun

/** A remember run as `RunDoc` shows it. */
export type RunView = Schema.Schema.Type<typeof RunDoc>
