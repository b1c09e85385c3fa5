import type { UIMessage } from "ai";
import type { SimAgent } from "./sim-agent";
import { clone } from "./sim-port";

/** Another client of the same agent (another tab or device): what it makes the server do. */
export interface OtherTab {
  /** Sends a user message (with the server's transcript as its list); the next scripted reply answers it. */
  send(text: string): void;
  /** Clears the transcript. */
  clear(): void;
  /** Stops the running turn. */
  stop(): void;
  /** Sends this list as `setMessages` does: written by id, nothing deleted (an `ordered` agent replaces the stored transcript with it). */
  setMessages(messages: UIMessage[]): void;
  /** Answers a tool call waiting for input; `autoContinue` (default `true`) queues a continuation turn. */
  addToolOutput(options: { toolCallId: string; output: unknown; autoContinue?: boolean }): void;
  /** Answers a tool call waiting for approval; `autoContinue` (default `true`) queues a continuation turn. */
  addToolApprovalResponse(options: { toolCallId: string; approved: boolean; autoContinue?: boolean }): void;
}

/** Another client of the simulated server; `then` runs after each of its acts (the agent moves on). */
export function otherTab(server: SimAgent, then: () => void): OtherTab {
  const other = { kind: "other" } as const;
  let others = 0;
  const act = <A extends unknown[]>(run: (...args: A) => void) => (...args: A) => {
    run(...args);
    then();
  };
  return {
    send: act((text: string) => {
      const id = ++others;
      const message: UIMessage = { id: `other-${id}`, role: "user", parts: [{ type: "text", text }] };
      server.request(other, `other-request-${id}`, [...clone(server.stored), message], 0);
    }),
    clear: act(() => server.clear(other)),
    stop: act(() => {
      if (server.running) server.cancel(server.running.requestId);
    }),
    setMessages: act((messages: UIMessage[]) => server.replaceStored(other, clone(messages))),
    addToolOutput: act(({ toolCallId, output, autoContinue = true }: { toolCallId: string; output: unknown; autoContinue?: boolean }) =>
      server.toolResult(other, toolCallId, output, autoContinue)
    ),
    addToolApprovalResponse: act(({ toolCallId, approved, autoContinue = true }: { toolCallId: string; approved: boolean; autoContinue?: boolean }) =>
      server.toolApproval(other, toolCallId, approved, autoContinue)
    )
  };
}
