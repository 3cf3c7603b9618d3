/**
 * The knowledge eval cases (evals/knowledge/*.json): a sequence of texts remembered in order
 * into a fresh dataset, and what the graph must hold at the end. Each text becomes a remember
 * request through the same validation as the HTTP API, so a case cannot ask for anything the
 * API refuses. The format is in evals/knowledge/README.md.
 */
import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Either, ParseResult, Schema } from "effect"
import { type DatasetSchema, DatasetSchemaDocument } from "../domain/DatasetSchema.js"
import { type RememberRequest, validateRememberRequest } from "../domain/Remember.js"
import { decodeRequest } from "../domain/Wire.js"
import type { Expected } from "./score.js"

export class EvalCaseInvalid extends Data.TaggedError("EvalCaseInvalid")<{ readonly message: string }> {}

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const Names = Schema.Array(Schema.String)

const decodeSchema = decodeRequest(DatasetSchemaDocument)

const CaseText = Schema.Struct({
  /** the text itself, or `file`: a path relative to the case file */
  text: Schema.optional(Schema.String),
  file: Schema.optional(Schema.String),
  reference_time: Schema.String,
  session_id: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  models: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  reasoning: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  /** this text's own extraction instructions, as a remember request's */
  instructions: Schema.optional(Schema.String)
}).annotations(strict)

const ExpectedFact = Schema.Struct({
  source: Schema.String,
  relation: Schema.Union(Schema.String, Schema.NonEmptyArray(Schema.String)),
  target: Schema.String,
  symmetric: Schema.optional(Schema.Boolean),
  valid_at: Schema.optional(Schema.String),
  invalid_at: Schema.optional(Schema.String),
  sessions: Schema.optional(Names)
}).annotations(strict)

export const EvalCaseFile = Schema.Struct({
  description: Schema.String,
  /** what the case is about: repeats, paraphrases, contradictions, ... (for the table) */
  tags: Schema.optional(Names),
  /** the dataset's schema, set before the first text (as `PUT /v1/gb/datasets/{name}/schema` takes it) */
  schema: Schema.optional(Schema.Unknown),
  texts: Schema.NonEmptyArray(CaseText),
  expected: Schema.Struct({
    entities: Schema.Array(
      Schema.Struct({
        name: Schema.String,
        aliases: Schema.optional(Names),
        sessions: Schema.optional(Names),
        type: Schema.optional(Schema.String),
        attributes: Schema.optional(
          Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
        )
      }).annotations(strict)
    ),
    live: Schema.Array(ExpectedFact),
    closed: Schema.Array(ExpectedFact)
  }).annotations(strict)
}).annotations(strict)

export interface EvalCase {
  /** the file name without `.json` */
  readonly name: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  /** the dataset schema set before the texts, validated as the endpoint validates it; null: none */
  readonly schema: DatasetSchema | null
  /** validated requests, without user and dataset (the runner sets them) */
  readonly texts: ReadonlyArray<Omit<RememberRequest, "user_id" | "dataset">>
  readonly expected: Expected
}

/**
 * Parses one case: `json` is the file's content, `readFile` resolves a text's `file` (relative
 * to the case's directory). Every problem names the case and the text.
 */
export const parseCase = <R>(
  name: string,
  json: string,
  readFile: (relative: string) => Effect.Effect<string, EvalCaseInvalid, R>
): Effect.Effect<EvalCase, EvalCaseInvalid, R> =>
  Effect.gen(function*() {
    const invalid = (message: string) => new EvalCaseInvalid({ message: `case ${name}: ${message}` })
    const raw = yield* Effect.try({
      try: () => JSON.parse(json) as unknown,
      catch: (e) => invalid(`not JSON: ${(e as Error).message}`)
    })
    const file = yield* Schema.decodeUnknown(EvalCaseFile, { errors: "all" })(raw).pipe(
      Effect.mapError((e) => invalid(ParseResult.TreeFormatter.formatErrorSync(e)))
    )
    const texts = yield* Effect.forEach(file.texts, (t, i) =>
      Effect.gen(function*() {
        if ((t.text === undefined) === (t.file === undefined)) {
          return yield* invalid(`texts[${i}] needs exactly one of text and file`)
        }
        const text = t.text ?? (yield* readFile(t.file!))
        const { file: _, ...body } = t
        const request = validateRememberRequest({ ...body, text, user_id: "eval", dataset: "eval" })
        if (Either.isLeft(request)) return yield* invalid(`texts[${i}]: ${request.left.message}`)
        const { user_id: _u, dataset: _d, ...rest } = request.right
        return rest
      }))
    const schema = file.schema === undefined ? undefined : decodeSchema(file.schema)
    if (schema !== undefined && Either.isLeft(schema)) return yield* invalid(`schema: ${schema.left.message}`)
    return {
      name,
      description: file.description,
      tags: file.tags ?? [],
      schema: schema === undefined ? null : schema.right,
      texts,
      expected: file.expected
    }
  })

/** Every `*.json` of `dir`, by file name. */
export const loadCases = (
  dir: string
): Effect.Effect<ReadonlyArray<EvalCase>, EvalCaseInvalid, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const unreadable = (what: string) => (e: { readonly message: string }) =>
      new EvalCaseInvalid({ message: `cannot read ${what}: ${e.message}` })
    const names = (yield* fs.readDirectory(dir).pipe(Effect.mapError(unreadable(dir))))
      .filter((f) => f.endsWith(".json"))
      .sort()
    if (names.length === 0) return yield* new EvalCaseInvalid({ message: `no case (*.json) in ${dir}` })
    return yield* Effect.forEach(names, (f) =>
      Effect.flatMap(
        fs.readFileString(path.join(dir, f)).pipe(Effect.mapError(unreadable(f))),
        (json) =>
          parseCase(f.replace(/\.json$/, ""), json, (relative) =>
            fs.readFileString(path.join(dir, relative)).pipe(Effect.mapError(unreadable(relative))))
      ))
  })
