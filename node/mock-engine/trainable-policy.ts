// Why: a policy that can really learn through Polar on a CPU (examples/learn). Per task it is a
// categorical distribution over two behaviours the task policy already plays — "solve" (read the
// code, apply the fix) and "mis-solve" (skim it, apply a plausible wrong fix) — with logits
// `bias + task_logits[task]`, updated by a trainer between policy versions. The behaviour is
// sampled once per session and written as the first word of the first reply; that word's first
// token is the only one whose probability is not 1, so the engine reports log π(behaviour | task)
// there and logprob 0 for every other sampled token: the true log-probabilities of what it sampled.
import { PolicyState, type PolicyWeights } from "../../protocol/engine-policy.ts";
import type { BpeTokenizer } from "../tokenizer/bpe.ts";
import { EngineError } from "./engine-error.ts";
import type { TokenLogprob } from "./sampler.ts";
import type { ScriptStep } from "./script.ts";
import type { SolveChooser } from "./task-policy.ts";

export const CHOICES = [
  { name: "solve", word: "Carefully" },
  { name: "mis-solve", word: "Quickly" },
] as const;

/** vLLM floors impossible tokens' logprobs at this value in its answers. */
const IMPOSSIBLE = -9999.0;

/** One session's sampled behaviour, recorded while its first reply is generated. */
export interface Decision {
  taskId: string;
  choice: number;
}

function logSoftmax(logits: readonly number[]): number[] {
  const top = Math.max(...logits);
  const total = Math.log(logits.reduce((sum, x) => sum + Math.exp(x - top), 0)) + top;
  return logits.map((x) => x - total);
}

export class TrainablePolicy implements SolveChooser {
  readonly choiceTokenIds: number[];
  private weights: PolicyWeights;
  private decision: Decision | undefined;

  constructor(
    tokenizer: BpeTokenizer,
    /** Ids of the tasks the task policy knows. */
    private readonly knownTasks: () => readonly string[],
    initialSolveProbability: number,
  ) {
    this.choiceTokenIds = CHOICES.map((c) => tokenizer.encode(c.word)[0]!);
    if (new Set(this.choiceTokenIds).size !== CHOICES.length) throw new Error("the choice words must start with different tokens");
    const p = Math.min(Math.max(initialSolveProbability, 1e-6), 1 - 1e-6);
    this.weights = { version: 0, bias: [Math.log(p), Math.log(1 - p)], task_logits: {} };
  }

  get version(): number {
    return this.weights.version;
  }

  state(): PolicyState {
    return PolicyState.parse({
      choices: CHOICES.map((c, i) => ({ ...c, token_id: this.choiceTokenIds[i] })),
      tasks: [...this.knownTasks()],
      weights: this.weights,
    });
  }

  /** Replaces the weights (a trainer's update); versions never move backwards, tasks must be known. */
  update(weights: PolicyWeights): void {
    if (weights.version < this.weights.version) {
      throw new EngineError("conflict", `policy version ${weights.version} is older than the engine's ${this.weights.version}`);
    }
    const known = new Set(this.knownTasks());
    const unknown = Object.keys(weights.task_logits).filter((t) => !known.has(t));
    if (unknown.length > 0) throw new EngineError("bad_request", `unknown task ids in task_logits: ${unknown.slice(0, 5).join(", ")}`, "task_logits");
    this.weights = weights;
  }

  logprobs(taskId: string): number[] {
    const own = this.weights.task_logits[taskId] ?? [0, 0];
    return logSoftmax(this.weights.bias.map((b, i) => b + own[i]!));
  }

  /** SolveChooser: the session's behaviour from its uniform draw `u`, remembered for `sampleLogprobs`. */
  fixes(taskId: string, u: number): boolean {
    const choice = u < Math.exp(this.logprobs(taskId)[0]!) ? 0 : 1;
    this.decision = { taskId, choice };
    return choice === 0;
  }

  /** SolveChooser: the first reply opens with the behaviour's word (in the thinking and the text). */
  mark(step: ScriptStep, fixes: boolean): ScriptStep {
    const word = CHOICES[fixes ? 0 : 1].word;
    return {
      ...step,
      ...(step.think !== undefined ? { think: `${word}: ${step.think}` } : {}),
      text: step.text !== undefined ? `${word}: ${step.text}` : word,
    };
  }

  /** Runs one generation and returns what it decided (undefined: no behaviour was sampled). */
  during<T>(generate: () => T): { value: T; decision: Decision | undefined } {
    this.decision = undefined;
    try {
      const value = generate();
      return { value, decision: this.decision };
    } finally {
      this.decision = undefined;
    }
  }

  /**
   * Logprobs of the sampled ids under the policy: log π(choice | task) at the first token that
   * opens a choice word when this generation sampled a behaviour, 0 elsewhere; top-k candidates
   * sorted by logprob as vLLM reports them (the other choice at the decision, impossible tokens
   * at -9999 elsewhere).
   */
  sampleLogprobs(outputIds: readonly number[], decision: Decision | undefined, topK: number, vocabSize: number): { logprobs: number[]; top: TokenLogprob[][] } {
    const at = decision ? outputIds.findIndex((id) => this.choiceTokenIds.includes(id)) : -1;
    if (decision && at !== -1 && outputIds[at] !== this.choiceTokenIds[decision.choice]) {
      throw new EngineError("internal", "the first reply does not open with the sampled behaviour's word");
    }
    const choiceLogprobs = decision ? this.logprobs(decision.taskId) : [];
    const logprobs: number[] = [];
    const top: TokenLogprob[][] = [];
    outputIds.forEach((id, i) => {
      if (i === at) {
        logprobs.push(choiceLogprobs[decision!.choice]!);
        const candidates = this.choiceTokenIds.map((tokenId, c) => ({ id: tokenId, logprob: choiceLogprobs[c]! })).sort((a, b) => b.logprob - a.logprob);
        top.push(topK > 0 ? fill(candidates.slice(0, topK), topK, vocabSize) : []);
      } else {
        logprobs.push(0);
        top.push(topK > 0 ? fill([{ id, logprob: 0 }], topK, vocabSize) : []);
      }
    });
    return { logprobs, top };
  }
}

/** Pads top-k candidates with distinct tokens the policy never samples there. */
function fill(candidates: TokenLogprob[], topK: number, vocabSize: number): TokenLogprob[] {
  const out = [...candidates];
  for (let id = 0; out.length < topK && id < vocabSize; id++) {
    if (!out.some((c) => c.id === id)) out.push({ id, logprob: IMPOSSIBLE });
  }
  return out;
}
