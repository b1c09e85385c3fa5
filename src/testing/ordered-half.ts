import type { UIMessage } from "ai";
import { orderTranscript, type OrderedConnection, type OrderedTranscriptHost } from "../server/ordered-transcript";
import type { SimAgent } from "./sim-agent";
import { senderOf } from "./sim-port";

type SqlValue = string | number | boolean | null;

/**
 * The ordered server half (`orderTranscript` from `agents-vue/server`, the
 * code that ships, not a copy) installed on the simulated agent. The host
 * gives ordering what an `AIChatAgent` gives it: the stored transcript,
 * `Agent#broadcast` with its `without` list, the connections, the connect
 * and message handlers, `persistMessages`, and the Durable Object's SQLite,
 * which here keeps the one row ordering writes (the version) in memory.
 * Ordering then wraps `broadcast`, `onConnect` and `onMessage` on the host,
 * and the simulated agent sends and receives through them.
 */
export class OrderedHalf {
  readonly host: OrderedTranscriptHost;

  constructor(sim: SimAgent) {
    let version: number | null = null;
    const host: OrderedTranscriptHost = {
      get messages() {
        return sim.stored;
      },
      set messages(messages: UIMessage[]) {
        sim.stored = messages;
      },
      // The statements `orderTranscript` runs on its version row: create the table, read the row, write it.
      sql<T>(strings: TemplateStringsArray, ...values: SqlValue[]): T[] {
        const statement = strings.join("?").trim().toLowerCase();
        if (statement.startsWith("select")) return (version === null ? [] : [{ version }]) as T[];
        if (statement.startsWith("insert")) version = Number(values[0]);
        return [];
      },
      broadcast: (message, without) => sim.deliverBroadcast(String(message), without),
      getConnection: (id): OrderedConnection => sim.connection(id),
      onConnect: () => sim.onConnect(),
      onMessage: ((connection: OrderedConnection, message: string) => sim.handle(senderOf(connection.id), JSON.parse(message) as Record<string, unknown>)) as OrderedTranscriptHost["onMessage"],
      persistMessages: (messages, without = [], options) => {
        // oxlint-disable-next-line eslint/no-underscore-dangle -- AIChatAgent's own option name
        sim.persist(messages, without.length > 0 ? senderOf(without[0]!) : null, options?._deleteStaleRows === true);
        return Promise.resolve();
      }
    };
    orderTranscript(host);
    this.host = host;
  }
}
