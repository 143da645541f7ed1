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
export {
  dataFileCandidates,
  type EngineGroup,
  expandVars,
  generatedEndpoint,
  type LoxilbGate,
  type PoolEndpoint,
  REPO_ROOT,
  type ResolvedTrace,
  type RuleEndpointInput,
  type RuleInput,
  type Scenario,
  type SmgGate,
  type Telemetry,
  type TimelineEvent,
} from './resolve.js';
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
