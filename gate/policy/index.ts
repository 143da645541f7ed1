/**
 * The policy layer of the gate (queue-is-a-policy.md): the policy file, the trusted envelope and
 * the pure decision core, and the host that runs it (queues, expiry, defer drain, swap, scorecard).
 * Opt-in: nothing in the plain gate uses it.
 */
export { AgeHistogram } from './age-histogram.js';
export { compilePolicy, type Policy, type PolicyClass } from './compile.js';
export {
  type ActualUse,
  type Conditions,
  type DispatchOutcome,
  type Disposition,
  type Grant,
  PolicyCore,
  PolicyInputError,
  type QueueTicket,
  type RetryAfter,
} from './decide.js';
export { DeferStoreError, MemoryDeferStore } from './defer-memory.js';
export { type DeferStoreCall, DeferStoreOutageError, FailingDeferStore } from './defer-outage.js';
export type { DeferRecord, DeferResult, DeferredItem, DeferState, DeferStore } from './defer-store.js';
export {
  type AdmissionEnvelope,
  type Consequence,
  deriveEnvelope,
  type EnvelopeInputs,
  type EnvelopeProblem,
  type EnvelopeResult,
  type EnvelopeSources,
} from './envelope.js';
export { isPolicyError, POLICY_ERROR_CODE, PolicyError, type PolicyIssue } from './errors.js';
export { type CostEstimate, type EstimatorParams, estimateSeats } from './estimator.js';
export {
  type Completion,
  type LeaseVia,
  type PolicyAdmission,
  PolicyGate,
  type PolicyGateEvents,
  type PolicyGateOptions,
  type PolicyLease,
  type QueueExit,
  type SwapReport,
} from './host.js';
export { renderPolicyMetrics } from './host-metrics.js';
export type { PolicyWaiter } from './host-queue.js';
export {
  type ClassSnapshot,
  degradeModeLabel,
  HostScore,
  MAX_SHED_WATCH,
  type PolicySnapshot,
  type QueueLeave,
  type TenantSnapshot,
} from './host-score.js';
export type { DeferStoreSnapshot } from './host-store.js';
export { MAX_POLICY_CHARS, parsePolicy, parsePolicyDocument } from './parse.js';
export { availablePools, type PoolCarrier } from './pool-availability.js';
export { type AttemptVerdict, type IntentState, RetryBudget } from './retry-budget.js';
export {
  type DegradeOption,
  type PolicyDocument,
  type PolicyFileInput,
  policyFileSchema,
  policyJsonSchema,
  renderPolicySchema,
} from './schema.js';
export {
  type ClassScore,
  DISPOSITIONS,
  type DispositionKind,
  type EmergencyUse,
  type EstimatorError,
  REJECT_REASONS,
  type RejectReason,
  Scorecard,
} from './scorecard.js';
export { type Lane, SeatBook, type SeatGrant } from './seats.js';
