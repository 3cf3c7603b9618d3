/** The read side as a library: the same programs the HTTP handlers and the CLI run. */
export { buildQueryPrompt, NOTHING_KNOWN, type ParsedAnswer, parseQueryAnswer, QUERY_STAGE } from "./answer.js"
export {
  type DatasetOut,
  type DatasetsResponse,
  deleteDataset,
  type DeletedDataset,
  listDatasets,
  listSessions,
  runDeleteDataset,
  runListDatasets,
  runListSessions,
  type SessionsResponse
} from "./datasets.js"
export { filtersAt, filtersOf, findDataset, type ReadDeps, readDeps, readDepsOption } from "./deps.js"
export { EXPORT_PAGE, exportGraph, type GraphExport, runExportGraph } from "./export.js"
export { type Fused, fuseRanks, type RankedList, RRF_K, type Source, SOURCES } from "./fusion.js"
export {
  type GraphFormat,
  type GraphRequest,
  type QueryRequest,
  type ReadOptions,
  type ReadScope,
  type SearchRequest,
  validateGraphRequest,
  validateQueryRequest,
  validateScope,
  validateSearchRequest,
  validateUserId
} from "./requests.js"
export { candidatesFor, GRAPH_SEEDS, MIN_SIMILARITY, retrieve, type Retrieved } from "./retrieve.js"
export {
  query,
  type QueryError,
  type QueryInference,
  type QueryResponse,
  runQuery,
  runSearch,
  search,
  type SearchResponse
} from "./search.js"
export { queryTerms } from "./terms.js"
export type { ArtifactOut, ChunkOut, FactOut, LinkedEntityOut, Scored } from "./views.js"
