export * from "./OpenAiEmbeddings.js"
