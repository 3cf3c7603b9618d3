/** The migrations, in order, for `Migrator.fromRecord` (keys are `<id>_<name>`). */
import init from "./0001_init.js"
import embeddedAt from "./0002_embedded_at.js"
import seriesAnchors from "./0003_series_anchors.js"
import search from "./0004_search.js"
import inferencesStarted from "./0005_inferences_started.js"
import rememberQueue from "./0006_remember_queue.js"
import queueIndexes from "./0007_queue_indexes.js"
import queueProgress from "./0008_queue_progress.js"
import forget from "./0009_forget.js"
import erase from "./0010_erase.js"
import structuredMode from "./0011_structured_mode.js"
import pgVectors from "./0012_pg_vectors.js"
import datasetFullText from "./0013_dataset_full_text.js"
import unknownStart from "./0014_unknown_start.js"
import sharedFullText from "./0015_shared_full_text.js"
import ownFullText from "./0016_own_full_text.js"
import entityWords from "./0017_entity_words.js"
import datasetSchema from "./0020_dataset_schema.js"
import artifactMetadata from "./0021_artifact_metadata.js"
import finishedRunsLeaveQueue from "./0022_finished_runs_leave_queue.js"

export const migrations = {
  "0001_init": init,
  "0002_embedded_at": embeddedAt,
  "0003_series_anchors": seriesAnchors,
  "0004_search": search,
  "0005_inferences_started": inferencesStarted,
  "0006_remember_queue": rememberQueue,
  "0007_queue_indexes": queueIndexes,
  "0008_queue_progress": queueProgress,
  "0009_forget": forget,
  "0010_erase": erase,
  "0011_structured_mode": structuredMode,
  "0012_pg_vectors": pgVectors,
  "0013_dataset_full_text": datasetFullText,
  "0014_unknown_start": unknownStart,
  "0015_shared_full_text": sharedFullText,
  "0016_own_full_text": ownFullText,
  "0017_entity_words": entityWords,
  "0020_dataset_schema": datasetSchema,
  "0021_artifact_metadata": artifactMetadata,
  "0022_finished_runs_leave_queue": finishedRunsLeaveQueue
}
