/**
 * The world's commands, options and known limitations. The simulated server
 * and the types it shares with the world live in `src/testing/sim-agent.ts`
 * (the same module `agents-vue/testing` ships).
 */

export { type Chunk, type M, type Part, type WorldPort, SimulationError as WorldError, clone } from "../../../src/testing/sim-port";

/** One thing that happens, interpreted against the world's state when it runs (a no-op when it cannot apply). */
export type Command =
  | { kind: "send" }
  | { kind: "stop" }
  | { kind: "regenerate" }
  | { kind: "edit"; pick: number }
  | { kind: "clear" }
  | { kind: "setMessages"; pick: number }
  | { kind: "toolOutput"; pick: number }
  | { kind: "otherSend"; stale: number; shape: number }
  | { kind: "otherRegenerate"; stale: number; shape: number }
  | { kind: "otherEdit"; stale: number; pick: number; shape: number }
  | { kind: "otherClear" }
  | { kind: "otherSetMessages"; stale: number; pick: number }
  | { kind: "otherToolOutput"; pick: number; autoContinue: boolean }
  | { kind: "otherStop" }
  | { kind: "serverUp" }
  | { kind: "serverTurn" }
  | { kind: "fail"; inBand: boolean }
  | { kind: "deliver"; count: number }
  | { kind: "serveRead"; pick: number }
  | { kind: "answerRead"; pick: number }
  /** A read in flight fails: the network drops it before an answer arrives (`fetch` rejects). */
  | { kind: "failRead"; pick: number }
  | { kind: "cut" }
  | { kind: "reopen" }
  | { kind: "timer"; pick: number }
  | { kind: "store"; count: number }
  | { kind: "restart"; keep: number };

export interface WorldOptions {
  resume: boolean;
  autoContinue: boolean;
  /** The first transcript read runs on the first open (`loadOnOpen`). */
  load: boolean;
  /** The shape of this client's own replies: bits pick the word count and a client tool call. */
  replyShapes: number[];
  /**
   * This client keeps its durable copy (`persist`) in a store the world owns
   * (`world/store.ts`): a restart restores it from there.
   */
  persist: boolean;
  /** The server runs the ordered server half (`orderTranscript`): exact sync, held to every invariant. Default: a stock agent. */
  ordered?: boolean;
}


/**
 * Known limitations: counterexamples the property test found whose cause lies
 * outside this client (the server's write rules, the AI SDK, upstream's
 * transport), decided to be documented rather than worked around here
 * (`RELIABILITY.md`). A run that hits one is not held to convergence
 * (everything else is still checked); `test/unit/model.limitations.test.ts`
 * pins each, so a fix shows as a failing test to move into the regressions.
 */
export const GAPS = {
  "stopped-continuation-unnamed":
    "(the cases the model found are fixed since stop 50: rule *stop before start* ends the wait once the continuation runs, and leaves it running when the server never named it; the gap stays for what seeds may still find) stop() right after a tool output, before the continuation started, while another turn still streams: the server answers the stop's probe with that running turn (it names the active stream before a pending continuation), so the client never learns the continuation's id; the continuation runs to its end uncancelled and the stop's cancel-on-start stays. The same when a socket drop loses the probe's answer: nothing asks again",
  "reply-under-own-id":
    "a reply is built under an id of this client's own, which no server message has: an observed stream whose start chunk this client never saw (one it skipped still names the stream: rule *a stream keeps its name*), or a continuation that finds no message to extend (another tab's setMessages sent a list without it, which the server keeps; or the clear's read removed it; or this client's regenerate removed it, chaos seed 1942480718), while no frame brings that message back (rule *observed overlay over frames*) and, for one of this client's, before the transport took it (rule *unnamed reply is protected*); continuation starts carry no message id, so the stored copy shows next to it, or is replaced by it. The model's pinned cases are fixed (`model.regressions.test.ts`); the gap stays for what seeds may still find",
  "probe-takes-own-request":
    "(the case the model found is fixed since issue 46: rule *a stopped probe waits no more*; the gap stays for what seeds may still find) a resume probe that stop() aborted still waits (the transport does not watch the abort signal) when this client's regenerate goes out; the server answers the probe with that request's stream, the probe takes it as a second stream of the same request, and the aborted AI SDK resume cancels it, whereupon the transport forgets the request: its own stream never ends here (the reply renders as an observed turn, the rewrite never retires)",
  "stale-list-restores-cleared":
    "another tab's setMessages, send, regenerate or edit with a list from before this client's clear writes back messages that clear removed, while the clear's hold is on: the server stores them again and broadcasts the list, but unless a frame during the hold brought something new with them, neither the broadcast nor the hold's read can be told from a frame or a read that left the server before it took the clear (the sender of a clear gets no echo); the hold keeps them off screen until a later frame or read carries them"
} as const;
