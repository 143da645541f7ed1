export type {
  BuiltEngine,
  CatalogueEntry,
  EngineBuildOptions,
  EngineKind,
  FixedProfileOptions,
  LimitOverrides,
} from './catalogue.js';
export {
  buildEngine,
  catalogueEntry,
  EMULATED_PROFILES,
  ENGINE_CATALOGUE,
  FIXED_PROFILE,
  SIMULATED_PROFILES,
} from './catalogue.js';
export { Deque } from './deque.js';
export type { EngineInspection, SeqInspection, VllmEngineConfig } from './engine.js';
export { VllmEngine } from './engine.js';
export type { ExponentialEngineConfig } from './exponential-engine.js';
export { ExponentialServerEngine } from './exponential-engine.js';
export type { VllmMetricsVersion } from './exposition.js';
export {
  escapeLabelValue,
  formatNumber,
  metricFamilyNames,
  renderPrometheus,
  VLLM_METRICS_VERSIONS,
} from './exposition.js';
export type { StepTimePoint } from './fit.js';
export { fitStepTime, leastSquares } from './fit.js';
export type { FixedEngineConfig } from './fixed-engine.js';
export { FixedEngine } from './fixed-engine.js';
export { BlockPool, blocksFor } from './kv-cache.js';
export type { EngineMetricsSnapshot, HistogramSnapshot, RequestTimes } from './metrics.js';
export {
  build125Buckets,
  EngineMetricsRecorder,
  Histogram,
  ITL_BUCKETS_S,
  REQUEST_LATENCY_BUCKETS_S,
  TTFT_BUCKETS_S,
} from './metrics.js';
export type { DeploymentProfile, DeploymentProfileId, EngineLimits, RooflineParams } from './profiles.js';
export { DEPLOYMENT_PROFILES } from './profiles.js';
export type { SchedSeq, SchedulerLimits } from './scheduler.js';
export { batchShape, StepPlan, scheduleStep } from './scheduler.js';
export { SimEngineHost } from './sim-host.js';
export type { BatchShape, ColdStart, FittedCoefficients, StepTimeModel } from './step-time.js';
export {
  coldStartMultiplier,
  decodeBatch,
  fittedStepTime,
  prefillBatch,
  rooflineStepTime,
} from './step-time.js';
export type {
  BatchInfo,
  Engine,
  EngineRequest,
  EngineRole,
  FinishedRequest,
  FinishReason,
  RequestProgress,
  StepOutcome,
  SubmitRejection,
  SubmitResult,
  TrackedEngine,
} from './types.js';
