export { MemoryVectorStore, MemoryVectorStoreLive, type MemoryVectorStoreOptions } from "./MemoryVectorStore.js"
export { makePineconeStore, namespaceFor, PineconeStoreLive, type PineconeStoreOptions } from "./PineconeStore.js"
export { makeSqliteVecStore, SqliteVecFileStoreLive, SqliteVecStoreLive, vectorTableName } from "./SqliteVecStore.js"
