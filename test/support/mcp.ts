/** The MCP tools as an agent host must see them (docs/MCP.md), in `tools/list` order. */
export const MCP_TOOLS = [
  "remember",
  "remember_status",
  "search",
  "query",
  "get_entity",
  "get_context",
  "list_datasets",
  "list_sessions",
  "forget",
  "correct"
]
