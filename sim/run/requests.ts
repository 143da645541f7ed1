/**
 * The life of a request attempt in a run: the gate's decision, the wait, the
 * engine (or a prefill engine then a decode engine), the client's deadline,
 * the end, and the retry the client's policy asks for. This is the gate's
 * host: it receives waiters' turns and endings.
 */
import type {
  AdmissionRequest,
  Decision,
  GateHost,
  GrantOutcome,
  Leg,
  Permit,
  Refusal,
  Ticket,
} from '../../gate/index.js';
import type { RequestDescriptor } from '../clients/request-factory.js';
import type { RetryPolicy } from '../clients/retry.js';
import type { RandomFn } from '../clients/rng.js';
import { KEYLESS_LABEL } from '../clients/tenants.js';
import type { GapSink, RequestProgress, StepOutcome } from '../engine/types.js';
import type { EventHandle, Simulator } from '../kernel/simulator.js';
import type { Admission, ClientView } from './admission.js';
import type { EngineNode, SimEngineRequest } from './engines.js';
import { round3 } from './histogram.js';
import type { GapSource, Outcome, RequestRecord } from './records.js';
import { type ToolCaller, ToolPhase } from './tool-phase.js';

/**
 * `held`: waiting in the policy's class queue or its defer store, before the gate proper;
 * `tools`: admitted, making its tool calls before its generation (sim/run/tool-phase.ts).
 */
type Phase = 'new' | 'held' | 'queued' | 'tools' | 'dispatching' | 'prefill' | 'decode' | 'done';

/** What a policy in front of the gate made of a new attempt (see {@link PolicyHooks}). */
export type PolicyVerdict =
  | { readonly kind: 'go' }
  /** Degraded to a fallback pool: straight to an engine of that pool, past the gate. */
  | { readonly kind: 'pool'; readonly pool: string }
  | { readonly kind: 'held' }
  | { readonly kind: 'refuse'; readonly view: ClientView; readonly outcome: 'shed' | 'timed_out' };

/**
 * The policy in front of the gate (sim/run/policy-admission.ts): it decides each new inference
 * attempt, may hold it (queue, defer) and later let it go on ({@link Lifecycle.policyGo}) or refuse
 * it ({@link Lifecycle.policyRefuse}), and hears how every attempt it saw ended.
 */
export interface PolicyHooks {
  arrive(a: Attempt): PolicyVerdict;
  /** The attempt ended (its seats go back); `clientLeft` when its client disconnected. */
  ended(a: Attempt, outcome: Outcome, clientLeft: boolean): void;
}

/**
 * One attempt in flight. It is also the request a single engine serves (the common case, no
 * P/D legs and no recorded timing): one object fewer per request for the engines to touch.
 */
export class Attempt implements SimEngineRequest, ToolCaller {
  phase: Phase = 'new';
  ticket: Ticket | null = null;
  permit: Permit | null = null;
  node: EngineNode | null = null;
  prefillLeg: Leg | null = null;
  decodeLeg: Leg | null = null;
  decodeNode: EngineNode | null = null;
  queuedAtMs = -1;
  admittedAtMs = -1;
  firstTokenAtMs = -1;
  /** Output tokens of the engine legs that ended (a P/D prefill leg makes the first one). */
  generated = 0;
  /** The engine leg in progress: its emitted tokens count on top of `generated`. */
  leg: RequestProgress | null = null;
  deadline: EventHandle | null = null;
  /** The end of its tool call in progress (sim/run/tool-phase.ts); null when none. */
  toolEvent: EventHandle | null = null;
  /** Tool calls it has finished. */
  toolCallsDone = 0;
  decision: RequestRecord['decision'] = 'admit';
  // ---- set by a policy in front of the gate (sim/run/policy-admission.ts)
  /** The class the policy derived. */
  className: string | undefined = undefined;
  /** The policy's disposition ('' without a policy). */
  disposition = '';
  /** The reject reason, degrade mode or expiry reason ('' otherwise). */
  reason = '';
  /** The deadline the policy's envelope carried, absolute ms; -1 when none was derived. */
  policyDeadlineMs = -1;
  /** The policy's own state of this attempt (its grant, ticket or deferred item). */
  policyState: unknown = undefined;
  /** Neighbours in the lifecycle's list of live attempts (oldest first). */
  prevLive: Attempt | null = null;
  nextLive: Attempt | null = null;
  /** As an engine request: the descriptor's token counts, and when it reached the engine (ms). */
  readonly promptTokens: number;
  /** The descriptor's, or fewer when a policy degraded the request to a reduced max_tokens. */
  outputTokens: number;
  arrivalMs = -1;
  constructor(readonly d: RequestDescriptor) {
    this.promptTokens = d.promptTokens;
    this.outputTokens = d.outputTokens;
  }
  /**
   * `d.id` as the engines' request id, made when asked: the simulator's engines look ids up
   * only to abort a request, so most attempts never need the string.
   */
  get id(): string {
    return String(this.d.id);
  }
  /** Output tokens generated so far (ended legs and the leg in progress). */
  get generatedSoFar(): number {
    return generatedTokens(this);
  }
  /** As an engine request, the run's context is the attempt itself. */
  get ctx(): Attempt {
    return this;
  }
}

/**
 * The token gaps of an attempt's last engine leg, read when asked: the gaps between the leg's
 * emissions, and for a decode leg after a P/D prefill the gap from the first token before
 * them. The client of a stream sees every token when the engine emits it (one SSE event per
 * token per step, as vLLM streams), so these are the client's inter-token gaps.
 */
class LegGaps implements GapSource {
  leg: RequestProgress | null = null;
  /** When the attempt's first token came, ms (-1 if none). */
  firstTokenAtMs = -1;
  addTo(sink: GapSink): void {
    const leg = this.leg;
    if (leg === null || leg.tokenGaps === undefined) return;
    const first = leg.tokenGaps(sink);
    if (this.firstTokenAtMs >= 0 && first > this.firstTokenAtMs)
      sink.addUs(Math.round((first - this.firstTokenAtMs) * 1000));
  }
}

/**
 * Output tokens generated for an attempt so far: its ended legs plus the leg in progress
 * (whose count stays readable after an abort or a lost engine).
 */
function generatedTokens(a: Attempt): number {
  return a.generated + (a.leg === null ? 0 : a.leg.emittedTokens);
}

/** Folds the tokens of the leg that just finished into the attempt's count. */
function endLeg(a: Attempt): void {
  a.generated = generatedTokens(a);
  a.leg = null;
}

export interface LifecycleOptions {
  sim: Simulator;
  admission: Admission;
  nodes: readonly EngineNode[];
  retry: RetryPolicy;
  retryRng: RandomFn;
  /** Makes the next attempt of a request. */
  nextAttempt: (prev: RequestDescriptor, atMs: number) => RequestDescriptor;
  /**
   * Receives every ended attempt's record, and for a streamed attempt that completed the gaps
   * between its consecutive token deliveries (see `RunSummary.itl_ms`). The record and the
   * gaps are reused for the next record: they are valid only during the call (copy to keep).
   */
  record: (r: RequestRecord, itlGaps?: GapSource) => void;
  /** A logical request ended for good (no retry follows): closed-loop users think, then send again. */
  logicalEnd: (d: RequestDescriptor, nowMs: number) => void;
  /** No retry is sent at or after this time, ms. */
  endMs: number;
  /** Consecutive failures on an endpoint, for the circuit breaker. */
  onEndpointResult: (node: EngineNode, ok: boolean) => void;
  /** Called after every admission decision and hand-off, to follow the gauges' maxima. */
  onGaugeChange: () => void;
  /** Watches every new attempt's decision (observe-mode reports). */
  observer?: RunObserver;
  /** Time a non-streamed request's TTFT to its whole answer, as its client sees it (see `RunOptions.clientTtft`). */
  clientTtft?: boolean;
  /** A policy in front of the gate (`gate.policy`). */
  policy?: PolicyHooks;
  /** Fill the records' class fields (the clients carry envelope inputs, or a policy is configured). */
  classColumns?: boolean;
  /** The class of a request whose client names none, without a policy. */
  defaultClass?: string;
  /** The engine of a fallback pool a degraded request runs on (sim/run/fallback-pools.ts), or null. */
  fallbackPick?: (pool: string) => EngineNode | null;
}

/** Watches the gate's decisions in a run. */
export interface RunObserver {
  /**
   * A new attempt was decided at `nowMs`; `inflightBefore` is the pool's
   * executing count it met (what a ceiling would have been compared with).
   */
  decided(d: RequestDescriptor, decision: Decision, inflightBefore: number, nowMs: number): void;
}

export class Lifecycle implements GateHost {
  readonly #o: LifecycleOptions;
  /**
   * Attempts not yet ended, oldest first: a doubly linked list through the attempts
   * themselves, so joining and leaving it is two pointer writes (no hashing).
   */
  #liveHead: Attempt | null = null;
  #liveTail: Attempt | null = null;
  #liveCount = 0;
  /** The record every ended attempt's fields are written into (see `LifecycleOptions.record`). */
  readonly #record: RequestRecord = {
    id: 0,
    logical_id: 0,
    attempt: 0,
    tenant: '',
    sent_ms: 0,
    protocol: 'http1',
    stream: false,
    pd: false,
    inference: false,
    prompt_tokens: 0,
    output_tokens: 0,
    decision: 'admit',
    outcome: 'completed',
    status: 0,
    error: '',
    endpoint: '',
    queue_wait_ms: '',
    ttft_ms: '',
    e2e_ms: '',
    good: false,
    generated_tokens: 0,
    wasted_tokens: 0,
    tpot_ms: '',
  };
  /** The token gaps of {@link Lifecycle.#gapsOf}'s attempt, refilled for each (see `LifecycleOptions.record`). */
  readonly #gaps = new LegGaps();
  /** The attempt whose gaps {@link Lifecycle.#gaps} holds, until its record is handed over. */
  #gapsOf: Attempt | null = null;
  #rr = 0;
  /** Nodes by endpoint id (the first of each id, as a search in order finds). */
  readonly #nodeById = new Map<string, EngineNode>();
  // Event callbacks that take the attempt as their argument: no closure per event.
  readonly #onDeadline = (a: Attempt): void => this.#clientLeaves(a);
  readonly #onOverheadDone = (a: Attempt): void =>
    this.#submit(a, a.node as EngineNode, a.d.pd ? 'prefill' : 'decode');
  readonly #onToolsDone = (a: Attempt): void => {
    if (a.phase !== 'tools') return;
    a.phase = 'dispatching';
    this.#o.sim.after((a.node as EngineNode).apiOverheadMs, this.#onOverheadDone, a);
  };
  /**
   * The tool calls admitted attempts make before their generation, holding their permit or
   * seats; its `slowdown` is the knob `tool_slowdown` events turn.
   */
  readonly tools: ToolPhase<Attempt>;

  constructor(o: LifecycleOptions) {
    this.#o = o;
    this.tools = new ToolPhase<Attempt>(o.sim, this.#onToolsDone);
    for (const n of o.nodes) if (!this.#nodeById.has(n.endpoint.id)) this.#nodeById.set(n.endpoint.id, n);
  }

  /** How many attempts have not ended yet. */
  get liveCount(): number {
    return this.#liveCount;
  }

  #addLive(a: Attempt): void {
    const tail = this.#liveTail;
    a.prevLive = tail;
    if (tail === null) this.#liveHead = a;
    else tail.nextLive = a;
    this.#liveTail = a;
    this.#liveCount++;
  }

  #removeLive(a: Attempt): void {
    const { prevLive: prev, nextLive: next } = a;
    if (prev === null) this.#liveHead = next;
    else prev.nextLive = next;
    if (next === null) this.#liveTail = prev;
    else next.prevLive = prev;
    a.prevLive = null;
    a.nextLive = null;
    this.#liveCount--;
  }

  /** A new attempt arrives at the gateway now. */
  send(d: RequestDescriptor): void {
    const a = new Attempt(d);
    this.#addLive(a);
    const { sim } = this.#o;
    if (d.deadlineMs !== undefined) {
      const at = Math.max(d.deadlineMs, sim.now());
      a.deadline = sim.schedule(at, this.#onDeadline, a);
    }
    const policy = this.#o.policy;
    if (policy !== undefined && d.inference) {
      const v = policy.arrive(a);
      if (v.kind === 'held') {
        a.phase = 'held';
        a.decision = 'queued';
        a.queuedAtMs = sim.now();
        this.#o.onGaugeChange();
        return;
      }
      if (v.kind === 'refuse') {
        a.decision = 'refuse';
        this.#end(a, v.outcome, v.view.status, v.view.error, false, v.view);
        this.#o.onGaugeChange();
        return;
      }
      if (v.kind === 'pool') {
        // As the proxy does (proxy/handler.ts policyRun): past this rule's gate, a bypass.
        a.decision = 'bypass';
        a.permit = null;
        a.admittedAtMs = sim.now();
        a.phase = 'dispatching';
        const node = this.#o.fallbackPick?.(v.pool) ?? null;
        a.node = node;
        a.decodeNode = node;
        this.#toNode(a, node);
        this.#o.onGaugeChange();
        return;
      }
    }
    this.#gate(a);
  }

  /** A policy lets a held attempt go on to the gate now. */
  policyGo(a: Attempt): void {
    if (a.phase !== 'held') return;
    a.phase = 'new';
    this.#gate(a);
  }

  /** A policy refuses a held attempt (its queue expired, its deferred item could not be served). */
  policyRefuse(a: Attempt, view: ClientView, outcome: 'shed' | 'timed_out'): void {
    if (a.phase !== 'held') return;
    this.#end(a, outcome, view.status, view.error, false, view);
    this.#o.onGaugeChange();
  }

  /** The gate's decision of an attempt (after the policy's, when there is one). */
  #gate(a: Attempt): void {
    const { sim, admission } = this.#o;
    const d = a.d;
    const inflightBefore = this.#o.observer === undefined ? 0 : admission.pool().inflight;
    const req: AdmissionRequest =
      d.tenant === undefined
        ? { inference: d.inference, protocol: d.protocol, bodyBuffered: true, pd: d.pd }
        : { inference: d.inference, protocol: d.protocol, bodyBuffered: true, tenant: d.tenant, pd: d.pd };
    const decision = admission.admit(req, a);
    switch (decision.kind) {
      case 'admit':
        a.decision = 'admit';
        this.#dispatch(a, decision.permit);
        break;
      case 'queued':
        a.decision = 'queued';
        a.phase = 'queued';
        a.ticket = decision.ticket;
        a.queuedAtMs = sim.now();
        break;
      case 'refuse':
        a.decision = 'refuse';
        this.#refused(a, decision.refusal);
        break;
      case 'bypass':
        a.decision = 'bypass';
        if (!d.inference) this.#end(a, 'completed', 200, '');
        else this.#dispatch(a, null, decision.endpoint);
        break;
    }
    this.#o.observer?.decided(d, decision, inflightBefore, sim.now());
    this.#o.onGaugeChange();
  }

  // ---- GateHost ----------------------------------------------------------

  granted(ticket: Ticket, permit: Permit): GrantOutcome {
    const a = ticket.context as Attempt;
    if (a.phase !== 'queued') return 'gone';
    a.ticket = null;
    this.#dispatch(a, permit);
    this.#o.onGaugeChange();
    return 'taken';
  }

  ended(ticket: Ticket, refusal: Refusal): void {
    const a = ticket.context as Attempt;
    if (a.phase !== 'queued') return;
    a.ticket = null;
    this.#refused(a, refusal);
  }

  // ---- the path to an engine ----------------------------------------------

  #pickNode(endpointId: string | null): EngineNode | null {
    const nodes = this.#o.nodes;
    if (endpointId !== null) return this.#nodeById.get(endpointId) ?? null;
    const normal = nodes.filter((n) => n.endpoint.role === 'normal');
    if (normal.length === 0) return null;
    for (let i = 0; i < normal.length; i++) {
      const n = normal[(this.#rr + i) % normal.length]!;
      if (n.up) {
        this.#rr = (this.#rr + i + 1) % normal.length;
        return n;
      }
    }
    return normal[this.#rr++ % normal.length]!;
  }

  #dispatch(a: Attempt, permit: Permit | null, bypassEndpoint: string | null = null): void {
    const { sim } = this.#o;
    a.permit = permit;
    a.admittedAtMs = sim.now();
    a.phase = 'dispatching';
    if (a.d.pd) {
      if (permit !== null) {
        const pre = permit.openLeg('prefill');
        if ('status' in pre) {
          this.#legRefused(a, pre);
          return;
        }
        a.prefillLeg = pre;
        const dec = permit.openLeg('decode');
        if ('status' in dec) {
          this.#legRefused(a, dec);
          return;
        }
        a.decodeLeg = dec;
        a.node = this.#pickNode(pre.endpointId);
        a.decodeNode = this.#pickNode(dec.endpointId);
      } else {
        a.node = this.#o.nodes.find((n) => n.endpoint.role === 'prefill' && n.up) ?? null;
        a.decodeNode = this.#o.nodes.find((n) => n.endpoint.role === 'decode' && n.up) ?? null;
      }
    } else {
      a.node = this.#pickNode(permit?.endpointId ?? bypassEndpoint);
    }
    this.#toNode(a, a.node);
  }

  /** On to `node` (its tool calls first, then its frontend's delay), or failed without one. */
  #toNode(a: Attempt, node: EngineNode | null): void {
    if (node === null) {
      this.#end(a, 'failed', 502, 'no_endpoint');
      return;
    }
    if (this.tools.start(a)) {
      a.phase = 'tools';
      return;
    }
    this.#o.sim.after(node.apiOverheadMs, this.#onOverheadDone, a);
  }

  #legRefused(a: Attempt, r: Refusal): void {
    this.#releaseUnits(a);
    this.#refused(a, r);
  }

  #submit(a: Attempt, node: EngineNode, phase: 'prefill' | 'decode'): void {
    if (a.phase === 'done') return;
    if (!node.up) {
      this.#o.onEndpointResult(node, false);
      this.#end(a, 'failed', 502, 'engine_down');
      return;
    }
    const d = a.d;
    const decodeOnly = phase === 'decode' && d.pd;
    const outputTokens = phase === 'prefill' ? 1 : a.outputTokens;
    const arrivalMs = this.#o.sim.now();
    const rec = d.recorded;
    if (rec === undefined && !d.pd) a.arrivalMs = arrivalMs;
    const req: SimEngineRequest =
      rec === undefined
        ? d.pd
          ? { id: a.id, promptTokens: d.promptTokens, outputTokens, arrivalMs, ctx: a }
          : a
        : rec.ttftMs === undefined
          ? {
              id: a.id,
              promptTokens: d.promptTokens,
              outputTokens,
              arrivalMs,
              ctx: a,
              serviceMs: rec.serviceMs,
            }
          : {
              id: a.id,
              promptTokens: d.promptTokens,
              outputTokens,
              arrivalMs,
              ctx: a,
              serviceMs: rec.serviceMs,
              ttftMs: rec.ttftMs,
            };
    const res = node.host.submit(req);
    if (!res.accepted) {
      if (decodeOnly && res.reason === 'invalid') {
        this.#complete(a);
        return;
      }
      this.#end(a, 'failed', 400, `engine_${res.reason}`);
      return;
    }
    a.phase = phase === 'prefill' ? 'prefill' : 'decode';
    if (!d.pd) a.phase = 'decode';
    a.leg = res.progress ?? node.engine.progress(req.id) ?? null;
  }

  /**
   * Engine step outcomes for the requests of `node`. Tokens are not listed (the engines run
   * with `reportTokens: false`): an attempt's count is read from its leg's progress when the
   * leg or the attempt ends.
   */
  onStep(node: EngineNode, out: StepOutcome<SimEngineRequest>): void {
    // Indexed loops: this runs once per engine step, and for-of would allocate iterators.
    const firstTokens = out.firstTokens;
    for (let i = 0; i < firstTokens.length; i++) {
      const a = firstTokens[i]!.ctx as Attempt;
      if (a.phase === 'done' || a.firstTokenAtMs >= 0) continue;
      a.firstTokenAtMs = out.atMs;
      if (a.d.stream) a.permit?.firstDataEvent();
    }
    const finished = out.finished;
    for (let i = 0; i < finished.length; i++) {
      const a = finished[i]!.request.ctx as Attempt;
      if (a.phase === 'done') continue;
      if (a.d.stream && a.phase === 'decode') this.#collectGaps(a);
      endLeg(a);
      this.#o.onEndpointResult(node, true);
      if (a.phase === 'prefill') {
        a.prefillLeg?.close();
        if (a.d.outputTokens < 2) {
          this.#complete(a);
          continue;
        }
        const dn = a.decodeNode;
        if (dn === null) {
          this.#end(a, 'failed', 502, 'no_endpoint');
          continue;
        }
        a.node = dn;
        a.phase = 'dispatching';
        this.#submit(a, dn, 'decode');
        continue;
      }
      this.#complete(a);
    }
  }

  /**
   * Keeps `a`'s last leg, which just finished on its engine, to read its token gaps from with
   * the attempt's record (synchronously: the engine keeps the times of its steps only while a
   * request it holds may need them).
   */
  #collectGaps(a: Attempt): void {
    this.#gapsOf = a;
    this.#gaps.leg = a.leg;
    this.#gaps.firstTokenAtMs = a.firstTokenAtMs;
  }

  /** Requests lost with an engine that went down. */
  lost(node: EngineNode, requests: readonly SimEngineRequest[]): void {
    for (const r of requests) {
      const a = r.ctx as Attempt;
      if (a.phase === 'done') continue;
      this.#o.onEndpointResult(node, false);
      this.#end(a, 'failed', 502, 'engine_lost');
    }
  }

  // ---- endings ---------------------------------------------------------------

  #complete(a: Attempt): void {
    this.#end(a, 'completed', 200, '');
  }

  #clientLeaves(a: Attempt): void {
    a.deadline = null;
    if (a.phase === 'done') return;
    if (a.phase === 'queued' && a.ticket !== null) this.#o.admission.cancel(a.ticket);
    if ((a.phase === 'prefill' || a.phase === 'decode') && a.node !== null) a.node.host.abort(a.id);
    this.#end(a, 'cancelled', 0, '', true);
  }

  #refused(a: Attempt, r: Refusal): void {
    const outcome: Outcome =
      r.reason === 'queue_timeout' ? 'timed_out' : r.reason === 'drained' ? 'drained' : 'shed';
    const seen = this.#o.admission.clientView(r);
    this.#end(a, outcome, seen.status, seen.error, false, seen);
  }

  #releaseUnits(a: Attempt): void {
    a.prefillLeg?.close();
    a.decodeLeg?.close();
    const p = a.permit;
    a.permit = null;
    p?.release();
  }

  #end(
    a: Attempt,
    outcome: Outcome,
    status: number,
    error: string,
    clientLeft = false,
    refusal?: ClientView,
  ): void {
    if (a.phase === 'done') return;
    const { sim } = this.#o;
    const now = sim.now();
    const wasExecuting =
      a.phase === 'prefill' || a.phase === 'decode' || a.phase === 'dispatching' || a.phase === 'tools';
    a.phase = 'done';
    if (a.toolEvent !== null) this.tools.cancel(a);
    this.#removeLive(a);
    if (a.deadline !== null) {
      sim.cancel(a.deadline);
      a.deadline = null;
    }
    this.#releaseUnits(a);
    if (a.policyState !== undefined) this.#o.policy?.ended(a, outcome, clientLeft);
    const rec = this.#recordOf(a, now, outcome, status, error, clientLeft && wasExecuting, clientLeft);
    if (this.#gapsOf === a) {
      this.#gapsOf = null;
      if (outcome === 'completed') this.#o.record(rec, this.#gaps);
      else this.#o.record(rec);
      this.#gaps.leg = null;
    } else {
      this.#o.record(rec);
    }
    const d = a.d;
    if (outcome !== 'completed' && outcome !== 'cancelled' && this.#retry(a, status, refusal)) return;
    this.#o.logicalEnd(d, now);
  }

  /** Schedules the client's next attempt if its policy and deadline allow. @returns true when one follows */
  #retry(a: Attempt, status: number, r: ClientView | undefined): boolean {
    const { sim } = this.#o;
    const delay = this.#o.retry(
      {
        attempt: a.d.attempt,
        status,
        ...(r?.retryAfterS === undefined ? {} : { retryAfterSec: r.retryAfterS }),
        ...(r?.jitterHintMs === undefined ? {} : { jitterHintMs: r.jitterHintMs }),
      },
      this.#o.retryRng,
    );
    if (delay === undefined) return false;
    const at = sim.now() + delay;
    if (at >= this.#o.endMs || (a.d.deadlineMs !== undefined && at >= a.d.deadlineMs)) return false;
    sim.schedule(at, () => this.send(this.#o.nextAttempt(a.d, at)));
    return true;
  }

  /** Records every attempt still in the system at the end of the run. */
  finish(): void {
    const now = this.#o.sim.now();
    for (let a = this.#liveHead; a !== null; a = this.#liveHead) {
      this.#removeLive(a);
      this.#o.record(this.#recordOf(a, now, 'in_system', 0, '', false, false));
    }
  }

  /**
   * The record of an attempt ending at `now`, written into the reused record.
   * @param wasted the client left while it executed: its output went to nobody
   * @param clientLeft the client left: it received no output
   */
  #recordOf(
    a: Attempt,
    now: number,
    outcome: Outcome,
    status: number,
    error: string,
    wasted: boolean,
    clientLeft: boolean,
  ): RequestRecord {
    const d = a.d;
    const completed = outcome === 'completed';
    // A client of a non-streamed request sees its first token with the whole answer.
    const firstTokenAtMs = this.#o.clientTtft && !d.stream ? (completed ? now : -1) : a.firstTokenAtMs;
    const ttftFromFirst = firstTokenAtMs >= 0 ? firstTokenAtMs - d.firstSentAtMs : Number.POSITIVE_INFINITY;
    const good =
      completed &&
      d.inference &&
      (d.ttftSloMs === undefined || ttftFromFirst <= d.ttftSloMs) &&
      (d.deadlineMs === undefined || now <= d.deadlineMs);
    const waitedUntil = a.admittedAtMs >= 0 ? a.admittedAtMs : now;
    const generated = generatedTokens(a);
    const r = this.#record;
    r.id = d.id;
    r.logical_id = d.logicalId;
    r.attempt = d.attempt;
    r.tenant = d.tenant ?? KEYLESS_LABEL;
    r.sent_ms = round3(d.sentAtMs);
    r.protocol = d.protocol;
    r.stream = d.stream;
    r.pd = d.pd;
    r.inference = d.inference;
    r.prompt_tokens = d.promptTokens;
    r.output_tokens = d.outputTokens;
    r.decision = a.decision;
    r.outcome = outcome;
    r.status = status;
    r.error = error;
    r.endpoint = a.node?.endpoint.id ?? '';
    r.queue_wait_ms = a.queuedAtMs >= 0 ? round3(waitedUntil - a.queuedAtMs) : '';
    r.ttft_ms = firstTokenAtMs >= 0 ? round3(firstTokenAtMs - d.sentAtMs) : '';
    r.e2e_ms = completed ? round3(now - d.sentAtMs) : '';
    r.good = good;
    r.generated_tokens = clientLeft && !completed ? 0 : generated;
    r.wasted_tokens = wasted ? generated : 0;
    // From the record's own (rounded) times, so that the column is what a reader of the CSV computes.
    r.tpot_ms =
      r.e2e_ms !== '' && r.ttft_ms !== '' && r.generated_tokens >= 2
        ? round3((r.e2e_ms - r.ttft_ms) / (r.generated_tokens - 1))
        : '';
    if (this.#o.classColumns === true) {
      const env = d.envelope;
      r.class = a.className ?? env?.className ?? this.#o.defaultClass ?? '';
      r.disposition = a.disposition;
      r.reason = a.reason;
      const dl =
        a.policyDeadlineMs >= 0
          ? a.policyDeadlineMs
          : env?.deadlineMs !== undefined
            ? d.firstSentAtMs + env.deadlineMs
            : d.deadlineMs;
      r.deadline_met = dl === undefined ? '' : completed && now <= dl;
      r.useful = completed && !clientLeft && (dl === undefined || now <= dl);
    }
    return r;
  }
}
