/**
 * Sluice's gate core: the one public entry point. Pure code: time and timers
 * come through the Clock port, telemetry as plain reports.
 */
export {
  ADAPT_REASONS,
  ADAPT_STATES,
  type AdaptReason,
  type AdaptState,
  adaptiveFloor,
  tighten,
} from './adaptive.js';
export { type Clock, type ClockTimer, ManualClock } from './clock.js';
export {
  type DeclaredFc,
  type EnvWarning,
  parseFcFields,
  type ResolvedConfig,
  readEnv,
  resolveConfig,
  type ValueSource,
} from './config.js';
export {
  ADMISSION_HEADER_NAMES,
  type AdmissionError,
  type AdmissionHeaderValues,
  admissionHeaders,
  type Ceiling,
  DECISION_REASONS,
  type DecisionReason,
  REASON_INDEX,
  type Refusal,
  refusalBody,
  refusalHeaders,
} from './decisions.js';
export type { FcEffective } from './effective.js';
export type { EndpointRole } from './endpoints.js';
export { GATE_ERROR_CODES, GateError, type GateErrorCode, isGateError } from './errors.js';
export {
  FC_FIELD_NAMES,
  type FcFieldName,
  FIELDS,
  type FieldSpec,
  type GateMode,
  MAX_CEILING,
  MAX_QUEUE_DEPTH,
  MAX_WINDOW_MS,
  MODE_VALUES,
  SWITCH_VALUES,
} from './fields.js';
export {
  type ApplyOutcome,
  type ApplyResult,
  Gate,
  type GateOptions,
  type MaintenanceView,
  type RuleView,
  SWEEP_PERIOD_MS,
  type TelemetryTarget,
} from './gate.js';
export { collect, escapeHelp, escapeLabel, type Family, renderPrometheus, type Sample } from './metrics.js';
export { editDistance, nearestName } from './nearest.js';
export {
  INFERENCE_PATHS,
  isInferencePath,
  isSmgBypassPath,
  normalisePath,
  SMG_BYPASS_PATHS,
  SMG_INFERENCE_PATHS,
} from './paths.js';
export { Leg, Permit } from './permit.js';
// The opt-in policy layer (queue-is-a-policy.md); the plain gate does not use it.
export {
  type ActualUse as PolicyActualUse,
  type AdmissionEnvelope,
  availablePools as availablePolicyPools,
  type ClassSnapshot as PolicyClassSnapshot,
  type Completion as PolicyCompletion,
  type Conditions as PolicyConditions,
  type CostEstimate as PolicyCostEstimate,
  compilePolicy,
  type DeferRecord,
  type DeferResult,
  type DeferredItem,
  type DeferState,
  type DeferStore,
  type DeferStoreCall,
  DeferStoreError,
  DeferStoreOutageError,
  type DeferStoreSnapshot,
  type Disposition as PolicyDisposition,
  degradeModeLabel,
  deriveEnvelope,
  type EnvelopeInputs,
  type EnvelopeProblem,
  type EnvelopeResult,
  type EnvelopeSources,
  estimateSeats,
  FailingDeferStore,
  type Grant as PolicyGrant,
  isPolicyError,
  type LeaseVia as PolicyLeaseVia,
  MemoryDeferStore,
  POLICY_ERROR_CODE,
  type Policy,
  type PolicyAdmission,
  type PolicyClass,
  PolicyCore,
  type PolicyDocument,
  PolicyError,
  PolicyGate,
  type PolicyGateEvents,
  type PolicyGateOptions,
  PolicyInputError,
  type PolicyIssue,
  type PolicyLease,
  type PolicySnapshot,
  type PolicyWaiter,
  type PoolCarrier as PolicyPoolCarrier,
  parsePolicy,
  parsePolicyDocument,
  type QueueExit as PolicyQueueExit,
  REJECT_REASONS as POLICY_REJECT_REASONS,
  type RejectReason as PolicyRejectReason,
  type RetryAfter as PolicyRetryAfter,
  renderPolicyMetrics,
  renderPolicySchema,
  type SwapReport as PolicySwapReport,
  type TenantSnapshot as PolicyTenantSnapshot,
} from './policy/index.js';
export type {
  AdmissionRequest,
  Anomalies,
  Decision,
  GateHost,
  GrantOutcome,
  ObserveNote,
  Pool,
  Ticket,
} from './pool.js';
export {
  endpointId,
  INERT_SERVICE_FIELDS,
  type ParsedRule,
  parseRule,
  type RuleEndpoint,
  SERVICE_ARGUMENT_FIELDS,
} from './rule.js';
export {
  parseSmgSettings,
  type ResolvedSmg,
  SMG_I32_MIN,
  SMG_RETRY_AFTER_S,
  SmgGate,
  type SmgGateOptions,
  type SmgResponse,
  type SmgSettings,
  smgResponse,
} from './smg.js';
export {
  formatFieldPath,
  issuesMessage,
  kindOfValue,
  schemaKeys,
  showValue,
  yamlOffset,
  ZOD_TYPE_NAMES,
} from './yaml-source.js';
