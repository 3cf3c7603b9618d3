/** Field sets the contract's documented shapes share (remember and the read side). */
import { Schema } from "effect"

/** An edge as the remember response and the read side show it; null fields are omitted. */
export const edgeFields = {
  id: Schema.Number,
  source: Schema.String,
  source_id: Schema.Number,
  target: Schema.String,
  target_id: Schema.Number,
  relation: Schema.String,
  description: Schema.String,
  valid_at: Schema.String,
  invalid_at: Schema.optional(Schema.String),
  created_at: Schema.String,
  expired_at: Schema.optional(Schema.String),
  artifact_id: Schema.optional(Schema.Number),
  model_id: Schema.optional(Schema.Number)
}
