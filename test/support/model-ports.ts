import type { UIMessage } from "ai";
import { ChatModel, type Ports } from "../../src/core/model";
import type { SessionSettings } from "../../src/core/session";
import { mergeStoredWins } from "../../src/core/transcript";

/**
 * A `ChatModel` over a plain array, with ports that record what the rules ask
 * for (frames sent, reads, snapshot requests) and a transport port whose
 * answers a test sets.
 */
export function modelWithPorts(settings: Partial<SessionSettings<UIMessage>> = {}) {
  const list = {
    messages: [] as UIMessage[],
    replaceMessage(index: number, message: UIMessage) {
      this.messages[index] = message;
    },
    pushMessage(message: UIMessage) {
      this.messages.push(message);
    }
  };
  const sent: Array<Record<string, unknown>> = [];
  const reads: boolean[] = [];
  const snapshots: number[] = [];
  const ledger = new Map<string, number>();
  const transport = {
    appliedChunks: {
      record: (id: string, seq?: number) => seq !== undefined && ledger.set(id, seq),
      isAppliedReplay: () => false,
      forget: (id: string) => ledger.delete(id),
      clear: () => ledger.clear()
    },
    activeServerTurnId: null as string | null,
    awaiting: false,
    handleServerTurnCompleted: () => {},
    handleStreamPending: () => false,
    handleStreamResumeNone: () => false,
    handleStreamResuming: () => false,
    isAwaitingResume(): boolean {
      return this.awaiting;
    },
    observeServerTurn(id: string) {
      this.activeServerTurnId = id;
    },
    retryPendingResume: () => false
  };
  const all = { resume: true, resyncOnReconnect: true, mergeMessages: mergeStoredWins, ...settings } as unknown as SessionSettings<UIMessage>;
  const ports: Ports<UIMessage> = {
    transport: transport as unknown as Ports<UIMessage>["transport"],
    settings: () => all,
    status: () => "ready",
    loading: () => false,
    resuming: () => false,
    send: (frame) => sent.push(frame),
    read: (always) => reads.push(always),
    requestSnapshot: () => snapshots.push(snapshots.length),
    flags: () => {},
    reconcile: () => {},
    warn: () => {},
    call: (_name, run) => run()
  };
  const m = new ChatModel(list, ports, new Set(), () => "local-id");
  return { m, list, sent, reads, snapshots, transport };
}
