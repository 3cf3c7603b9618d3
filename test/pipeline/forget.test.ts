/**
 * Forget examples pinned (docs/FORGET.md): a chain of contradictions (the forgotten fact's
 * contradictions pass on), a restated place merging back, and the cases the property leaves out
 * because the other world depended on the forgotten text: what happens instead is pinned here.
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { expect } from "vitest"
import { forEachDialect } from "../support/databases.js"
import { forgetWorld, onFactSentenceApp } from "../support/forgetWorld.js"

const live = (user: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql.unsafe<{ fact: string }>(
        `SELECT s.name || ' ' || e.relation || ' ' || t.name || ' ' || substr(e.valid_at, 1, 4)
        || CASE WHEN e.invalid_at IS NULL THEN '' ELSE ' until ' || substr(e.invalid_at, 1, 4) END AS fact
      FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
      JOIN gb_datasets d ON d.id = e.dataset_id WHERE d.user_id = '${user}' ORDER BY e.id`
      )
  ).pipe(
    Effect.map((rows) => rows.map((r) => r.fact)),
    Effect.orDie
  )

/** Remembers the texts as `user`, forgets text `k` (when given), and gives every fact with its end. */
const world = forgetWorld(live)

forEachDialect((_dialect, makeLayer) => {
  const run = onFactSentenceApp(makeLayer())

  it.live("a chain: Berlin, Paris, London; forgetting Paris leaves Berlin closed at London, as never remembering it", () =>
    run(Effect.gen(function*() {
      const texts = [
        "Alice Novak lives in Berlin in 2020.",
        "Alice Novak lives in Paris in 2022.",
        "Alice Novak lives in London in 2024."
      ]
      const forgotten = yield* world("chain", texts, 1)
      expect(forgotten).toEqual(["Alice Novak lives_in Berlin 2020 until 2024", "Alice Novak lives_in London 2024"])
      expect(yield* world("chain-without", [texts[0]!, texts[2]!])).toEqual(forgotten)
    })))

  it.live("a place restated after the forgotten text closed it merges back into the first, as never remembering it", () =>
    run(Effect.gen(function*() {
      const texts = [
        "Alice Novak lives in Berlin in 2020.",
        "Alice Novak lives in Lisbon in 2021.",
        "Alice Novak lives in Berlin in 2022.",
        "Alice Novak lives in Osaka in 2023."
      ]
      const forgotten = yield* world("restated", texts, 1)
      expect(forgotten).toEqual(["Alice Novak lives_in Berlin 2020 until 2023", "Alice Novak lives_in Osaka 2023"])
      expect(yield* world("restated-without", [texts[0]!, texts[2]!, texts[3]!])).toEqual(forgotten)
    })))

  it.live("not equal: a text states two places of one person at once (they were never compared)", () =>
    run(Effect.gen(function*() {
      const texts = [
        "Bruno Diaz lives in Osaka in 2020.",
        "Bruno Diaz lives in Berlin in 2022.",
        "Bruno Diaz lives in Osaka in 2024. Bruno Diaz lives in Berlin in 2024."
      ]
      // without the second text, the third's Osaka is a repeat of the first: one Osaka fact, live
      expect(yield* world("two-places-without", [texts[0]!, texts[2]!])).toEqual([
        "Bruno Diaz lives_in Osaka 2020",
        "Bruno Diaz lives_in Berlin 2024"
      ])
      // with it forgotten: Berlin takes the third text's words (2024) and still closes the first
      // Osaka; the third text's own Osaka (stored anew, as the first was closed then) is live
      expect(yield* world("two-places", texts, 1)).toEqual([
        "Bruno Diaz lives_in Osaka 2020 until 2024",
        "Bruno Diaz lives_in Berlin 2024",
        "Bruno Diaz lives_in Osaka 2024"
      ])
    })))

  it.live("a place restated with another year: its forget moves the fact's start, as never remembering it", () =>
    run(Effect.gen(function*() {
      const texts = [
        "Chen Wei lives in Osaka in 2020.",
        "Chen Wei lives in Osaka in 2021.",
        "Chen Wei lives in Quito in 2020.",
        "Chen Wei lives in Tunis in 2020."
      ]
      // without the first text, Osaka is 2021 from the start: Quito and Tunis are older, stored closed
      // by it; Tunis, as old as Quito and told later, ends Quito (rule 4; closed facts are compared too)
      const without = yield* world("moved-without", texts.slice(1))
      expect(without).toEqual([
        "Chen Wei lives_in Osaka 2021",
        "Chen Wei lives_in Quito 2020 until 2020",
        "Chen Wei lives_in Tunis 2020 until 2021"
      ])
      // with it forgotten: Osaka's start goes back to 2021 and every contradiction it took part in is
      // decided again by the times now, the one with Tunis too (kept although it ended neither then)
      expect(yield* world("moved", texts, 0)).toEqual(without)
    })))
})
