-- Run once by the postgres image when the data directory is created: the extension exists
-- before either gligabao process starts, so neither races the other on CREATE EXTENSION
-- (docs/VECTORS.md) and both search with pgvector HNSW.
CREATE EXTENSION IF NOT EXISTS vector;
