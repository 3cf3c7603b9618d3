/**
 * The portable PostgreSQL search reads its candidates' embeddings in PostgreSQL's binary array
 * format (`array_send`) instead of decimal text (issue 39): decoded, every value is the float32
 * the real[] holds, the same as the text form gives, for any float32 PostgreSQL stores.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { floatsOfArraySend } from "../../layers/vectors/PostgresVectorStore.js"
import { dialects } from "../support/databases.js"

const pg = dialects.find((d) => d.dialect === "pg")!
const reason = pg.skip()
if (reason !== null) {
  console.warn(`!!! SKIPPING the array_send decoding tests: ${reason}`)
  describe.skip("array_send of real[]", () => {})
} else {
  layer(pg.makeLayer(), { excludeTestServices: true })("array_send of real[]", (it) => {
    it.effect("decodes to the values the text form names, for any finite float32s and lengths", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const samples = fc.sample(
          fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: 0, maxLength: 40 }),
          { numRuns: 60, seed: 39 }
        )
        samples.push(Array.from({ length: 1536 }, (_, i) => Math.sin(i) / 7))
        for (const values of samples) {
          const [row] = yield* sql.unsafe<{ binary: Uint8Array; text: ReadonlyArray<string | number> }>(
            `SELECT array_send($1::real[]) AS binary, $1::real[] AS text`,
            [`{${values.join(",")}}`]
          )
          const decoded = Array.from(floatsOfArraySend(row!.binary))
          expect(decoded).toEqual(row!.text.map((v) => Math.fround(Number(v))))
          // the literal writes -0 as 0
          expect(decoded).toEqual(values.map((v) => (v === 0 ? 0 : Math.fround(v))))
        }
      }).pipe(Effect.orDie))
  })
}
