/** The read side as a library: the same programs the HTTP handlers and the CLI run. */
export { type Fused, fuseRanks, type RankedList, RRF_K, type Source, SOURCES } from "../kernel/fusion.js"
export { buildQueryPrompt, NOTHING_KNOWN, type ParsedAnswer, parseQueryAnswer, QUERY_STAGE } from "./answer.js"
export { CONTEXT_CANDIDATES, rankRecent, RECENT_WINDOW, runContext } from "./context.js"
export {
  type ContextBlock,
  ENTITIES_HEADER,
  entityLine,
  factLine,
  FACTS_HEADER,
  factSentence,
  renderContext
} from "./contextBlock.js"
export { runDeleteDataset, runListDatasets, runListSessions } from "./datasets.js"
export { filtersAt, filtersOf, findDataset, type ReadDeps, readDeps } from "./deps.js"
export { type EntityStoryError, runEntityStory } from "./entity.js"
export { EXPORT_PAGE, type GraphExport, runExportGraph } from "./export.js"
export { excerptOf, type FactViewError, MAX_EXCERPT_CHARS, runFactView } from "./fact.js"
export { makeReads, Reads, ReadsLive, type ReadsService } from "./Reads.js"
export {
  ContextFields,
  ContextRequest,
  DatasetPath,
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_HOPS,
  DEFAULT_QUERY_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  DeleteDatasetParams,
  entityChoiceProblem,
  EntityPath,
  EntityStoryFields,
  EntityStoryParams,
  EntityStoryPathParams,
  EntityStoryRequest,
  FactPath,
  FactViewFields,
  FactViewRequest,
  type GraphFormat,
  GraphRequest,
  MAX_CONTEXT_TOKENS,
  MAX_ENTITY_NAME_BYTES,
  MAX_HOPS,
  MAX_LIMIT,
  MAX_QUERY_BYTES,
  QueryRequest,
  ReadOptions,
  ReadScope,
  ScopeParams,
  SearchRequest,
  UserParams,
  validateContextRequest,
  validateEntityStoryRequest,
  validateFactViewRequest,
  validateGraphRequest,
  validateQueryRequest,
  validateScope,
  validateSearchRequest,
  validateUserId
} from "./requests.js"
export {
  ArtifactExcerpt,
  ArtifactOut,
  ChunkOut,
  ContextResponse,
  DatasetOut,
  DatasetsResponse,
  DeletedDataset,
  Echo,
  EntityRef,
  EntityStory,
  FactClosure,
  FactOut,
  FactSource,
  FactStatement,
  FactView,
  GraphDocument,
  LinkedEntityOut,
  QueryInference,
  QueryResponse,
  Scored,
  ScoredChunk,
  ScoredEntity,
  ScoredFact,
  SearchResponse,
  SessionOut,
  SessionsResponse,
  StoryFact
} from "./responses.js"
export { candidatesFor, GRAPH_SEEDS, MIN_SIMILARITY, retrieve, type Retrieved } from "./retrieve.js"
export { type QueryError, runQuery, runSearch } from "./search.js"
export { queryTerms } from "./terms.js"
