/**
 * `gligabao/testing`: deterministic layers for tests of code that uses gligabao, the same the
 * project's own tests use. Compose them with `Gligabao.layer({ database: { path: ":memory:" }, layers: {...} })`.
 */
export {
  MemoryVectorStore,
  MemoryVectorStoreLive,
  type MemoryVectorStoreOptions
} from "../vectors/MemoryVectorStore.js"
export { FakeGeo, type FakeGeoAnswer } from "./FakeGeo.js"
export { hashEmbedding, HashEmbeddings, HashEmbeddingsLive, type HashEmbeddingsOptions } from "./HashEmbeddings.js"
export { type LlmScript, type ScriptedAnswer, ScriptedLlm } from "./ScriptedLlm.js"
