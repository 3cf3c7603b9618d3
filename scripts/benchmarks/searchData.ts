/**
 * The read side's dataset (shared by scripts/bench-search.ts and the bench's search scenario):
 * one dataset of `facts` facts among facts/5 entities, seeded through the repositories. Names
 * come from a small vocabulary so that words repeat as in real data; about 10% of the facts
 * are closed; every fact is linked to one of facts/10 artifacts and one of 100 sessions; every
 * entity and fact has a hash-embedding vector (what the fake embeddings server answers for the
 * same text) in the vector store.
 */
import { Effect } from "effect"
import { hashEmbedding } from "../../layers/testing/HashEmbeddings.js"
import { edgeVectorId, entityText, entityVectorId, indexName } from "../../src/pipeline/vectors.js"
import { Database } from "../../src/services/Database.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { GraphRepo } from "../../src/services/GraphRepo.js"
import { VectorStore } from "../../src/services/VectorStore.js"

const BATCH = 500

// a deterministic generator, so runs are comparable
let state = 42
const random = () => {
  state = (state * 1664525 + 1013904223) % 2 ** 32
  return state / 2 ** 32
}
/** restarts the generator: the same calls then give the same data */
export const resetRandom = (seed = 42) => void (state = seed)
const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

const FIRST = [
  "Alice",
  "Bob",
  "Carol",
  "Dmitri",
  "Emma",
  "Farid",
  "Grace",
  "Hiro",
  "Ines",
  "Jonas",
  "Kemal",
  "Lena",
  "Maya",
  "Nils",
  "Olga",
  "Pedro",
  "Quinn",
  "Rosa",
  "Sami",
  "Tara"
]
const LAST = [
  "Smith",
  "Novak",
  "Okafor",
  "Tanaka",
  "Garcia",
  "Müller",
  "Rossi",
  "Haddad",
  "Larsen",
  "Kowalski",
  "Silva",
  "Chen",
  "Dubois",
  "Ivanova",
  "Moreau"
]
const ORG = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Cyberdyne", "Tyrell"]
const ORG_KIND = ["Labs", "Bank", "Foods", "Motors", "Studios", "Energy", "Robotics", "Press"]
const CITY = ["Berlin", "Paris", "Lagos", "Tokyo", "Lima", "Oslo", "Cairo", "Quito", "Seoul", "Perth", "Porto", "Riga"]
const RELATIONS: ReadonlyArray<readonly [string, string]> = [
  ["lives in", "lives in"],
  ["works at", "works at"],
  ["knows", "knows"],
  ["founded", "founded"],
  ["visited", "visited"],
  ["invested in", "invested in"],
  ["moved to", "moved to"],
  ["studied at", "studied at"]
]
const TOPICS = [
  "rockets",
  "coffee",
  "batteries",
  "films",
  "chess",
  "solar panels",
  "bread",
  "satellites",
  "jazz",
  "robots"
]

const iso = (ms: number) => new Date(ms).toISOString()
const START = Date.UTC(2015, 0, 1)
const SPAN = Date.UTC(2025, 0, 1) - START

export interface Seeded {
  readonly datasetId: number
  readonly names: ReadonlyArray<string>
}

const entityName = (i: number): { name: string; type: string; description: string } => {
  switch (i % 4) {
    case 0:
    case 1:
      return {
        name: `${pick(FIRST)} ${pick(LAST)} ${i}`,
        type: "person",
        description: `a person who likes ${pick(TOPICS)}`
      }
    case 2:
      return {
        name: `${pick(ORG)} ${pick(ORG_KIND)} ${i}`,
        type: "organization",
        description: `a company making ${pick(TOPICS)}`
      }
    default:
      return { name: `${pick(CITY)} ${i}`, type: "place", description: `a district known for ${pick(TOPICS)}` }
  }
}

/** Seeds dataset "main" of `user`; `onProgress` hears the facts written so far. */
export const seedDataset = (
  user: string,
  facts: number,
  entities: number,
  dims: number,
  onProgress: (done: number) => void = () => {}
) =>
  Effect.gen(function*() {
    const database = yield* Database
    const datasets = yield* DatasetsRepo
    const graph = yield* GraphRepo
    const vectors = yield* VectorStore
    const dataset = yield* datasets.getOrCreate(user, "main", iso(START))
    const artifactIds: Array<number> = []
    for (let i = 0; i < Math.max(1, Math.floor(facts / 10)); i++) {
      const row = yield* graph.insertArtifact({
        dataset_id: dataset.id,
        kind: "knowledge",
        text: `Text ${i} about ${pick(TOPICS)}.`,
        parent_id: null,
        session_id: `session-${i % 100}`,
        valid_at: iso(START + (i / facts) * 10 * SPAN),
        created_at: iso(START + (i / facts) * 10 * SPAN),
        inference_id: null,
        query: null,
        metadata: null
      })
      artifactIds.push(row.id)
    }
    const specs = Array.from({ length: entities }, (_, i) => entityName(i))
    const ids: Array<number> = []
    for (let from = 0; from < specs.length; from += BATCH) {
      const chunk = specs.slice(from, from + BATCH)
      const rows = yield* database.withTransaction(graph.upsertEntities(
        dataset.id,
        chunk.map((e) => ({ ...e, name_key: e.name.toLowerCase(), model_id: null, created_at: iso(START) }))
      ))
      ids.push(...rows.map((r) => r.id))
      yield* vectors.upsert(
        indexName(dataset.id, "entities"),
        rows.map((r) => ({
          id: entityVectorId(r.id),
          values: hashEmbedding(entityText(r), dims),
          metadata: { dataset_id: dataset.id, kind: "entity", entity_id: r.id }
        }))
      )
    }
    for (let from = 0; from < facts; from += BATCH) {
      const n = Math.min(BATCH, facts - from)
      const edges = Array.from({ length: n }, (_, k) => {
        const i = from + k
        const s = Math.floor(random() * ids.length)
        let t = Math.floor(random() * ids.length)
        if (t === s) t = (t + 1) % ids.length
        const [relation, verb] = pick(RELATIONS)
        const valid = START + random() * SPAN
        const closed = random() < 0.1
        const created = START + (i / facts) * SPAN
        return {
          dataset_id: dataset.id,
          source_id: ids[s]!,
          target_id: ids[t]!,
          relation,
          description: `${specs[s]!.name} ${verb} ${specs[t]!.name}${random() < 0.3 ? ` for ${pick(TOPICS)}` : ""}`,
          valid_at: iso(valid),
          invalid_at: closed ? iso(valid + random() * (START + SPAN - valid)) : null,
          created_at: iso(created),
          expired_at: closed ? iso(created) : null,
          artifact_id: artifactIds[i % artifactIds.length]!,
          model_id: null
        }
      })
      const rows = yield* database.withTransaction(Effect.gen(function*() {
        const inserted = yield* graph.insertEdges(edges)
        for (const row of inserted) {
          yield* graph.linkEdgeArtifacts(row.artifact_id!, [row.id])
        }
        const bySession = new Map<string, Array<number>>()
        for (const row of inserted) {
          const session = `session-${row.id % 100}`
          bySession.set(session, [...(bySession.get(session) ?? []), row.id])
        }
        for (const [session, edgeIds] of bySession) yield* graph.linkEdgeSessions(session, edgeIds)
        return inserted
      }))
      yield* vectors.upsert(
        indexName(dataset.id, "edges"),
        rows.map((r) => ({
          id: edgeVectorId(r.id),
          values: hashEmbedding(r.description, dims),
          metadata: { dataset_id: dataset.id, kind: "edge", edge_id: r.id }
        }))
      )
      onProgress(from + n)
    }
    return { datasetId: dataset.id, names: specs.map((s) => s.name) } satisfies Seeded
  })

/** `count` questions of four shapes about the dataset's names. */
export const questions = (names: ReadonlyArray<string>, count: number): Array<string> =>
  Array.from({ length: count }, (_, i) => {
    const a = pick(names).replace(/ \d+$/, "")
    switch (i % 4) {
      case 0:
        return `Where does ${a} live?`
      case 1:
        return `Who works at ${pick(ORG)} ${pick(ORG_KIND)}?`
      case 2:
        return `${a} and ${pick(TOPICS)}`
      default:
        return `What did ${a} found in ${pick(CITY)}?`
    }
  })
