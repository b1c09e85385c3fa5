import type { UIMessage } from "ai";
import { ObservedMessage } from "../message-builder";
import type { LocalIntents } from "./intents";
import type { WorkingList } from "./placement";

/**
 * The observed-turn overlay: a stream this client did not start (another
 * tab's turn, one the server started, a resume it observes) is built here and
 * merged into the transcript, one message per stream.
 */
export class ObservedTurn<M extends UIMessage> {
  streamId: string | null = null;
  message: ObservedMessage | null = null;
  /** Our own last merge: it cannot have diverged; only another writer's copy can. */
  #lastMerge: M | null = null;

  readonly #list: WorkingList<M>;
  readonly #intents: LocalIntents<M>;
  readonly #newId: () => string;
  constructor(
    list: WorkingList<M>,
    intents: LocalIntents<M>,
    newId: () => string
  ) {
    this.#list = list;
    this.#intents = intents;
    this.#newId = newId;
  }

  get active(): boolean {
    return this.message !== null;
  }

  /** Starts (or restarts, for a replay from chunk 0) the message of stream `id`. */
  begin(id: string, continuation: boolean): ObservedMessage {
    this.streamId = id;
    return (this.message = new ObservedMessage(this.#newId(), continuation));
  }

  end(): void {
    this.streamId = null;
    this.message = null;
  }

  /**
   * Rule (observed overlay over frames, #2166): a transcript frame behind the
   * stream must not make its parts flicker away, unless the stored copy
   * diverged from what the stream built (then the stored copy wins).
   */
  overFrame(next: M[]): M[] {
    const observed = this.message;
    if (!observed?.hasParts) return next;
    observed.adoptStoredId(next, this.#list.messages);
    // Where it lands in the frame: a continuation that found no message to extend takes the one the frame brings.
    const stored = next[observed.targetIndex(next)];
    if (observed.parts.length < (stored?.parts.length ?? 0) || observed.divergesFrom(next)) return next;
    return this.mergedInto(observed, next);
  }

  /** Rule (observed merge): the observed message replaces its copy, unless another writer's copy diverged. */
  mergeUnlessDiverged(observed: ObservedMessage): void {
    // A regenerate of this client's replaced the message this turn extends.
    const messages = this.#list.messages;
    if (this.#intents.isRetracted(observed.id, messages)) return;
    const index = observed.targetIndex(messages);
    const other = index >= 0 && messages[index] !== this.#lastMerge ? messages[index] : undefined;
    // Another writer's copy that holds more parts wins too: a frame ahead of chunks the server withheld from this socket.
    if (other && (observed.divergesFrom(messages) || observed.parts.length < other.parts.length)) return;
    const message = observed.toMessage<M>();
    this.#lastMerge = message;
    if (index >= 0) this.#list.replaceMessage(index, message);
    else this.#list.pushMessage(message);
  }

  mergedInto(observed: ObservedMessage, messages: M[]): M[] {
    if (this.#intents.isRetracted(observed.id, this.#list.messages)) return messages;
    const index = observed.targetIndex(messages);
    const next = messages.slice();
    if (index >= 0) next[index] = observed.toMessage<M>();
    else next.push(observed.toMessage<M>());
    return next;
  }
}
