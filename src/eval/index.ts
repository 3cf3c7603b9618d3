/** Eval mode (ATIF trajectories) and the knowledge evals, for embedders and scripts. */
export * as Atif from "../domain/Atif.js"
export { ATIF_SCHEMA_VERSION, Trajectory, validateTrajectory } from "../domain/Atif.js"
export { type EvalCase, EvalCaseFile, EvalCaseInvalid, loadCases, parseCase } from "./cases.js"
export {
  DEFAULT_EVAL_USER,
  EvalAborted,
  type EvalOptions,
  EvalOutputFailed,
  type EvalReport,
  formatReport,
  readGraph,
  runCase,
  runEvals
} from "./runner.js"
export * from "./score.js"
export {
  type EvalRun,
  makeTrajectoryRecorder,
  rememberWithTrajectory,
  requestInput,
  type RunEnd,
  type TrajectoryRecorder
} from "./trajectory.js"
