// Legacy copy of the read path as of 534360b (issue 38, item 7): test/query/readEquivalence.test.ts
// runs it beside the new one. Deleted once the comparison has passed.
import { Effect } from "effect"
import { runContext } from "./context.js"
import { runListSessions } from "./datasets.js"
import { readDeps } from "./deps.js"
import { runEntityStory } from "./entity.js"
import { runExportGraph } from "./export.js"
import { runFactView } from "./fact.js"
import { runSearch } from "./searchProgram.js"
import { SearchRepoLive } from "./sqlSearchRepo.js"

/** The old read programs over the old SearchRepo (its own adapter, on the same SqlClient). */
export const legacyReads = Effect.map(readDeps, (deps) => ({
  search: (r: Parameters<typeof runSearch>[1]) => runSearch(deps, r),
  context: (r: Parameters<typeof runContext>[1]) => runContext(deps, r),
  exportGraph: (r: Parameters<typeof runExportGraph>[1]) => runExportGraph(deps, r),
  entityStory: (r: Parameters<typeof runEntityStory>[1]) => runEntityStory(deps, r),
  factView: (r: Parameters<typeof runFactView>[1]) => runFactView(deps, r),
  sessions: (r: Parameters<typeof runListSessions>[1]) => runListSessions(deps, r)
}))

export const LegacySearchRepoLive = SearchRepoLive

export type LegacyReads = Effect.Effect.Success<typeof legacyReads>
