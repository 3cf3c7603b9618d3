/**
 * Which endpoints of the served OpenAPI document the Python client (clients/python) calls, under
 * which method names, and the class names of their inline schemas (the document names its
 * components, not a body or a parameter list written inline). Every operation of the document is
 * either here or in NOT_IN_CLIENT, so a new endpoint stops the generator until it is placed.
 */

export interface ClientOperation {
  /** the client's method name */
  readonly method: string
  /** the class of the query parameters (default: the method's name in PascalCase + "Params") */
  readonly params?: string
  /** the class of an inline request body (default: PascalCase + "Request") */
  readonly body?: string
  /** the classes of inline response bodies by status (default: PascalCase + "Response" + the status unless 200) */
  readonly responses?: Readonly<Record<string, string>>
}

export const CLIENT_OPERATIONS: Readonly<Record<string, ClientOperation>> = {
  "remember.remember": { method: "remember" },
  "remember.rememberBatch": { method: "remember_batch", responses: { "202": "RememberBatchQueued" } },
  "remember.getRun": { method: "run" },
  "remember.cancelRun": { method: "cancel_run" },
  "remember.listRuns": { method: "runs", params: "RunsParams" },
  "runEvents.runEvents": { method: "run_events" },
  "read.search": { method: "search" },
  "read.query": { method: "query" },
  "read.context": { method: "context" },
  "read.graph": { method: "export", params: "ExportParams" },
  "read.findEntity": { method: "entity", params: "EntityParams", responses: { "300": "EntityCandidates" } },
  "read.getFact": { method: "fact", params: "ScopeParams" },
  "read.listDatasets": { method: "datasets", params: "UserParams" },
  "read.listSessions": { method: "sessions", params: "ScopeParams" },
  "read.getDatasetSchema": { method: "dataset_schema", params: "UserParams" },
  "read.setDatasetSchema": { method: "set_dataset_schema", params: "UserParams" },
  "images.getImage": { method: "image", params: "ImageParams" },
  "read.deleteDataset": { method: "forget_dataset", params: "ForgetDatasetParams" },
  "forget.forgetArtifact": { method: "forget_artifact", params: "ScopeParams" },
  "forget.forgetImage": { method: "forget_image", params: "ScopeParams" },
  "users.forgetUser": { method: "forget_user" },
  "correct.deleteFact": { method: "correct_delete_fact", params: "ScopeParams" },
  "correct.deleteEntity": { method: "correct_delete_entity", params: "ScopeParams" },
  "correct.invalidateFact": { method: "correct_invalidate_fact", body: "InvalidateFactRequest" },
  "correct.reopenFact": { method: "correct_reopen_fact", body: "ReopenFactRequest" },
  "correct.mergeEntities": { method: "correct_merge_entities", body: "MergeEntitiesRequest" },
  "health.healthz": { method: "health", responses: { "200": "Health" } },
  "health.readyz": { method: "ready" }
}

/** Left out on purpose: `entity` finds by id through GET /v1/gb/entities; the rest are for operators and evals. */
export const NOT_IN_CLIENT: ReadonlyArray<string | RegExp> = [
  "read.getEntity",
  "remember.evalRemember",
  "metrics.metrics",
  /^admin\./
]
