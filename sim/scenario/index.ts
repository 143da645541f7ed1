/** Scenario files: the schema, the loader, the client mapping and the generated JSON Schema and reference. */
export {
  type ClientSetup,
  type ClientSource,
  msOf,
  type TraceReplayConfig,
  toArrival,
  toClientConfig,
  toDistribution,
  toRetry,
  type WorkloadShiftConfig,
} from './client-config.js';
export { dataFileCandidates, expandVars, REPO_ROOT } from './data-files.js';
export { type LibraryEntry, renderReadme, renderSchemaFile, scenarioJsonSchema } from './docs.js';
export {
  formatPath,
  isScenarioError,
  SCENARIO_ERROR_CODE,
  ScenarioError,
  type ScenarioIssue,
} from './errors.js';
export { GATE_ENV_NAMES } from './gate-section.js';
export { deepFreeze, loadScenario, parseScenarioText, type ScenarioLoadOptions } from './load.js';
export type {
  EngineGroup,
  LoxilbGate,
  PoolEndpoint,
  ResolvedTrace,
  RuleEndpointInput,
  RuleInput,
  Scenario,
  SmgGate,
  Telemetry,
  TimelineEvent,
} from './resolve.js';
export { generatedEndpoint } from './resolve-engines.js';
export {
  type ArrivalSpec,
  type ClientsSpec,
  type ClosedLoopSpec,
  type DistributionSpec,
  ENGINE_PROFILES,
  ENGINE_ROLES,
  type EngineGroupSpec,
  type HealthSpec,
  METRICS_VERSIONS,
  type RetrySpec,
  type ScenarioFile,
  type SmgSettings,
  scenarioFileSchema,
  type TelemetrySpec,
  type TenantSpec,
  type TimelineEventSpec,
  TRACE_FORMATS,
  type TraceSpec,
} from './schema.js';
export { generatedFiles, libraryEntries, SCENARIOS_DIR, scenarioFiles, writeSchema } from './write-schema.js';
