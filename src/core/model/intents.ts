import type { ChatRequestOptions, UIMessage } from "ai";

/**
 * A regenerate or an edit of this client's while its request is in flight:
 * a broadcast the server sent before it took the request still holds the old
 * transcript, and must not put it back (chaos: many clients). Retired when
 * its request settles.
 */
interface Rewrite<M extends UIMessage> {
  /** The transcript's ids when it was called, until the AI SDK's cut is read (`settle`). */
  idsBefore: Set<string> | null;
  /** The message an edit rewrites in place, and its new copy once read (stale broadcasts carry the old). */
  editedId: string | undefined;
  edited: M | null;
  /** The messages it removed. */
  retracted: Set<string>;
  /**
   * A frame carried a removed message. It may have been stale, or the server
   * kept it (a reply still streaming when it took the request is stored
   * after): the stored transcript decides once the request settles.
   */
  heldBack: boolean;
  /**
   * Rule (a raced request reads back): the base clock as it began. A frame
   * since means another client wrote before the server took the rewrite's
   * list, which deletes what it lacks: the stored transcript decides too.
   * `null` for a server that owns its history (Think): it writes no client's list.
   */
  clockAt: number | null;
}

/**
 * A clear of this client's, until the newest transcript read issued after it
 * settles: the server never echoes a clear to its sender, and a broadcast it
 * sent before it took the clear still holds the cleared messages (chaos: many
 * clients). Messages first seen from the server meanwhile may be as stale;
 * the read keeps those it still has.
 */
interface Clear {
  /** What the clear removed, but the reply of the turn it interrupted (the server stores that one after the clear). */
  cleared: Set<string>;
  arrived: Set<string>;
  /** Reads with an id above this were issued after the clear. */
  afterRead: number;
  /** The last reply it removed: the one a continuation this client never saw extends. */
  extended?: string;
}

/** A message sent while it could not go out, waiting in order. */
export interface QueuedSend<M extends UIMessage> {
  message: M;
  options: ChatRequestOptions | undefined;
  settle: () => void;
  /** Adopted from a page that died: the id of the read that says whether that page delivered it (`ChatModel.adopt`). */
  check?: number;
}

/**
 * What this client did that the server has not confirmed, each with its
 * retirement rule. A server transcript is shown through them (`shown`,
 * `restoreSends`): what a rewrite or a clear removed stays removed, an edited
 * message stays edited, an unconfirmed send stays on screen.
 */
export class LocalIntents<M extends UIMessage> {
  /**
   * Own user messages of requests in flight that no transcript frame carried
   * yet, each with the request that sent it once it went out (`request`);
   * retired by a frame that does, or when that request ends (`sendsEnded`).
   * `lacked`: a frame came without it, which a `skipped` end confirms as a refusal.
   */
  readonly unechoed = new Map<string, { lacked: boolean; request?: string }>();
  /** Sends the transport buffered while the socket was down; restored over the next connect-time transcript, retired by the next transcript (#1983). */
  readonly buffered = new Set<string>();
  rewrite: Rewrite<M> | null = null;
  clear: Clear | null = null;
  /** Sends waiting to go out, in order; shown after the transcript. */
  readonly queued: Array<QueuedSend<M>> = [];
  /** The first queued send is going out; the next waits until its turn settled. */
  sending = false;

  /** A regenerate or an edit starts; a rewrite already in flight hands over what it holds back. */
  beginRewrite(current: readonly M[], editedId: string | undefined, clock: number | null): Rewrite<M> {
    this.settleRewrite(current);
    // What the rewrite in flight edited, removed and held back carries over, and when it began.
    return (this.rewrite = {
      edited: null,
      retracted: new Set(),
      heldBack: false,
      clockAt: clock,
      ...this.rewrite,
      idsBefore: new Set(current.map((message) => message.id)),
      editedId
    });
  }

  /**
   * Rule (rewrite retires): when its request settles, unless a later rewrite
   * took it over. Whether a frame carried a removed message, or any frame
   * came since it began (`clock`: the base clock now), says if the stored
   * transcript must be read back.
   */
  endRewrite(rewrite: Rewrite<M>, clock: number): boolean {
    if (this.rewrite !== rewrite) return false;
    this.rewrite = null;
    return rewrite.heldBack || (rewrite.clockAt !== null && rewrite.clockAt !== clock);
  }

  /**
   * Reads what the rewrite in flight removed, once: the AI SDK cuts the
   * transcript within microtasks of the call, so by the time any socket frame
   * is handled the cut is done.
   */
  settleRewrite(current: readonly M[]): void {
    const rewrite = this.rewrite;
    const before = rewrite?.idsBefore;
    if (!rewrite || !before) return;
    rewrite.idsBefore = null;
    const now = new Set(current.map((message) => message.id));
    for (const id of before) if (!now.has(id)) rewrite.retracted.add(id);
    const editedId = rewrite.editedId;
    if (editedId !== undefined) rewrite.edited = current.find((message) => message.id === editedId) ?? null;
  }

  /**
   * Rule (versions end the holds, exact sync): the first versioned transcript
   * ends a clear's or a rewrite's hold begun before it. From then on every
   * version reaches this socket in order (a clear's own as a whole transcript
   * to its sender), so nothing stale needs holding back, and the read a hold
   * waits for may never settle it: a connect-time transcript answers the first
   * load in its place.
   */
  versionsBegin(): void {
    this.clear = null;
    this.rewrite = null;
  }

  /** A clear of this client's starts holding back what it removed (`afterRead`: the newest read so far). */
  beginClear(cleared: Set<string>, afterRead: number, extended?: string): void {
    this.clear = { cleared, arrived: new Set(), afterRead, extended };
  }

  /**
   * Rule (an unseen continuation's end): a continuation this client saw
   * nothing of ended aborted during a clear's hold: the clear cut it, and the
   * server stored the reply it extends again after the clear, so that reply is
   * no longer held back.
   */
  unseenContinuationAborted(): void {
    const clear = this.clear;
    if (clear?.extended !== undefined) clear.cleared.delete(clear.extended);
  }

  /**
   * Rule (clear retires): when the newest read issued after it settles. What
   * came from the server during the hold and the stored transcript lacks is
   * returned for removal when that read was admitted, and what the clear removed, which that read's
   * answer must not bring back: it can reach the agent before the clear did
   * (a caching loader always answers so; issue 21, 9), unless the answer
   * shows it was read after the clear.
   */
  readSettled(readId: number, newest: boolean, stored: readonly M[] | null): { unconfirmed: Set<string>; cleared: Set<string> } | undefined {
    const clear = this.clear;
    if (!clear || !newest || readId <= clear.afterRead) return undefined;
    this.clear = null;
    // An answer that was not admitted (overtaken) proves nothing: what arrived stays. A failed read never gets here: it is made again.
    if (!stored) return { unconfirmed: new Set(), cleared: clear.cleared };
    const storedIds = new Set(stored.map((message) => message.id));
    const unconfirmed = new Set([...clear.arrived].filter((id) => !storedIds.has(id)));
    // An answer holding what arrived during the hold was read after the clear: what it holds of the
    // cleared messages is stored again (another tab's stale list wrote it back), so it shows.
    const postdates = stored.some((message) => clear.arrived.has(message.id));
    return { unconfirmed, cleared: postdates ? new Set() : clear.cleared };
  }

  /**
   * Whether a rewrite or a clear of this client's in flight removed the
   * message. Called for each message a frame carries, it also records what
   * the frame showed: a removed message (the rewrite reads back once it
   * settles) and, during a clear's hold, a message new here.
   */
  isRetracted(id: string, current: readonly M[]): boolean {
    this.settleRewrite(current);
    const rewrite = this.rewrite;
    if (rewrite?.retracted.has(id)) {
      rewrite.heldBack = true;
      return true;
    }
    const clear = this.clear;
    if (!clear) return false;
    if (clear.cleared.has(id)) return true;
    // Only what is new here: a message this client sent after the clear is on
    // screen before any frame carries it, and is never taken back.
    if (!current.some((message) => message.id === id)) clear.arrived.add(id);
    return false;
  }

  /** Rule (shown through intents): what the server sent, less what a rewrite or clear removed, with the edit applied. */
  shown(messages: M[], current: readonly M[]): M[] {
    this.settleRewrite(current);
    const rewrite = this.rewrite;
    const edited = rewrite?.edited;
    if (!rewrite?.retracted.size && !edited && !this.clear) return messages;
    return messages
      .filter((message) => !this.isRetracted(message.id, current))
      .map((message) => {
        if (message.id !== edited?.id) return message;
        // The frame's copy may be older than the edit, or newer (another client wrote it after): the stored transcript decides once the edit settles.
        if (rewrite && JSON.stringify(message.parts) !== JSON.stringify(edited.parts)) rewrite.heldBack = true;
        return edited;
      });
  }

  /**
   * Rule (unconfirmed sends stay): a transcript frame retires the sends it
   * carries; own sends it lacks stay after it: those of the request in
   * flight, and over a connect-time transcript those the transport buffered.
   *
   * Rule (own question before its reply): when the frame's list ends with
   * the reply streaming here (`liveReplyId`, kept at the tail by the live
   * reply overlay), the sends go in before that reply, not after it: a frame
   * another client's request broadcast mid-reply need not carry this
   * client's question, and the question must not end up after its answer.
   */
  restoreSends(next: M[], current: readonly M[], connect: boolean, liveReplyId?: string): M[] {
    const restore = connect ? new Set(this.buffered) : new Set<string>();
    this.buffered.clear();
    for (const message of next) this.unechoed.delete(message.id);
    for (const [id, send] of this.unechoed) {
      restore.add(id);
      send.lacked = true;
    }
    if (restore.size === 0) return next;
    const present = new Set(next.map((message) => message.id));
    const restored = current.filter((message) => restore.has(message.id) && !present.has(message.id));
    if (restored.length === 0) return next;
    const tail = next.at(-1);
    if (liveReplyId !== undefined && tail?.id === liveReplyId) return [...next.slice(0, -1), ...restored, tail];
    return [...next, ...restored];
  }

  /**
   * A request is about to go out: a rewrite's cut is read now, and the user
   * message a submit carries is unconfirmed until a frame carries it.
   */
  requestPrepared(request: { messages: M[]; trigger: string; messageId?: string }, known: ReadonlySet<string>, current: readonly M[]): void {
    if (request.trigger === "regenerate-message" || request.messageId !== undefined) this.settleRewrite(current);
    // Rule (clear retires): a request's list writes what it carries back on the server, also what first came during a clear's hold.
    const clear = this.clear;
    if (clear) for (const message of request.messages) clear.arrived.delete(message.id);
    if (request.trigger !== "submit-message") return;
    const sent = request.messages.findLast((message) => message.role === "user");
    if (sent && !known.has(sent.id)) this.unechoed.set(sent.id, { lacked: false });
  }

  /**
   * A request went out carrying `sentId` as its newest user message: the send
   * belongs to the newest such request (the AI SDK builds a request's list
   * when it goes out, so two sends in a row can both ride on the second).
   */
  sendWentOut(requestId: string, sentId: string | undefined): void {
    const send = sentId === undefined ? undefined : this.unechoed.get(sentId);
    if (send) send.request = requestId;
  }

  /**
   * Rule (a send retires with its request): once the request that sent it
   * ended or was stopped, the server holds the message (or refused it), so a
   * frame without it is newer than the send. Sends of requests still
   * `running` stay; with `unsent`, those whose request never went out go
   * too (the AI SDK ended their turn before the frame was sent).
   */
  sendsEnded(running: (request: string) => boolean, unsent: boolean): void {
    for (const [id, send] of this.unechoed) {
      if (send.request === undefined ? unsent : !running(send.request)) this.unechoed.delete(id);
    }
  }

  /**
   * Rule (a refused send leaves, issue 21, 3): a request that ends `skipped`
   * after a frame came without its message was refused (`messageConcurrency:
   * "drop"` rolls the submit back with that frame): the frame wins, as
   * upstream lets it. Returns the sends to remove.
   */
  refused(requestId: string): Set<string> {
    const refused = new Set<string>();
    for (const [id, send] of this.unechoed) if (send.lacked && (send.request ?? requestId) === requestId) refused.add(id);
    for (const id of refused) this.unechoed.delete(id);
    return refused;
  }

  /** A reset (a clear, sent or received) drops every intent; queued sends are settled unsent. */
  reset(): Array<QueuedSend<M>> {
    this.unechoed.clear();
    this.buffered.clear();
    this.rewrite = null;
    return this.queued.splice(0);
  }
}
