/**
 * The forget requests as schemas: the path of `DELETE /v1/gb/users/{user_id}`, and the
 * requests of the library functions and the CLI (src/operations.ts), which decode what the
 * endpoints decode from their path and URL parameters, with the same messages.
 */
import { Option, Schema, SchemaAST as AST } from "effect"
import { Dataset, DEFAULT_DATASET, documented, IntegerIn, required, UserId, withDefault } from "../domain/Wire.js"

const userId = documented(UserId, "the user whose data goes")
// the field's own JSON schema annotation is what the document shows: the example goes into it
const userIdField = required(userId.annotations({
  jsonSchema: { ...Option.getOrElse(AST.getJSONSchemaAnnotation(userId.ast), () => ({})), examples: ["alice"] }
}))

/** `DELETE /v1/gb/users/{user_id}` (the id URL-encoded in the path). */
export const UserPath = Schema.Struct({ user_id: userIdField })

/** Forget a user: every dataset, run and file of theirs. */
export const ForgetUserRequest = Schema.Struct({ user_id: userIdField }).annotations({
  identifier: "ForgetUserRequest",
  examples: [{ user_id: "alice" }]
})
export type ForgetUserRequest = Schema.Schema.Type<typeof ForgetUserRequest>

const datasetField = withDefault(documented(Dataset, "the dataset (default main)"), () => DEFAULT_DATASET)

/** Hard-delete a dataset: every row of the name, soft-deleted ones too, with what they hold. */
export const HardDeleteRequest = Schema.Struct({ user_id: userIdField, dataset: datasetField }).annotations({
  identifier: "HardDeleteRequest",
  examples: [{ user_id: "alice", dataset: "main" }]
})
export type HardDeleteRequest = Schema.Schema.Type<typeof HardDeleteRequest>

/** Forget an artifact (`DELETE /v1/gb/artifacts/{id}?user_id=&dataset=`) as one request. */
export const ForgetArtifactRequest = Schema.Struct({
  user_id: userIdField,
  dataset: datasetField,
  artifact_id: required(documented(IntegerIn(1, Number.MAX_SAFE_INTEGER), "the artifact's id"))
}).annotations({
  identifier: "ForgetArtifactRequest",
  examples: [{ user_id: "alice", dataset: "main", artifact_id: 1 }]
})
export type ForgetArtifactRequest = Schema.Schema.Type<typeof ForgetArtifactRequest>
