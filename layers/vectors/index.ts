export { MemoryVectorStore, MemoryVectorStoreLive, type MemoryVectorStoreOptions } from "./MemoryVectorStore.js"
export { makePineconeStore, namespaceFor, PineconeStoreLive, type PineconeStoreOptions } from "./PineconeStore.js"
export { hnswIndexName, makePostgresVectorStore, PostgresVectorStoreLive } from "./PostgresVectorStore.js"
export { makeSqliteVecStore, SqliteVecFileStoreLive, SqliteVecStoreLive, vectorTableName } from "./SqliteVecStore.js"
